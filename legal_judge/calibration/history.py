"""Calibration history: the trend per rubric across quarters and the drift alert.

One calibration speaks for each quarter: the latest stored in it. Drift is flagged when this
quarter's 95% CI of the mean signed divergence excludes last quarter's mean divergence; a changed
judge_id between the two quarters is marked, since a new judge explains a move better than drift.
"""

from __future__ import annotations

from legal_judge.calibration.data import ENSEMBLE
from legal_judge.calibration.schema import CalibrationReport, HistoryRow
from legal_judge.store import Store

__all__ = ["calibration_history", "latest_per_quarter"]


def latest_per_quarter(store: Store) -> list[CalibrationReport]:
    """The latest calibration of every quarter, oldest quarter first."""
    by_quarter: dict[str, CalibrationReport] = {}
    for raw in store.calibrations.reports():
        report = CalibrationReport.model_validate(raw)
        by_quarter[report.quarter] = report
    return [by_quarter[q] for q in sorted(by_quarter)]


def calibration_history(
    store: Store, *, rubric: str | None = None, judge: str = ENSEMBLE
) -> list[HistoryRow]:
    """Per rubric and quarter, one judge's divergence from the lawyers, with drift alerts.

    Args:
        store: The store holding the calibrations.
        rubric: Only this rubric (all rubrics by default).
        judge: The judge name (``ensemble`` by default).

    Returns:
        Rows ordered by rubric then quarter.
    """
    out: list[HistoryRow] = []
    previous: dict[str, HistoryRow] = {}
    for report in latest_per_quarter(store):
        for comp in report.rubrics:
            if rubric is not None and comp.rubric != rubric:
                continue
            row = next((r for r in comp.judges if r.judge == judge), None)
            if row is None:
                continue
            prev = previous.get(comp.rubric)
            drift = (
                prev is not None and prev.mean_divergence is not None and row.ci95 is not None
                and not row.ci95[0] <= prev.mean_divergence <= row.ci95[1]
            )
            current = HistoryRow(
                quarter=report.quarter, rubric=comp.rubric, judge=judge, judge_id=row.judge_id,
                calibration_id=report.calibration_id or "", n=row.n,
                mean_divergence=row.mean_divergence, ci95=row.ci95,
                mean_abs_divergence=row.mean_abs_divergence, kappa_quadratic=row.kappa_quadratic,
                recalibrate=row.recalibrate,
                previous_mean_divergence=prev.mean_divergence if prev else None,
                drift=drift, judge_changed=prev is not None and prev.judge_id != row.judge_id,
            )
            previous[comp.rubric] = current
            out.append(current)
    return sorted(out, key=lambda r: (r.rubric, r.quarter))
