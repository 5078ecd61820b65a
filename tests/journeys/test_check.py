"""Journey: a lawyer checks an answer's citations with `legal-judge check` (issue 19; issue 20
item 13). Each step is a defect class of issue 19 that the old code got wrong."""

from __future__ import annotations

import json
from pathlib import Path

from .conftest import Journey

TODAY = ("--today", "2026-11-29")
SAMPLE = Path(__file__).parents[2] / "legal_judge" / "data" / "sample_bench.jsonl"


def test_check_a_title_vii_answer_then_a_dataset(journey: Journey) -> None:
    # Title VII with a lettered section and subdivisions is detected, whole (was "0 citations").
    step = journey("check", "--text", "Under 42 U.S.C. § 2000e-2(a)(1), and Fed. R. Civ. P. "
                   "12(b)(6), the claim survives.", *TODAY)
    assert "2 citations" in step.out
    assert "2000e-2(a)(1)" in step.out and "12(b)(6)" in step.out

    # A standard New York Appellate Division citation is not suspicious (was "not a known court").
    step = journey("check", "--text", "Matter of Jones, 150 A.D.3d 1234 (2d Dep't 2017); "
                   "Smith v. Jones, 150 A.D.3d 1234 (1st Dept 2017).", *TODAY)
    assert "suspicious" not in step.out and "unverifiable 2" in step.out
    assert "Matter of Jones" in step.out and "--lookup" in step.out

    # An impossible volume is invalid with its reason, and exits 1 (was "unverifiable").
    step = journey("check", "--text", "Roe v. Wade, 999 U.S. 1 (2020).", *TODAY, expect=1)
    assert "invalid" in step.out and "cannot exist yet" in " ".join(step.out.split())
    assert "forces citation_quality = 0" in step.out

    # A correct F. Supp. citation of 1990 is not invalid because reporters-db ends F. Supp. in 1988.
    step = journey("check", "--text", "Smith v. Jones, 700 F. Supp. 100 (S.D.N.Y. 1990).", *TODAY)
    assert "invalid" not in step.out.split("unverifiable")[0]

    # Common mistakes exit 2 with the reason (were "internal error", exit 70).
    missing = journey("check", "nofile.txt", *TODAY, expect=2)
    assert "nofile.txt: no such file" in missing.err
    empty = journey("check", "--text", "", *TODAY, expect=2)
    assert "--text is empty" in empty.err

    # A dataset ends with a roll-up; --json gives what would verify each unverifiable row.
    rows = journey.cwd / "answers.jsonl"
    rows.write_text(
        json.dumps({"id": "ok", "response": "Brown v. Board of Education, 347 U.S. 483 (1954)."})
        + "\n" + json.dumps({"id": "fake", "response": "See 99 U.S.C. § 12."}) + "\n",
        encoding="utf-8")
    step = journey("check", "--dataset", str(rows), *TODAY, expect=1)
    assert "2 items, 2 citations" in step.out
    assert "items with an invalid citation: 1 (fake)" in step.out
    step = journey("check", "--dataset", str(rows), "--json", *TODAY, expect=1)
    first = json.loads(step.out)[0]["findings"][0]
    assert first["verify"] == "existence not checked offline: run with --lookup (CourtListener)"


_STATUSES = {"invalid", "mismatch", "not_found", "suspicious", "ambiguous", "unverifiable",
             "verified"}


def _rows(out: str) -> list[list[str]]:
    """The findings table as rows of cells, each cell's wrapped lines joined (a row starts
    where the status column holds a status)."""
    rows: list[list[list[str]]] = []
    for line in out.splitlines():
        if not line.startswith("│"):
            continue
        cells = [c.strip() for c in line.strip().strip("│").split("│")]
        if cells[0] in _STATUSES or not rows:
            rows.append([[] for _ in cells])
        for parts, cell in zip(rows[-1], cells, strict=True):
            if cell:
                parts.append(cell)
    return [[" ".join(parts) for parts in row] for row in rows]


def test_check_a_string_cite_gives_each_citation_its_own_court_year_and_name(
        journey: Journey) -> None:
    # A bare citation borrowed the next citation's "(11th Cir. 2019)": it was invalid, with the
    # false reasons "U.S. reports only the Supreme Court, not 11th Cir." and "cannot hold a
    # 2019 decision", and exited 1. Only the true reason remains: the impossible page.
    step = journey("check", "--text", "See 123 U.S. 99999 and Okafor v. China Southern "
                   "Airlines Co., 925 F.3d 1339 (11th Cir. 2019).", *TODAY)
    assert "suspicious 1, unverifiable 1" in step.out and "invalid" not in step.out
    assert "forces citation_quality" not in step.out
    bare, varghese = _rows(step.out)
    assert bare == ["suspicious case", "123 U.S. 99999 Supreme Court of the United States",
                    "page 99,999 is far beyond any U.S. volume (none runs near 2,500 pages)"]
    # Its name was missing.
    assert varghese[1].startswith("Okafor v. China Southern Airlines Co. 925 F.3d 1339")

    # Two cases of one sentence: the New York row showed "Brown v. Board of Education".
    step = journey("check", "--json", "--text", "Under 42 U.S.C. § 2000e-2(a)(1) and Brown v. "
                   "Board of Education, 347 U.S. 483 (1954), and Matter of Jones, 150 A.D.3d 1234 "
                   "(2d Dep't 2017).", *TODAY)
    rows = [(f["text"], f["case_name"], f["year"]) for f in json.loads(step.out)["findings"]]
    assert rows == [("42 U.S.C. § 2000e-2(a)(1)", None, None),
                    ("347 U.S. 483", "Brown v. Board of Education", 1954),
                    ("150 A.D.3d 1234", "Matter of Jones", 2017)]

    # "See also Matter of Jones," showed no name although it is written right there.
    step = journey("check", "--text", "The court applied Brown. See also Matter of Jones, "
                   "150 A.D.3d 1234 (2d Dep't 2017).", *TODAY)
    [(_, citation, _)] = _rows(step.out)
    assert citation.startswith("Matter of Jones 150 A.D.3d 1234") and "Brown" not in citation

    # The bundled sample: Shaboon's Illinois neutral cite showed Petersen's "D.D.C., 2012",
    # and Title VII beside the Pregnancy Discrimination Act section is found whole.
    step = journey("check", "--dataset", str(SAMPLE), "--json", *TODAY, expect=1)
    items = {item["id"]: item["findings"] for item in json.loads(step.out)}
    shaboon = next(f for f in items["us-fed-003"] if f["text"].startswith("2013 IL App"))
    assert (shaboon["year"], shaboon["court"], shaboon["case_name"]) == (
        None, None, "Shaboon v. Egyptair")
    petersen = next(f for f in items["us-fed-003"] if f["text"] == "905 F. Supp. 2d 121")
    assert (petersen["year"], petersen["case_name"]) == (2012, "Petersen v. Iran Air")
    seidman = items["us-ca-003"][0]
    assert seidman["case_name"] == "BDO Seidman v. Hirshberg"  # was "Seidman v. Hirshberg*"


def test_check_the_forms_lawyers_write_and_the_fakes_they_must_not_trust(
        journey: Journey) -> None:
    # Issue 32. Prose, shorthand and foreign forms were invisible ("no citations found").
    step = journey("check", "--json", "--text", "Under California Labor Code section 2802 and "
                   "section 1983 of title 42, see 28 U.S.C. 1332, 40 CFR 60.5, 14 Ill. Adm. Code "
                   "200.116, Ill. S. Ct. R. 106, US Const amend XIV, Ill Const art I, § 2 and "
                   "Donoghue v Stevenson [1932] AC 562. Section 5 of the contract and Title VII "
                   "are not citations.", *TODAY)
    found = [(f["kind"], f["normalized"]) for f in json.loads(step.out)["findings"]]
    assert found == [
        ("statute", "Cal. Lab. Code § 2802"), ("statute", "42 U.S.C. § 1983"),
        ("statute", "28 U.S.C. § 1332"), ("regulation", "40 C.F.R. § 60.5"),
        ("admin_code", "Ill. Admin. Code tit. 14, § 200.116"), ("court_rule", "Ill. S. Ct. R. 106"),
        ("constitution", "U.S. Const. amend. XIV"), ("constitution", "Ill. Const. art. I, § 2"),
        ("uk_report", "[1932] AC 562")]

    # A fake designator was cut down to a real section ("42 U.S.C. § 1397"): now it is
    # suspicious, shown whole, and exits 0 (a warning is no fabrication by itself).
    step = journey("check", "--text", "See 42 U.S.C. § 1397.99n–1 and U.S. Const. amend. 2-A.",
                   *TODAY)
    assert "suspicious 2" in step.out and "invalid" not in step.out
    flat = " ".join(step.out.split())
    assert "1397.99n–1" in flat and "amend. 2-A" in flat and "cannot be one" in flat

    # The 2023 emergency rules were invalid ("has rules 1-86, not 87") and exited 1.
    step = journey("check", "--text", "Fed. R. Civ. P. 87, Fed. R. Crim. P. 62 and Fed. R. "
                   "Bankr. P. 9038 apply in a rules emergency.", *TODAY)
    assert "unverifiable 3" in step.out and "invalid" not in step.out
    step = journey("check", "--about", *TODAY)
    assert "citation_rules.v3.yaml" in step.out and "2025-12-01" in step.out

    # eu-002 of the bundled sample (GDPR Article 183(2); the GDPR has 99 articles) passed offline;
    # Mata's fabrications are known offline, with the order that exposed them.
    step = journey("check", "--dataset", str(SAMPLE), "--json", *TODAY, expect=1)
    items = {item["id"]: item for item in json.loads(step.out)}
    [article] = [f for f in items["eu-002"]["findings"] if f["kind"] == "eu_article"]
    assert (article["status"], article["normalized"]) == ("invalid", "Article 183(2) GDPR")
    assert items["eu-002"]["forces_zero"] is True
    varghese = next(f for f in items["us-fed-003"]["findings"] if f["text"] == "925 F.3d 1339")
    assert varghese["status"] == "invalid"
    assert "identified as fabricated in Mata v. Avianca" in varghese["reasons"][-1]["message"]
