"""Run-level Langfuse scores of a run's figures split by its newest escalation (pure).

On the run's session (``session_id = run_id``, as :mod:`legal_judge.sync.plan_estimate`):
``run.pass_rate.judge_decided`` (the pass rate on the items the judges decide), ``run.pending_review``
(the escalated items no lawyer has labelled yet) and, once every escalated item is labelled,
``run.pass_rate.combined`` (the judges' decisions on kept items and the lawyers' on escalated ones).
Deterministic ids: a resend after more labels arrive updates the same scores. Nothing is sent for
a run that was never escalated. Sent with the run, after ``calibrate escalate`` and whenever the
run's lawyer labels change.
"""

from __future__ import annotations

from typing import Any

from legal_judge.store import Store
from legal_judge.sync.plan import ScorePlan
from legal_judge.sync.plan_estimate import session_score, session_time

__all__ = ["escalation_scores"]


def escalation_scores(store: Store, run_id: str) -> list[ScorePlan]:
    """The split-figure session scores of a run (empty when it was never escalated)."""
    from legal_judge.calibration.escalation import escalation_figures

    f = escalation_figures(store, run_id)
    if f is None:
        return []
    when = session_time(store, run_id)
    meta: dict[str, Any] = {"level": "run", "run_id": run_id, "escalation_id": f.escalation_id,
                            "guaranteed": f.guaranteed, "target": f.target,
                            "confidence": f.confidence, "n_items": f.n_items,
                            "decided": f.decided, "escalated": f.escalated,
                            "reviewed": f.reviewed}
    rows: list[tuple[str, float | None, str]] = [
        ("run.pass_rate.judge_decided", f.decided_pass_rate,
         f"pass rate on the {f.decided} items the judges decide ({f.label})"),
        ("run.pending_review", float(f.pending),
         f"{f.pending} of {f.escalated} escalated items await a lawyer"),
        ("run.pass_rate.combined", f.combined_pass_rate,
         f"judges on {f.decided} kept items, lawyers on {f.escalated} escalated ones"),
    ]
    return [session_score(run_id, name, value, when, comment=comment, metadata=meta)
            for name, value, comment in rows if value is not None]
