"""Journey: decide what the judges can, escalate the rest to lawyers (issue 30).

demo -> escalate without labels (refused, exit 2, names `calibrate sample`) -> calibrate sample ->
the lawyers fill the sheet -> calibrate import -> escalate at 90% (cannot guarantee: exit 1, the
labels needed) -> escalate at 85% (the guarantee sentence, coverage, the escalated ids, their
sheet; stored) -> runs show (judge-decided pass rate, pending review; in JUnit, the step summary
and the HTML report too) -> a release gate requiring reviewed escalations fails (exit 1, the
command to import labels) -> the lawyers label the escalated sheet -> the gate passes -> runs show
(the combined pass rate). A sample enriched with disagreements is
refused by name. calibrate compare shows AC1/AC2 and PABAK beside kappa.
"""

from __future__ import annotations

import csv
import json
import re
from pathlib import Path

from .conftest import Journey


def _flat(text: str) -> str:
    return " ".join(text.split())


def _results(journey: Journey, run_id: str) -> dict[str, dict[str, object]]:
    rows = journey.query("SELECT item_id, result_json FROM ensemble_results WHERE run_id = ?",
                         run_id)
    return {item_id: json.loads(raw) for item_id, raw in rows}


def _fill(journey: Journey, run_id: str, sheet: Path, out: Path) -> dict[str, str]:
    """Lawyers who agree with the judges' pass/fail except where the ensemble's legal_soundness
    is below 2.5 (the low, less confident answers): there they decide the other way. Returns
    the lawyers' pass/fail per item."""
    results = _results(journey, run_id)
    with sheet.open(encoding="utf-8-sig", newline="") as fh:
        reader = csv.DictReader(fh)
        rows, columns = list(reader), list(reader.fieldnames or [])
    decided = {}
    for row in rows:
        r = results[row["item_id"]]
        scores = r["scores"]
        assert isinstance(scores, dict)
        verdict = str(r["overall"])
        if float(scores["legal_soundness"]) < 2.5:
            verdict = "pass" if verdict == "fail" else "fail"
        row.update({k: str(round(float(v))) for k, v in scores.items() if k in columns})
        row.update(hallucination=str(r.get("hallucination") or "clean"), pass_fail=verdict,
                   annotator="lawyer_a", labeled_at="2026-11-20", comment="reviewed")
        decided[row["item_id"]] = verdict
    with out.open("w", newline="", encoding="utf-8") as fh:
        writer = csv.DictWriter(fh, fieldnames=columns)
        writer.writeheader()
        writer.writerows(rows)
    return decided


def test_escalate_cannot_then_can_guarantee_then_lawyers_complete_the_run(
        journey: Journey) -> None:
    journey("demo", "--quiet")
    run_id = journey.query("SELECT id FROM runs WHERE kind = 'run'")[0][0]
    n_items = journey.query("SELECT COUNT(*) FROM items WHERE run_id = ?", run_id)[0][0]

    # no labels yet: refused, naming the fix
    none = journey("calibrate", "escalate", run_id, expect=2)
    assert "has no lawyer labels" in _flat(none.text) and "calibrate sample" in none.text

    sheet = journey.cwd / "sheet.csv"
    journey("calibrate", "sample", run_id, "--n", "50", "--seed", "7", "--out", str(sheet))
    lawyers = _fill(journey, run_id, sheet, journey.cwd / "filled.csv")
    journey("calibrate", "import", "filled.csv", "--run", run_id)

    # 90%: the judges disagree with the lawyers among their 29 surest labelled answers
    cannot = journey("calibrate", "escalate", run_id, "--target", "0.90", "--out", "e90.csv",
                     expect=1)
    said = _flat(cannot.out)
    assert "CANNOT GUARANTEE: cannot guarantee 90% at 95% confidence with 50 labels" in said
    assert re.search(r"the best achievable is \d+%; about [\d,]+ more labels would be needed",
                     said), cannot.describe()
    assert journey.query("SELECT guaranteed FROM escalations WHERE run_id = ?", run_id) == [(0,)]

    # 85%: guaranteed on the most confident answers; the rest go to a lawyer
    can = journey("calibrate", "escalate", run_id, "--target", "0.85", "--out", "esc.csv")
    said = _flat(can.out)
    stored = json.loads(journey.query(
        "SELECT report_json FROM escalations WHERE run_id = ? AND guaranteed = 1", run_id)[0][0])
    share = 1 - len(stored["decided"]) / n_items
    assert ("GUARANTEED: on the answers the judges decided, they agree with your lawyers at "
            f"least 85% of the time (95% confidence); the other {share:.0%} go to a lawyer"
            in said), can.describe()
    assert 0 < len(stored["decided"]) < n_items
    assert f"coverage {1 - share:.0%} ({len(stored['decided'])} of {n_items} items" in said
    assert f"escalated to a lawyer: {len(stored['escalated'])} items" in said
    assert all(i in said for i in stored["escalated"][:20])
    # the judge-decided labelled answers really do agree with the lawyers at >= 85%
    results = _results(journey, run_id)
    kept = [i for i in stored["decided"] if i in lawyers]
    agree = sum(results[i]["overall"] == lawyers[i] for i in kept) / len(kept)
    assert agree >= 0.85 and stored["observed_agreement"] == agree
    with (journey.cwd / "esc.csv").open(encoding="utf-8-sig", newline="") as fh:
        rows = list(csv.DictReader(fh))
    assert [r["item_id"] for r in rows] == stored["escalated"] and "pass_fail" in rows[0]
    assert (journey.cwd / "esc.guide.csv").is_file()

    # the run's figures, split; pending until the lawyers label the escalated answers
    shown = _flat(journey("runs", "show", run_id).out)
    pending = len(stored["escalated"])
    assert f"{pending} pending review" in shown and "combined pass rate: pending" in shown
    passes = sum(results[i]["overall"] == "pass" for i in stored["decided"])
    assert (f"pass rate on the judge-decided items: {passes / len(stored['decided']):.1%}"
            in shown)
    as_json = json.loads(journey("runs", "show", run_id, "--json").out)
    assert as_json["escalation"]["pending"] == pending
    assert as_json["escalation"]["combined_pass_rate"] is None

    # the split figures everywhere: JUnit, the step summary, the HTML report
    lawyer_total = len(stored["escalated"]) + len(stored["reviewed"])
    journey("runs", "show", run_id, "--junit", "run.xml", "--summary-md", "run.md")
    junit = (journey.cwd / "run.xml").read_text(encoding="utf-8")
    assert (f'name="pending lawyer review" value="{pending} of {lawyer_total} escalated items"'
            in junit)
    assert 'name="lawyer review"' in junit and 'type="inconclusive"' in junit
    assert f"{passes / len(stored['decided']):.1%} over {len(stored['decided'])} items" in junit
    md = (journey.cwd / "run.md").read_text(encoding="utf-8")
    assert "pass rate (judge-decided)" in md and "combined pass rate" in md
    assert f"pending ({pending} escalated items await a lawyer)" in md
    journey("report", run_id, "--html", "run.html")
    page = _flat((journey.cwd / "run.html").read_text(encoding="utf-8"))
    assert "Escalation: decided by the judges, reviewed by lawyers" in page
    assert f"{pending} of {lawyer_total} escalated items" in page

    # the release gate may require the escalated items reviewed: pending ones fail it
    (journey.cwd / "legal-judge.policy.toml").write_text(
        "[release]\nrequire_escalations_reviewed = true\n", encoding="utf-8")
    gate = journey("compare", run_id, run_id, "--fail-on-regression", "--junit", "cmp.xml",
                   expect=1)
    said = _flat(gate.text)
    assert (f"release gate: pending review: {pending} of the {lawyer_total} items of run "
            f"{run_id} escalated to lawyers (escalation {stored['escalation_id']}) are pending "
            "lawyer review" in said), gate.describe()
    assert f"calibrate import FILLED.csv --run {run_id}" in said
    assert "every escalated item reviewed by a lawyer" in said  # the rule it applied
    assert 'name="escalation review"' in (journey.cwd / "cmp.xml").read_text(encoding="utf-8")

    more = _fill(journey, run_id, journey.cwd / "esc.csv", journey.cwd / "esc-filled.csv")
    journey("calibrate", "import", "esc-filled.csv", "--run", run_id)
    released = _flat(journey("compare", run_id, run_id, "--fail-on-regression").out)
    assert (f"escalation review: passed: all {lawyer_total} escalated items of run {run_id} "
            "were reviewed by lawyers" in released)
    assert "release gate: PASS: non-inferior" in released
    journey("runs", "show", run_id, "--junit", "run2.xml")
    assert 'type="inconclusive"' not in (journey.cwd / "run2.xml").read_text(encoding="utf-8")
    shown = _flat(journey("runs", "show", run_id).out)
    lawyer_items = stored["escalated"] + stored["reviewed"]
    verdicts = {**lawyers, **more}
    combined = (passes + sum(verdicts[i] == "pass" for i in lawyer_items)) / n_items
    assert "0 pending review" in shown and f"combined pass rate: {combined:.1%}" in shown

    # calibrate compare: prevalence-robust agreement beside kappa
    cmp = journey("calibrate", "compare", run_id, "--quarter", "2026-Q4")
    assert "AC1" in cmp.out and "PABAK" in cmp.out and "AC2" in cmp.out
    # the policy line names the team's policy file by its whole path (never cut mid-path)
    assert all(len(line) <= 80 for line in cmp.out.splitlines()
               if not line.startswith("policy: "))
    assert "legal-judge.policy.toml (sha256 " in cmp.out


def test_escalate_refuses_a_sample_enriched_with_disagreements(journey: Journey) -> None:
    journey("demo", "--quiet")
    run_id = journey.query("SELECT id FROM runs WHERE kind = 'run'")[0][0]
    sheet = journey.cwd / "sheet.csv"
    journey("calibrate", "sample", run_id, "--n", "40", "--enrich", "5", "--seed", "3",
            "--out", str(sheet))
    _fill(journey, run_id, sheet, journey.cwd / "filled.csv")
    journey("calibrate", "import", "filled.csv", "--run", run_id)
    refused = journey("calibrate", "escalate", run_id, expect=2)
    said = _flat(refused.text)
    assert "reserved 5 slots for the items the judges disagreed on most" in said
    assert "without --enrich" in said
    assert journey.query("SELECT COUNT(*) FROM escalations") == [(0,)]
