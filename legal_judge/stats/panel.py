"""The panel's real size: how independent the judges' errors are.

Three judges whose errors move together are worth about one judge. With each judge's error
``e_j = judge score - lawyer score`` on the labelled items, the mean pairwise Pearson correlation
``r`` of the errors gives Kish's effective number of independent judges
``n_eff = n / (1 + (n - 1)·r)`` (Kish, Survey Sampling, 1965: the design effect of equally
correlated units). ``r <= 0`` gives ``n_eff = n`` at most: negatively correlated errors are
reported, not rewarded beyond the panel's size.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from legal_judge.stats._common import StatisticsError

__all__ = ["PanelSize", "effective_judges"]


@dataclass(frozen=True, slots=True)
class PanelSize:
    """Error correlations of a panel and its effective number of independent judges.

    ``correlations`` is the judges x judges Pearson matrix of errors (None where a judge's error
    never varies); ``mean_correlation`` averages the defined off-diagonal pairs; both derived
    figures are None when no pair is defined.
    """

    n_judges: int
    n_items: int
    correlations: tuple[tuple[float | None, ...], ...]
    mean_correlation: float | None
    effective_judges: float | None


def effective_judges(errors: np.ndarray | list[list[float]]) -> PanelSize:
    """Kish's effective number of judges from a judges x items matrix of errors.

    Args:
        errors: One row per judge, one column per labelled item (items some judge missed must
            be dropped first: the rows are compared position by position).

    Returns:
        A :class:`PanelSize`.

    Raises:
        StatisticsError: fewer than two judges or two items, or missing values.
    """
    e = np.asarray(errors, dtype=np.float64)
    if e.ndim != 2 or e.shape[0] < 2 or e.shape[1] < 2:
        raise StatisticsError(f"need at least 2 judges x 2 items of errors, got shape {e.shape}",
                              fix="label more items, or compare a panel of two or more judges")
    if np.isnan(e).any():
        raise StatisticsError("an error is missing (NaN)",
                              fix="keep only the items every judge scored")
    k = e.shape[0]
    sd = e.std(axis=1)
    cells: list[list[float | None]] = [[None] * k for _ in range(k)]
    off = []
    for i in range(k):
        for j in range(k):
            if sd[i] == 0 or sd[j] == 0:
                continue
            r = 1.0 if i == j else float(np.corrcoef(e[i], e[j])[0, 1])
            cells[i][j] = r
            if i < j:
                off.append(r)
    mean = float(np.mean(off)) if off else None
    n_eff = None if mean is None else float(k / (1.0 + (k - 1) * max(mean, 0.0)))
    return PanelSize(k, int(e.shape[1]), tuple(tuple(row) for row in cells), mean, n_eff)
