"""Run-level Langfuse scores of a run's raw and judge-error-corrected figures (pure).

On the run's session (``session_id = run_id``, the session of its item traces), one pair per
figure: ``run.<figure>.raw`` (the judges' own figure) and ``run.<figure>.corrected`` (from
:func:`legal_judge.calibration.estimate_run`), with the method, the CI, the labelled count and, for a
transported correction, the calibration it rests on in the metadata. Nothing is sent for a run
nothing can correct. Sent with the run and again whenever its lawyer labels change.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from legal_judge.store import Store
from legal_judge.sync.plan import ScorePlan, det_id, ts

__all__ = ["estimate_scores", "session_score", "session_time"]


def session_time(store: Store, run_id: str) -> datetime:
    """When a run's session scores are dated: the run's end, or its start while it runs."""
    run = store.get_run(run_id)
    return ts(run.get("finished_at") or run["created_at"])


def session_score(run_id: str, name: str, value: float, when: datetime, *,
                  metadata: dict[str, Any], comment: str | None = None) -> ScorePlan:
    """A numeric run-level score on the run's session, its id derived from the run and the name
    (a resend after more labels updates the same score)."""
    return ScorePlan(det_id(f"score:session:{run_id}:{name}"), name, float(value), "NUMERIC", "",
                     when, comment=comment, metadata=metadata, session_id=run_id)


def _key(name: str) -> str:
    return "pass_rate_rogan_gladen" if "Rogan-Gladen" in name else name.replace(" ", "_")


def estimate_scores(store: Store, run_id: str) -> list[ScorePlan]:
    """The ``run.<figure>.raw`` / ``run.<figure>.corrected`` session scores of a run."""
    from legal_judge.benchmark.summary import corrected_figures

    est = corrected_figures(store, run_id)
    if est is None:
        return []
    when = session_time(store, run_id)
    common: dict[str, Any] = {"level": "run", "run_id": run_id, "source": est["source"],
                              "calibration_id": est.get("calibration_id"), "label": est["label"]}
    out = []
    rows = [est["pass_rate"], *est["rubrics"].values(),
            *([est["rogan_gladen"]] if est.get("rogan_gladen") else [])]
    for row in rows:
        key = _key(row["name"])
        if row["raw"] is not None and "Rogan-Gladen" not in row["name"]:
            out.append(session_score(run_id, f"run.{key}.raw", row["raw"], when, metadata={
                **common, "score_kind": "raw: the judges' own figure", "ci95": row["raw_ci95"]}))
        if row["status"] == "corrected" and row["corrected"] is not None:
            out.append(session_score(
                run_id, f"run.{key}.corrected", row["corrected"], when,
                comment=f"corrected for judge error ({row['method']}, {row['n_labelled']} "
                        "lawyer labels)",
                metadata={**common, "score_kind": "corrected for judge error",
                          "method": row["method"], "ci95": row["corrected_ci95"],
                          "n_labelled": row["n_labelled"], "lambda": row["lam"],
                          "raw_value": row["raw"]}))
    return out
