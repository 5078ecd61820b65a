"""Real citations must never come out invalid; a real opinion gives 0 invalid findings;
the Mata v. Avianca fabrications are unverifiable offline (offline cannot prove them fake)."""

from __future__ import annotations

from pathlib import Path

import pytest

from legal_judge.checks.citations import check_citations

from ._support import LOOKALIKE_TEXT, MATA_CITES, MATA_TEXT, TODAY

REAL = [
    "Marbury v. Madison, 5 U.S. (1 Cranch) 137 (1803).",
    "Marbury v. Madison, 5 U.S. 137 (1803).",
    "Brown v. Board of Education, 347 U.S. 483 (1954).",
    "Chevron U.S.A. Inc. v. Natural Resources Defense Council, Inc., 467 U.S. 837 (1984).",
    "Loper Bright Enterprises v. Raimondo, 603 U.S. 369 (2024).",
    "Brown v. Board of Education, 347 U.S. 483, 74 S. Ct. 686, 98 L. Ed. 873 (1954).",
    "Strickland v. Washington, 466 U.S. 668, 104 S. Ct. 2052, 80 L. Ed. 2d 674 (1984).",
    "United States v. Jones, 565 F.2d 1 (3d Cir. 1977).",
    "Allen v. School Bd. of Prince Edward Cty., 249 F. 2d 462 (CA4 1957).",
    "Palsgraf v. Long Island R.R. Co., 248 N.Y. 339 (1928).",
    "United States v. Carroll Towing Co., 159 F.2d 169 (2d Cir. 1947).",
    "Zicherman v. Korean Air Lines Co., 516 U.S. 217 (1996).",
    "Fisher v. University of Tex. at Austin, 645 F. Supp. 2d 587 (WD Tex. 2009).",
    "Donoghue v Stevenson [1932] UKHL 100.",
    "Google Spain SL v AEPD, ECLI:EU:C:2014:317.",
    "R (Miller) v Secretary of State [2017] UKSC 5.",
    "[2023] EWHC 123 (KB).",
    "[2019] EWCA Civ 1234.",
    "Regulation (EU) 2016/679 (CELEX 32016R0679).",
    "Directive 95/46/EC.",
    "UAE Federal Decree-Law No. (45) of 2021.",
    "Lebanese Law No. 81 of 2018.",
    "L'article 1240 du Code civil.",
    "Cass. civ. 1re, 3 mai 2018, n° 17-12.345.",
    "42 U.S.C. § 1983.",
]


@pytest.mark.parametrize("text", REAL)
def test_real_citations_are_not_invalid(text: str) -> None:
    report = check_citations(text, today=TODAY)
    assert report.findings, "the citation was not found at all"
    assert all(f.status != "invalid" for f in report.findings), [
        (f.text, [h.message for h in f.reasons]) for f in report.findings
    ]
    assert report.forces_zero is False


def test_parallel_citations_share_the_year_and_point_at_the_head() -> None:
    report = check_citations(REAL[5], today=TODAY)
    assert [f.normalized for f in report.findings] == [
        "347 U.S. 483",
        "74 S. Ct. 686",
        "98 L. Ed. 873",
    ]
    assert [f.year for f in report.findings] == [1954, 1954, 1954]
    assert [f.parallel_to for f in report.findings] == [None, 0, 0]


def test_court_aliases_resolve() -> None:
    courts = [f.court for f in check_citations(REAL[7] + " " + REAL[8], today=TODAY).findings]
    assert courts == ["ca3", "ca4"]


# The shared Fisher opinion, copied inside tests/ (public domain) so this test never skips.
FISHER = Path(__file__).parent / "data" / "fisher-v-university-of-texas-2013.txt"


def test_real_opinion_has_no_invalid_findings() -> None:
    report = check_citations(FISHER.read_text(encoding="utf-8"), today=TODAY)
    assert len(report.findings) >= 50  # the opinion cites dozens of cases
    assert report.counts["invalid"] == 0, [
        (f.text, [h.message for h in f.reasons]) for f in report.findings if f.status == "invalid"
    ]
    assert report.forces_zero is False


def test_mata_fabrications_are_invalid_offline_as_known_fabrications() -> None:
    # Issue 32: the six fakes a court exposed are known offline, with the order named.
    report = check_citations(MATA_TEXT, today=TODAY)
    assert [f.normalized for f in report.findings] == MATA_CITES
    assert {f.status for f in report.findings} == {"invalid"}
    assert all("identified as fabricated in Mata v. Avianca, Inc., 678 F. Supp. 3d 443 "
               "(S.D.N.Y. 2023)" in f.reasons[-1].message for f in report.findings)
    assert report.forces_zero is True


def test_well_formed_fakes_not_yet_exposed_are_unverifiable_offline() -> None:
    report = check_citations(LOOKALIKE_TEXT, today=TODAY)
    assert [f.normalized for f in report.findings] == MATA_CITES
    assert {f.status for f in report.findings} == {"unverifiable"}
    assert report.forces_zero is False
