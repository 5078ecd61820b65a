"""Journey (issue 28 item 5): a finished run's corrected figures do not move.

demo -> the lawyers' quarterly calibration of it -> a run scored with --calibration (its corrected
pass rate pinned to that calibration) -> next quarter, harsher lawyers calibrate ANOTHER run of
the same ensemble -> `runs show --json` of the calibrated run is byte-identical where it counts
and names the newer calibration -> estimating again with it stores a new, named estimate that
the run then shows -> a stricter policy warns that the calibration rests on too few labels.
"""

from __future__ import annotations

import csv
import json
import re
from pathlib import Path

from legal_judge.dataset import sample_dataset_path

from .conftest import Journey
from .test_calibration import _fill


def _flat(text: str) -> str:
    return " ".join(text.split())


def _harsher(path: Path) -> None:
    """Next quarter's lawyers (both of them) fail every third answer on legal soundness."""
    with path.open(encoding="utf-8", newline="") as fh:
        reader = csv.DictReader(fh)
        rows, columns = list(reader), list(reader.fieldnames or [])
    failed = sorted({row["item_id"] for row in rows})[::3]
    for row in rows:
        if row["item_id"] in failed:
            row["legal_soundness"] = "1"
    with path.open("w", encoding="utf-8", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=columns)
        writer.writeheader()
        writer.writerows(rows)


def _calibrate(journey: Journey, run_id: str, quarter: str, *, harsh: bool = False) -> str:
    sheet = journey.cwd / f"{run_id}.sheet.csv"
    journey("calibrate", "sample", run_id, "--n", "50", "--seed", "7", "--out", str(sheet))
    filled = journey.cwd / f"{run_id}.filled.csv"
    _fill(sheet, filled)
    if harsh:
        _harsher(filled)
    journey("calibrate", "import", str(filled), "--run", run_id)
    cmp = journey("calibrate", "compare", run_id, "--quarter", quarter)
    return re.search(r"calibration id: (\S+)", cmp.out)[1]  # type: ignore[index]


def _corrected(journey: Journey, run_id: str) -> dict[str, object]:
    shown = journey("runs", "show", run_id, "--json")
    return json.loads(shown.out)["summary"]["corrected"]  # type: ignore[no-any-return]


def test_corrected_figures_are_pinned_to_their_calibration(journey: Journey) -> None:
    journey("demo", "--quiet")
    first = journey.query("SELECT id FROM runs WHERE kind = 'run'")[0][0]
    cal1 = _calibrate(journey, first, "2026-Q4")
    journey("calibrate", "fit", cal1)
    scored = journey("run", str(sample_dataset_path()), "--ensemble", "demo", "--calibration",
                     cal1, "--run-id", "calrun", "--quiet")
    assert "pass rate corrected for judge error" in _flat(scored.out)

    before = _corrected(journey, "calrun")
    assert before["calibration_id"] == cal1
    pin = before["pin"]
    assert isinstance(pin, dict) and pin["id"] == "est-calrun-1" and pin["chosen_by"] == "scored"
    assert journey.query("SELECT id, calibration_id, chosen_by FROM run_estimates WHERE "
                         "run_id = 'calrun'") == [("est-calrun-1", cal1, "scored")]
    # One corrected mean per rubric, named by its method, and which answers which question.
    shown = _flat(journey("runs", "show", "calrun").out)
    assert re.search(r"corrected mean of [a-z_, ]*legal_soundness[a-z_, ]*: PPI \(the judges' "
                     rf"mean error on {re.escape(cal1)}\)", shown), shown
    assert "their average is not a second estimate of the run's mean" in shown
    assert "isotonic mean" not in shown and "rubric means, raw -> corrected" not in shown

    # Next quarter: another run of the same ensemble, calibrated by harsher lawyers.
    journey("run", str(sample_dataset_path()), "--ensemble", "demo", "--run-id", "later",
            "--quiet")
    cal2 = _calibrate(journey, "later", "2027-Q1", harsh=True)
    assert cal2 != cal1

    after = _corrected(journey, "calrun")
    # Before issue 28 the figures were re-estimated from the newest calibration (cal2 here).
    assert json.dumps(after["pass_rate"]) == json.dumps(before["pass_rate"])
    assert json.dumps(after["rubrics"]) == json.dumps(before["rubrics"])
    assert after["calibration_id"] == cal1 and after["pin"] == before["pin"]
    newer = after["newer_calibration"]
    assert isinstance(newer, dict) and newer["calibration_id"] == cal2
    shown = _flat(journey("runs", "show", "calrun").out)
    command = f"legal-judge calibrate estimate calrun --calibration {cal2}"
    assert f"a newer calibration exists: {cal2} (estimate again with `{command}`)" in shown
    assert f"rests on calibration {cal1}" in shown

    # Choosing the newer calibration stores a new, named estimate; the first is never rewritten.
    again = journey(*command.split()[1:])
    assert f"rests on calibration {cal2}" in _flat(again.out)
    assert journey.query("SELECT id, calibration_id, chosen_by FROM run_estimates WHERE "
                         "run_id = 'calrun' ORDER BY seq") == [
        ("est-calrun-1", cal1, "scored"), ("est-calrun-2", cal2, "explicit")]
    first_row = json.loads(journey.query("SELECT estimate_json FROM run_estimates WHERE id = "
                                         "'est-calrun-1'")[0][0])
    assert json.dumps(first_row["pass_rate"], sort_keys=True) == json.dumps(
        before["pass_rate"], sort_keys=True)
    latest = _corrected(journey, "calrun")
    assert latest["calibration_id"] == cal2 and latest["newer_calibration"] is None
    assert latest["pass_rate"] != before["pass_rate"]  # harsher lawyers: other figures
    shown = _flat(journey("runs", "show", "calrun").out)
    assert f"chosen with `{command}`; pinned as est-calrun-2" in shown

    # The policy's [calibration] floor: 50 labels are fewer than a team's 60.
    (journey.cwd / "legal-judge.policy.toml").write_text("[calibration]\nmin_labels = 60\n",
                                                         "utf-8")
    warned = _flat(journey("runs", "show", "calrun").out)
    assert re.search(r"warning: the corrected figures rest on 50 lawyer-labelled items \(\S+\): "
                     r"fewer than calibration.min_labels = 60 \(policy: \S*legal-judge.policy.toml "
                     r"\(sha256 [0-9a-f]{12}\) \[calibration\]\)", warned), warned

    # Defect: with `[release] use_corrected = true` the gate asked "does each run have a
    # correction?" with the newest calibration of its ensemble (transported), then compared the
    # pinned figures, which a run no calibration was chosen for has none of: exit 2 and
    # "drop --corrected", a flag nobody gave. It falls back to the raw scores and says so.
    (journey.cwd / "legal-judge.policy.toml").write_text(
        "[calibration]\nmin_labels = 60\n[release]\nuse_corrected = true\n", "utf-8")
    journey("run", str(sample_dataset_path()), "--ensemble", "demo", "--run-id", "unchosen",
            "--quiet")
    gate = journey("compare", "calrun", "unchosen", "--fail-on-regression", expect=(0, 1))
    said = _flat(gate.text)
    assert "the policy's use_corrected is set, but a run has no correction" in said, said
    assert "drop --corrected" not in said


def test_a_run_labelled_whole_shows_the_lawyers_figures(journey: Journey) -> None:
    """Defect: a small benchmark the lawyers labelled whole (a census) showed every corrected
    figure as "undefined" ("no unlabelled item: every item is labelled"), so a release gate on
    corrected figures could only say "cannot tell"; they are the lawyers' own figures."""
    journey("demo", "--quiet")
    run_id = journey.query("SELECT id FROM runs WHERE kind = 'run'")[0][0]
    sheet = journey.cwd / "all.csv"
    sampled = journey("calibrate", "sample", run_id, "--n", "100", "--seed", "1", "--out",
                      str(sheet))
    assert "57 of 57 items" in sampled.out
    _fill(sheet, journey.cwd / "all.filled.csv")
    journey("calibrate", "import", "all.filled.csv", "--run", run_id)
    shown = journey("calibrate", "estimate", run_id, "--json")
    est = json.loads(shown.out)
    assert est["pass_rate"]["status"] == "corrected" and est["pass_rate"]["method"] == "census"
    assert est["rubrics"]["legal_soundness"]["status"] == "corrected"
    text = _flat(journey("calibrate", "estimate", run_id).out)
    assert "undefined" not in text and "every item labelled: the lawyers' figures" in text
