"""Multiple-comparison correction across audit dimensions and the flag rule."""

from __future__ import annotations

from typing import Literal

import numpy as np
from scipy import stats

from legal_judge.stats._common import ArrayLike, FloatArray, StatisticsError, as_float_array

__all__ = ["adjust_pvalues", "flag"]

Correction = Literal["holm", "bh", "none"]


def adjust_pvalues(pvals: ArrayLike, method: Correction = "holm") -> FloatArray:
    """Adjust p-values for multiple comparisons.

    NaN entries (a dimension with insufficient data) pass through as NaN and do not count as
    comparisons.

    Args:
        pvals: Raw p-values, one per dimension.
        method: ``holm`` (Holm-Bonferroni step-down, numpy), ``bh`` (Benjamini-Hochberg via
            ``scipy.stats.false_discovery_control``) or ``none``.

    Returns:
        The adjusted p-values in the input order.

    Raises:
        StatisticsError: An unknown method or a p-value outside [0, 1].
    """
    p = as_float_array(pvals, name="pvals")
    present = ~np.isnan(p)
    valid = p[present]
    if np.any((valid < 0) | (valid > 1)):
        raise StatisticsError("p-values must lie in [0, 1]", fix="pass raw p-values, not scores")
    out = p.copy()
    if valid.size == 0 or method == "none":
        return out
    if method == "holm":
        out[present] = _holm(valid)
    elif method == "bh":
        out[present] = stats.false_discovery_control(valid, method="bh")
    else:
        raise StatisticsError(f"unknown correction {method!r}", fix="use holm, bh or none")
    return out


def _holm(p: FloatArray) -> FloatArray:
    m = p.size
    order = np.argsort(p, kind="stable")
    # Step-down: the k-th smallest p (0-based) is multiplied by m - k, then made monotone.
    scaled = np.minimum(1.0, (m - np.arange(m)) * p[order])
    adjusted = np.empty(m)
    adjusted[order] = np.maximum.accumulate(scaled)
    return adjusted


def flag(p_adj: float | None, effect: float | None, *, significance: float,
         min_effect: float) -> bool:
    """Apply the seed's flag rule: ``p < significance`` AND ``|effect| > min_effect``.

    Args:
        p_adj: The (adjusted) p-value of the dimension.
        effect: Its effect size (d_z or rank-biserial r).
        significance: The significance threshold, for example 0.05.
        min_effect: The minimum effect size, for example 0.2.

    Returns:
        Whether the dimension is flagged. A NaN or undefined (None) p-value or effect never flags.
    """
    if p_adj is None or effect is None:
        return False
    return bool(p_adj < significance and abs(effect) > min_effect)
