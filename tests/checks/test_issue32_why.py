"""Issue 32, "Must show": every example of the issue's Why, as the old code got it wrong.

- common forms were invisible (0 citations): each is now found with its canonical form;
- ordinary prose is not misread ("section 5 of the contract", "Title VII");
- a fake designator was cut down to a real one: it is now `suspicious`, shown whole;
- stale tables made the 2023 emergency rules `invalid`: they are now well formed.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from legal_judge.checks.citations import check_citations

from ._support import TODAY

SAMPLE = Path(__file__).parents[2] / "legal_judge" / "data" / "sample_bench.jsonl"

# (as written, kind, canonical form)
FOUND = [
    ("California Labor Code section 2802", "statute", "Cal. Lab. Code § 2802"),
    ("Texas Penal Code section 22.01", "statute", "Tex. Penal Code § 22.01"),
    ("section 1983 of title 42", "statute", "42 U.S.C. § 1983"),
    ("28 U.S.C. 1332", "statute", "28 U.S.C. § 1332"),
    ("40 CFR 60.5", "regulation", "40 C.F.R. § 60.5"),
    ("14 Ill. Adm. Code 200.116", "admin_code", "Ill. Admin. Code tit. 14, § 200.116"),
    ("Cal. Code Regs. tit. 8, § 3203", "admin_code", "Cal. Code Regs. tit. 8, § 3203"),
    ("Ill. S. Ct. R. 106", "court_rule", "Ill. S. Ct. R. 106"),
    ("US Const amend XIV", "constitution", "U.S. Const. amend. XIV"),
    ("Ill Const art I, § 2", "constitution", "Ill. Const. art. I, § 2"),
    ("Donoghue v Stevenson [1932] AC 562", "uk_report", "[1932] AC 562"),
    ("[2019] EWCA Civ 1", "uk_neutral", "[2019] EWCA Civ 1"),
    # More of the same forms, written the other ways lawyers write them.
    ("42 USC 1983", "statute", "42 U.S.C. § 1983"),
    ("42 U.S.C. section 1983", "statute", "42 U.S.C. § 1983"),
    ("Title 42 of the United States Code, section 1983", "statute", "42 U.S.C. § 1983"),
    ("40 C.F.R. Part 60", "regulation", "40 C.F.R. pt. 60"),
    ("17 C.F.R. § 240.10b-5", "regulation", "17 C.F.R. § 240.10b-5"),
    ("26 C.F.R. § 1.1031(a)-1", "regulation", "26 C.F.R. § 1.1031(a)-1"),
    ("section 2802 of the California Labor Code", "statute", "Cal. Lab. Code § 2802"),
    ("California Business and Professions Code section 17200", "statute",
     "Cal. Bus. & Prof. Code § 17200"),
    ("California Code of Civil Procedure section 425.16", "statute",
     "Cal. Civ. Proc. Code § 425.16"),
    ("New York General Business Law § 349", "statute", "N.Y. Gen. Bus. Law § 349"),
    ("section 768.72, Florida Statutes", "statute", "Fla. Stat. § 768.72"),
    ("Minnesota Statutes section 609.02", "statute", "Minn. Stat. § 609.02"),
    ("8 CCR 3203", "admin_code", "Cal. Code Regs. tit. 8, § 3203"),
    ("Title 8, California Code of Regulations, section 3203", "admin_code",
     "Cal. Code Regs. tit. 8, § 3203"),
    ("16 Tex. Admin. Code § 5.31", "admin_code", "16 Tex. Admin. Code § 5.31"),
    ("Illinois Supreme Court Rule 213(f)", "court_rule", "Ill. S. Ct. R. 213(f)"),
    ("U.S. Const. art. I, § 8, cl. 3", "constitution", "U.S. Const. art. I, § 8, cl. 3"),
    ("U.S. Constitution, Article III", "constitution", "U.S. Const. art. III"),
    ("Ill. Const. 1970, art. I, § 2", "constitution", "Ill. Const. art. I, § 2"),
    ("[1990] 1 WLR 1545", "uk_report", "[1990] 1 WLR 1545"),
    ("Art. 83(5) GDPR", "eu_article", "Article 83(5) GDPR"),
    ("Article 101 TFEU", "eu_article", "Article 101 TFEU"),
    ("Article 47 of the Charter", "eu_article", "Article 47 Charter"),
]


@pytest.mark.parametrize(("text", "kind", "canonical"), FOUND, ids=[f[0] for f in FOUND])
def test_common_form_is_found_with_its_canonical_form(text: str, kind: str, canonical: str) -> None:
    report = check_citations(f"See {text}.", today=TODAY)
    assert [(f.kind, f.normalized, f.status) for f in report.findings] == [
        (kind, canonical, "unverifiable")]
    assert report.findings[0].verify  # says what would verify it


def test_an_english_report_keeps_the_case_name_written_before_it() -> None:
    report = check_citations("Donoghue v Stevenson [1932] AC 562 and Caparo Industries plc v "
                             "Dickman [1990] 2 AC 605.", today=TODAY)
    assert [f.case_name for f in report.findings] == ["Donoghue v Stevenson",
                                                       "Caparo Industries plc v Dickman"]


NOT_CITATIONS = [
    "Under section 5 of the contract, the buyer must pay within 30 days.",
    "Title VII protects employees from discrimination.",
    "section 3 of title 2 of the Agreement governs notice.",
    "The California Wizardry Code section 12 does not exist.",
    "Read section 12 of the Labor Code handbook.",
    "Article 12 of the lease, and Article 99 of the partnership agreement.",
]


@pytest.mark.parametrize("text", NOT_CITATIONS)
def test_ordinary_prose_is_not_read_as_a_citation(text: str) -> None:
    # Beside a prose citation that is read, the near-miss is not.
    report = check_citations(f"{text} See California Labor Code section 2802.", today=TODAY)
    assert [f.normalized for f in report.findings] == ["Cal. Lab. Code § 2802"]


CUT_DOWN = [
    ("42 U.S.C. § 1397.99n–1", "42 U.S.C. § 1397.99n–1", "1397.99n–1"),
    ("U.S. Const. amend. 2-A", "U.S. Const. amend. 2-A", "2-A"),
    ("Fed. R. Civ. P. 12-A", "Fed. R. Civ. P. 12-A", "12-A"),
    ("40 C.F.R. § 60.5.3", "40 C.F.R. § 60.5.3", "60.5.3"),
    ("735 ILCS 2-619", "735 ILCS 2-619", "2-619"),
    ("Article 2-A GDPR", "Article 2-A GDPR", "2-A"),
]


@pytest.mark.parametrize(("text", "canonical", "designator"), CUT_DOWN,
                         ids=[c[0] for c in CUT_DOWN])
def test_a_fake_designator_is_suspicious_and_shown_whole(
        text: str, canonical: str, designator: str) -> None:
    [finding] = check_citations(text, today=TODAY).findings
    assert (finding.status, finding.normalized, finding.text) == ("suspicious", canonical, text)
    [hit] = finding.reasons
    assert hit.rule == "designator_shape" and f"'{designator}'" in hit.message


@pytest.mark.parametrize("text", ["Fed. R. Civ. P. 87", "Fed. R. Crim. P. 62",
                                  "Fed. R. Bankr. P. 9038", "Fed. R. Civ. P. 87(c)(1)"])
def test_the_2023_emergency_rules_are_well_formed(text: str) -> None:
    report = check_citations(text, today=TODAY)
    assert [(f.status, f.normalized) for f in report.findings] == [("unverifiable", text)]
    assert not report.forces_zero


def test_a_rule_beyond_the_table_is_suspicious_with_the_tables_date() -> None:
    [finding] = check_citations("Fed. R. Civ. P. 88", today=TODAY).findings
    assert finding.status == "suspicious"
    [hit] = finding.reasons
    assert "rules 1-87, not 88" in hit.message and "as of 2025-12-01" in hit.message
    assert "grown before" in hit.message


def test_an_amendment_beyond_the_constitution_stays_invalid_but_not_when_dated_later() -> None:
    [finding] = check_citations("U.S. Const. amend. XXVIII", today=TODAY).findings
    assert finding.status == "invalid" and "as of 2026-11-29" in finding.reasons[0].message
    # A rule dated after its table: the table may be stale, so only suspicious.
    [later] = check_citations("Fed. R. App. P. 49 (2027)", today=TODAY).findings
    assert later.status == "suspicious"


def test_eu_002_of_the_bundled_sample_is_caught_offline() -> None:
    rows = [json.loads(line) for line in SAMPLE.read_text(encoding="utf-8").splitlines()]
    [eu_002] = [r for r in rows if r["id"] == "eu-002"]
    report = check_citations(eu_002["response"], today=TODAY)
    flagged = [f for f in report.findings if f.status == "invalid"]
    assert [f.normalized for f in flagged] == ["Article 183(2) GDPR"]
    assert "has articles 1-99, not 183" in flagged[0].reasons[0].message
    assert report.forces_zero


def test_an_article_of_an_act_keeps_the_acts_own_findings() -> None:
    # The act's label against its year still fires when the article is cited in it.
    [finding] = check_citations("Article 83 of Regulation (EU) 2016/679", today=TODAY).findings
    assert finding.kind == "eu_article" and finding.status == "unverifiable"
    [act] = check_citations("Regulation (EC) 2016/679", today=TODAY).findings
    assert act.status == "invalid"
