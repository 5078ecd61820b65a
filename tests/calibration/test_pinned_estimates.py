"""Issue 28 item 5: a run's corrected figures are pinned to a named calibration.

They are computed once with the calibration the run was scored with (or its own labels, or the
one chosen with ``calibrate estimate RUN --calibration CAL``), stored with that calibration's id
and date, and never moved by a later calibration; a newer one is only mentioned.
"""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from pg_server import set_json_field

from legal_judge.benchmark.summary import summarize_run
from legal_judge.calibration import (
    choose_estimate,
    compare,
    correct_result,
    estimate_run,
    fit_correction,
    from_store,
    save_calibration,
    shown_estimate,
)
from legal_judge.calibration.pinned import policy_warnings
from legal_judge.errors import ConfigError
from legal_judge.policy import load_policy
from legal_judge.store import Store


def _label(invoke: Any, tmp_path: Path, truth: Any, run_id: str, *, harsh: int = 0,
           n: int = 45) -> None:
    """A lawyer's scores on the first ``n`` items of a run (``harsh`` points below the truth)."""
    lines = ["item_id,rubric,score,annotator,labeled_at"]
    for i in sorted(truth.scores)[:n]:
        lines += [f"{i},{r},{max(0, int(v) - harsh)},lawyer,2026-08-02"
                  for r, v in truth.scores[i].items()]
        lines.append(f"{i},hallucination,{truth.hallucination[i]},lawyer,2026-08-02")
    path = tmp_path / f"{run_id}.csv"
    path.write_text("\n".join(lines) + "\n")
    assert invoke("calibrate", "import", str(path), "--run", run_id).exit_code == 0


def _scored_with_calibration(store: Store, make_run: Any, invoke: Any, tmp_path: Path, *,
                             made: str | None = None) -> tuple[str, str]:
    """q3 labelled and calibrated (dated ``made``); q4 scored with its correction (as `run
    --calibration`)."""
    truth = make_run(store, "q3", n_items=50, bias=1.0, seed=1)
    _label(invoke, tmp_path, truth, "q3")
    cal = save_calibration(store, compare(from_store(store, "q3"), quarter="2026-Q3"))
    if made is not None:
        store.db.execute("UPDATE calibrations SET created_at = ? WHERE id = ?",
                         (made, cal.calibration_id))
        set_json_field(store, "calibrations", "report_json", cal.calibration_id or "",
                       "created_at", made)
    correction = fit_correction(store, cal.calibration_id or "")
    make_run(store, "q4", n_items=30, bias=1.0, seed=2, prefix="q4item")
    set_json_field(store, "runs", "config_json", "q4", "calibration", correction.id)
    for item_id, r in store.load_results("q4").items():
        store.save_result("q4", item_id, correct_result(r, correction,
                                                        judge_id=cal.ensemble_judge_id))
    store.finish_run("q4", status="completed", summary=summarize_run(store, "q4"))
    return cal.calibration_id or "", correction.id


def _another_calibration(store: Store, make_run: Any, invoke: Any, tmp_path: Path) -> str:
    """A later calibration of the same ensemble on another run, by harsher lawyers."""
    truth = make_run(store, "q5", n_items=50, bias=1.0, seed=3, prefix="q5item")
    _label(invoke, tmp_path, truth, "q5", harsh=1)
    cal = save_calibration(store, compare(from_store(store, "q5"), quarter="2027-Q1"))
    return cal.calibration_id or ""


def test_a_later_calibration_of_another_run_never_moves_the_figures(
        store: Store, make_run: Any, invoke: Any, tmp_path: Path) -> None:
    cal1, corr = _scored_with_calibration(store, make_run, invoke, tmp_path)
    before = json.loads(invoke("runs", "show", "q4", "--json").output)["summary"]["corrected"]
    assert before["calibration_id"] == cal1 and before["pin"]["chosen_by"] == "scored"
    assert before["pin"]["id"] == "est-q4-1" and before["newer_calibration"] is None
    assert before["pin"]["calibration_date"] == store.calibrations.meta(cal1)["created_at"]
    stored = store.run_estimates.latest("q4")
    assert stored is not None and stored["calibration_id"] == cal1

    cal2 = _another_calibration(store, make_run, invoke, tmp_path)
    # What the old code showed: the latest calibration's figures, which differ.
    moved = estimate_run(store, "q4")
    assert moved is not None and moved.calibration_id == cal2
    assert moved.rubrics["legal_soundness"].corrected != before["rubrics"]["legal_soundness"][
        "corrected"]
    after = json.loads(invoke("runs", "show", "q4", "--json").output)["summary"]["corrected"]
    assert json.dumps(after["rubrics"]) == json.dumps(before["rubrics"])
    assert json.dumps(after["pass_rate"]) == json.dumps(before["pass_rate"])
    assert after["pin"] == before["pin"]
    assert after["newer_calibration"]["calibration_id"] == cal2
    text = " ".join(invoke("runs", "show", "q4").output.split())
    assert (f"a newer calibration exists: {cal2} (estimate again with `legal-judge calibrate "
            f"estimate q4 --calibration {cal2}`)") in text
    assert f"rests on calibration {cal1}" in text
    assert f"the calibration the run was scored with (--calibration {corr})" in text
    assert len(store.run_estimates.of_run("q4")) == 1
    page = tmp_path / "q4.html"
    assert invoke("report", "q4", "--html", str(page)).exit_code == 0
    html = " ".join(re.sub(r"<[^>]+>", " ", page.read_text("utf-8")).split())
    assert f"figures rest on calibration {cal1}" in html and "pinned as est-q4-1" in html
    assert f"a newer calibration exists: {cal2}" in html
    assert "transported from " + cal2 not in html


def test_estimating_again_with_a_named_calibration_adds_a_new_estimate(
        store: Store, make_run: Any, invoke: Any, tmp_path: Path) -> None:
    cal1, _ = _scored_with_calibration(store, make_run, invoke, tmp_path)
    first = shown_estimate(store, "q4")
    cal2 = _another_calibration(store, make_run, invoke, tmp_path)
    res = invoke("calibrate", "estimate", "q4", "--calibration", cal2)
    assert res.exit_code == 0, res.output
    flat = " ".join(res.output.split())
    assert f"rests on calibration {cal2}" in flat and "pinned as est-q4-2" in flat
    rows = store.run_estimates.of_run("q4")
    assert [(r["id"], r["calibration_id"], r["chosen_by"]) for r in rows] == [
        ("est-q4-1", cal1, "scored"), ("est-q4-2", cal2, "explicit")]
    first_row = store.run_estimates.get("est-q4-1")
    assert first is not None and first_row is not None
    assert first_row["estimate"]["rubrics"] == first["rubrics"]  # never rewritten
    shown = json.loads(invoke("runs", "show", "q4", "--json").output)["summary"]["corrected"]
    assert shown["pin"]["id"] == "est-q4-2" and shown["calibration_id"] == cal2
    assert shown["pin"]["chosen"] == (f"chosen with `legal-judge calibrate estimate q4 "
                                      f"--calibration {cal2}`")
    assert shown["newer_calibration"] is None
    # The same choice again stores nothing new.
    assert invoke("calibrate", "estimate", "q4", "--calibration", cal2).exit_code == 0
    assert len(store.run_estimates.of_run("q4")) == 2


def test_a_run_with_no_calibration_chosen_is_not_corrected_with_the_latest(
        store: Store, make_run: Any, invoke: Any, tmp_path: Path) -> None:
    cal2 = _another_calibration(store, make_run, invoke, tmp_path)
    make_run(store, "bare", n_items=20, bias=1.0, seed=4, prefix="bare")
    store.finish_run("bare", status="completed", summary=summarize_run(store, "bare"))
    s = json.loads(invoke("runs", "show", "bare", "--json").output)["summary"]
    assert s["corrected"] is None
    assert s["correction_available"]["calibration_id"] == cal2
    text = " ".join(invoke("runs", "show", "bare").output.split())
    assert (f"not corrected for judge error: no calibration was chosen for this run; a "
            f"calibration of its ensemble exists: {cal2} (estimate with `legal-judge calibrate "
            f"estimate bare --calibration {cal2}`)") in text
    assert "transported from" not in text
    assert store.run_estimates.of_run("bare") == []
    # Asking for an estimate pins one with the latest calibration, named as such.
    res = invoke("calibrate", "estimate", "bare", "--json")
    assert res.exit_code == 0, res.output
    out = json.loads(res.output)
    assert out["calibration_id"] == cal2 and out["pin"]["chosen_by"] == "latest"
    assert store.run_estimates.latest("bare")["calibration_id"] == cal2  # type: ignore[index]


def test_a_calibration_of_another_judge_is_refused(store: Store, make_run: Any, invoke: Any,
                                                   tmp_path: Path) -> None:
    cal2 = _another_calibration(store, make_run, invoke, tmp_path)
    make_run(store, "other", n_items=10, seed=6, prefix="o")
    set_json_field(store, "runs", "config_json", "other", "judge_id", "ens-another")
    with pytest.raises(ConfigError, match="measured the ensemble judge_id"):
        choose_estimate(store, "other", calibration_id=cal2)
    res = invoke("calibrate", "estimate", "other", "--calibration", cal2)
    assert res.exit_code == 2 and "calibrate history" in res.output
    assert store.run_estimates.of_run("other") == []


def test_an_unfinished_run_is_estimated_but_not_pinned(store: Store, make_run: Any,
                                                        invoke: Any, tmp_path: Path) -> None:
    cal2 = _another_calibration(store, make_run, invoke, tmp_path)
    make_run(store, "part", n_items=10, seed=7, prefix="p")
    store.db.execute("UPDATE runs SET status = 'interrupted' WHERE id = 'part'")
    row = choose_estimate(store, "part", calibration_id=cal2)
    assert row is not None and row["id"] is None
    assert store.run_estimates.of_run("part") == []


def test_policy_warnings_name_the_policy_age_and_labels() -> None:
    policy = load_policy()
    now = datetime(2026, 12, 3, tzinfo=UTC)
    old = policy_warnings("cal-x", "2026-07-01T09:00:00+00:00", 45, policy, now=now)
    assert old == [
        "the corrected figures rest on calibration cal-x, 154 days old (made 2026-07-01): older "
        f"than calibration.max_age_days = 120 ({policy.line('calibration')})",
        "the corrected figures rest on 45 lawyer-labelled items (cal-x): fewer than "
        f"calibration.min_labels = 50 ({policy.line('calibration')})"]
    assert policy_warnings("cal-x", "2026-11-01T00:00:00+00:00", 50, policy, now=now) == []


def test_runs_show_warns_under_the_policy_in_force(store: Store, make_run: Any, invoke: Any,
                                                   tmp_path: Path) -> None:
    _scored_with_calibration(store, make_run, invoke, tmp_path,
                             made="2026-01-02T00:00:00+00:00")
    text = " ".join(invoke("runs", "show", "q4").output.split())
    assert "made 2026-01-02): older than calibration.max_age_days = 120" in text
    assert "fewer than calibration.min_labels = 50 (policy: bundled default" in text
    strict = tmp_path / "strict.toml"
    strict.write_text("[calibration]\nmax_age_days = 1000\nmin_labels = 10\n")
    text = " ".join(invoke("runs", "show", "q4", "--policy", str(strict)).output.split())
    assert "max_age_days" not in text and "min_labels" not in text
