"""Monotone calibration correction: isotonic regression from judge score to human score."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import optimize

from legal_judge.stats._common import (
    ArrayLike,
    FloatArray,
    StatisticsError,
    as_float_array,
    complete_pairs,
)

__all__ = ["IsotonicModel", "apply_isotonic", "fit_isotonic"]


@dataclass(frozen=True, slots=True)
class IsotonicModel:
    """Breakpoints of a fitted non-decreasing step-linear map, plus the scale to clip to.

    ``x_knots`` are the distinct judge scores seen in fitting, ``y_knots`` the fitted human
    scores there. Plain tuples, so the model stores as JSON as is.
    """

    x_knots: tuple[float, ...]
    y_knots: tuple[float, ...]
    scale_min: float
    scale_max: float
    n: int


def fit_isotonic(x: ArrayLike, y: ArrayLike, *, scale: tuple[float, float]) -> IsotonicModel:
    """Fit a non-decreasing map from judge scores ``x`` to human scores ``y``.

    Tied judge scores are pooled first (mean of ``y``, weighted by count), then
    ``scipy.optimize.isotonic_regression`` fits the pooled means.

    Args:
        x: Judge scores (NaN/None pairs dropped).
        y: Human scores, same order.
        scale: ``(min, max)`` of the rubric scale; corrected scores are clipped to it.

    Returns:
        An :class:`IsotonicModel`.
    """
    lo, hi = scale
    if not lo < hi:
        raise StatisticsError(f"invalid scale {scale}", fix="pass (min, max) with min < max")
    jx, hy, _ = complete_pairs(x, y)
    if jx.size == 0:
        raise StatisticsError("no item has both scores to fit on", fix="import labels first")
    knots, inverse, counts = np.unique(jx, return_inverse=True, return_counts=True)
    means = np.bincount(inverse, weights=hy) / counts
    fitted = optimize.isotonic_regression(means, weights=counts, increasing=True).x
    return IsotonicModel(
        x_knots=tuple(float(v) for v in knots),
        y_knots=tuple(float(v) for v in fitted),
        scale_min=float(lo),
        scale_max=float(hi),
        n=int(jx.size),
    )


def apply_isotonic(model: IsotonicModel, x: ArrayLike) -> FloatArray:
    """Map judge scores through a fitted model.

    Scores between knots are linearly interpolated; scores outside the fitted range take the
    nearest end value; the result is clipped to the scale. NaN stays NaN.

    Args:
        model: A model from :func:`fit_isotonic`.
        x: Judge scores to correct.

    Returns:
        The corrected scores.
    """
    arr = as_float_array(x, name="x")
    out = np.interp(arr, model.x_knots, model.y_knots)
    out = np.clip(out, model.scale_min, model.scale_max)
    out[np.isnan(arr)] = np.nan
    return out
