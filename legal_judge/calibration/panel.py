"""The panel's real size, from the labelled items: are three judges worth three?

Per numeric rubric: each judge's error (score - lawyers' score) on the items every judge scored,
the correlation of those errors, Kish's effective number of independent judges
(:func:`legal_judge.stats.effective_judges`), each judge's quadratic-weighted kappa and mean
absolute error, whether the ensemble beats its best judge, and suggested weights proportional to
1 / mean squared error. The weights are a suggestion: nothing applies them unless the user writes
them into the ensemble file.
"""

from __future__ import annotations

import numpy as np

from legal_judge.calibration.data import ENSEMBLE, ComparisonData, Score
from legal_judge.calibration.schema import PanelJudge, PanelRow, RubricComparison
from legal_judge.stats import StatisticsError, effective_judges

__all__ = ["panel_rows"]


def _weights(mse: dict[str, float]) -> dict[str, float | None]:
    if any(v == 0 for v in mse.values()):
        return dict.fromkeys(mse)  # a judge without error on these items: no finite weighting
    inv = {k: 1.0 / v for k, v in mse.items()}
    total = sum(inv.values())
    return {k: v / total for k, v in inv.items()}


def _row(data: ComparisonData, comp: RubricComparison, human: dict[str, Score]) -> PanelRow | None:
    spec = data.specs[comp.rubric]
    judges = [j for j in data.judges if j != ENSEMBLE and data.scores[j].get(comp.rubric)]
    if len(judges) < 2:
        return None
    cols = {j: data.scores[j][comp.rubric] for j in judges}
    items = sorted(i for i in human if all(i in cols[j] for j in judges))
    if len(items) < 2:
        return None
    truth = np.array([spec.code(human[i]) for i in items])
    errors = np.array([[spec.code(cols[j][i]) for i in items] for j in judges]) - truth
    try:
        size = effective_judges(errors)
    except StatisticsError:
        return None
    mae = {j: float(np.mean(np.abs(e))) for j, e in zip(judges, errors, strict=True)}
    weights = _weights({j: float(np.mean(e**2)) for j, e in zip(judges, errors, strict=True)})
    kappas = {r.judge: r.kappa_quadratic for r in comp.judges}
    ens = data.scores.get(ENSEMBLE, {}).get(comp.rubric, {})
    ens_items = [i for i in items if i in ens]
    ens_mae = (float(np.mean([abs(spec.code(ens[i]) - spec.code(human[i])) for i in ens_items]))
               if ens_items else None)
    best = min(judges, key=lambda j: (mae[j], j))
    better = None if ens_mae is None else ens_mae < mae[best]
    note = None
    if better is False:
        note = (f"the ensemble (MAE {ens_mae:.2f}) is no better than its best judge, {best} "
                f"(MAE {mae[best]:.2f})")
    corr = {a: {b: size.correlations[i][k] for k, b in enumerate(judges)}
            for i, a in enumerate(judges)}
    return PanelRow(
        rubric=comp.rubric, n_items=len(items),
        judges=[PanelJudge(judge=j, judge_id=data.judge_ids.get(j), kappa_quadratic=kappas.get(j),
                           mae=mae[j], suggested_weight=weights[j]) for j in judges],
        error_correlations=corr, mean_error_correlation=size.mean_correlation,
        effective_judges=size.effective_judges, ensemble_mae=ens_mae, best_judge=best,
        ensemble_better=better, note=note,
    )


def panel_rows(data: ComparisonData, humans: dict[str, dict[str, Score]],
               rubrics: list[RubricComparison]) -> list[PanelRow]:
    """One :class:`PanelRow` per numeric rubric scored by two or more judges."""
    out = []
    for comp in rubrics:
        if comp.kind == "numeric" and comp.rubric in humans:
            row = _row(data, comp, humans[comp.rubric])
            if row is not None:
                out.append(row)
    return out
