"""One test per citation rule, on invented citations; each names the rule that must fire."""

from __future__ import annotations

import pytest

from legal_judge.checks.citation_rules import current_congress
from legal_judge.checks.citations import check_citations

from ._support import TODAY


def _only(text: str):  # noqa: ANN202 - test helper
    findings = check_citations(text, today=TODAY).findings
    assert len(findings) == 1, [f.text for f in findings]
    return findings[0]


ERRORS = [
    ("edition_year", "Doe v. Poe, 123 F.4th 456 (2d Cir. 1995)."),
    ("edition_year", "Doe v. Poe, 123 F.2d 456 (2d Cir. 2015)."),
    ("future_year", "Roe v. Doe, 603 U.S. 369 (2034)."),
    ("future_year", "Roe v. Doe, 2031 WL 123456 (S.D.N.Y. Jan. 5, 2031)."),
    ("unknown_court", "A v. B, 880 F.3d 144 (13th Cir. 2018)."),
    ("court_not_yet", "C v. D, 612 F.2d 100 (11th Cir. 1979)."),
    ("reporter_court", "E v. F, 347 U.S. 483 (2d Cir. 1954)."),
    ("reporter_court", "G v. H, 650 F.3d 10 (S.D.N.Y. 2011)."),
    ("reporter_court", "I v. J, 45 F. Supp. 3d 123 (2d Cir. 2014)."),
    ("wl_year", "K v. L, 2019 WL 4639462 (Tex. App. Sept. 25, 2017)."),
    ("il_neutral", "Shaboon v. Egyptair, 2013 IL App (1st) 311279-U."),
    ("usc_title", "See 99 U.S.C. § 12."),
    ("usc_title", "See 53 U.S.C. § 101."),
    ("cfr_title", "See 51 C.F.R. § 1.1."),
    ("fed_reg_volume", "See 75 Fed. Reg. 12345 (Mar. 1, 2015)."),
    ("future_congress", "See Pub. L. No. 131-45."),
    ("us_const", "U.S. Const. amend. XXVIII."),
    ("us_const", "U.S. Const. art. IX."),
    # Issue 19: anchors from real citations make a year outside the volume's years impossible.
    ("volume_year", "K v. L, 347 U.S. 483 (1964)."),
    ("volume_year", "M v. N, 516 F.3d 217 (2d Cir. 1996)."),
    ("volume_range", "Roe v. Wade, 999 U.S. 1 (2020)."),
    ("volume_range", "A v. B, 1000 F.3d 1 (2d Cir. 2021)."),
    ("pin_before_page", "Brown v. Board of Education, 347 U.S. 483, 480 (1954)."),
    ("unknown_code", "Cal. Wizardry Code § 12."),
]


@pytest.mark.parametrize(("rule", "text"), ERRORS)
def test_error_rules_make_the_citation_invalid(rule: str, text: str) -> None:
    finding = _only(text)
    assert finding.status == "invalid"
    assert rule in {h.rule for h in finding.reasons if h.severity == "error"}


WARNINGS = [
    # Issue 32: the federal rules grow by rulemaking (Rule 87 was added in 2023), so a rule
    # beyond the table is suspicious, not invalid.
    ("fed_rule", "Fed. R. Civ. P. 99."),
    ("fed_rule", "Fed. R. Evid. 1200."),
    # Issue 19: a reporter in no database is suspicious, not invalid (reporters-db is not
    # complete), and a page beyond any volume's length is a heuristic.
    ("unknown_reporter", "Smith v. Jones, 12 Foo. Rptr. 345 (2d Cir. 2001)."),
    ("page_ceiling", "Smith v. Jones, 123 U.S. 99999."),
    ("unknown_court", "O v. P, 200 F. Supp. 2d 10 (Wakanda Dist. Ct. 2002)."),
    ("wl_year", "Q v. R, 2020 WL 123456 (S.D.N.Y. Dec. 30, 2019)."),
]


@pytest.mark.parametrize(("rule", "text"), WARNINGS)
def test_warning_rules_make_the_citation_suspicious(rule: str, text: str) -> None:
    finding = _only(text)
    assert finding.status == "suspicious"
    assert [h.rule for h in finding.reasons] == [rule]
    assert all(h.severity == "warning" for h in finding.reasons)


VALID_NEIGHBOURS = [
    "C v. D, 612 F.2d 100 (5th Cir. 1979).",  # 5th Cir. existed
    "Doe v. Poe, 1 F.4th 456 (2d Cir. 2021).",  # F.4th began 2021
    "See 50 U.S.C. § 1801.",  # title 50 (War and National Defense) is real
    "See 54 U.S.C. § 100101.",
    "See 50 C.F.R. § 17.11.",
    "See 75 Fed. Reg. 12345 (Mar. 1, 2010).",
    "See Pub. L. No. 111-148.",
    "U.S. Const. amend. XXVII.",
    "U.S. Const. art. I.",
    "Fed. R. Civ. P. 86.",
    "Fed. R. Evid. 702.",
    "K v. L, 2019 WL 4639462 (Tex. App. Sept. 25, 2019).",
    "Haddad v. Egyptair, 2013 IL App (1st) 111279-U.",
    "People v. X, 2012 IL App (4th) 110590.",
]


@pytest.mark.parametrize("text", VALID_NEIGHBOURS)
def test_boundary_neighbours_of_error_rules_pass(text: str) -> None:
    finding = _only(text)
    assert finding.status == "unverifiable", finding.reasons


def test_current_congress() -> None:
    assert current_congress(TODAY) == 119


def test_unknown_reporter_needs_case_context() -> None:
    # A reporter-shaped string outside a case citation is not flagged (precision first).
    assert check_citations("See 2 Oxford Dict. 123 (2d ed. 1989).", today=TODAY).findings == []


def test_known_reporter_eyecite_missed_is_not_flagged() -> None:
    findings = check_citations("Smith v. Jones, 12 Wash. L. Rev. 345 (1999).", today=TODAY).findings
    assert all(f.status != "invalid" for f in findings)
