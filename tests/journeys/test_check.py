"""Journey: a lawyer checks an answer's citations with `legal-judge check` (issue 19; issue 20
item 13). Each step is a defect class of issue 19 that the old code got wrong."""

from __future__ import annotations

import json

from .conftest import Journey

TODAY = ("--today", "2026-11-29")


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
