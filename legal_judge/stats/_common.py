"""Shared helpers of the statistics package: input coercion, missing pairs, effect labels."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

import numpy as np
import numpy.typing as npt

from legal_judge.errors import ConfigError

__all__ = [
    "EffectKind",
    "StatisticsError",
    "interpret_effect",
]

FloatArray = npt.NDArray[np.float64]
ArrayLike = Sequence[float | int | None] | npt.NDArray[Any]

EffectKind = Literal["cohen_d_z", "hedges_g", "rank_biserial", "none"]

# DESIGN.md, "Statistics conventions": upper bounds of negligible / small / medium.
_D_BOUNDS = (0.2, 0.5, 0.8)
_R_BOUNDS = (0.1, 0.3, 0.5)
_LABELS = ("negligible", "small", "medium", "large")


class StatisticsError(ConfigError):
    """The data handed to a statistic cannot give a defined answer (empty, mismatched, invalid)."""

    def __init__(self, message: str, *, fix: str | None = None) -> None:
        super().__init__(message, code="stats-input", fix=fix)


def as_float_array(values: ArrayLike, *, name: str) -> FloatArray:
    """Return ``values`` as a 1-D float array; ``None`` becomes NaN (a missing score)."""
    raw = values if isinstance(values, np.ndarray) else [np.nan if v is None else v for v in values]
    try:
        arr = np.asarray(raw, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise StatisticsError(
            f"{name} holds a value that is not a number ({exc})",
            fix="pass numeric scores; use None or NaN for a missing score",
        ) from exc
    if arr.ndim != 1:
        raise StatisticsError(
            f"{name} must be one-dimensional, got shape {arr.shape}",
            fix="pass one score per pair or item",
        )
    return arr


def complete_pairs(a: ArrayLike, b: ArrayLike) -> tuple[FloatArray, FloatArray, int]:
    """Drop the pairs where either score is missing (NaN/None).

    Returns:
        The two complete arrays and the number of pairs dropped.
    """
    x = as_float_array(a, name="a")
    y = as_float_array(b, name="b")
    if x.shape != y.shape:
        raise StatisticsError(
            f"paired inputs differ in length ({x.size} vs {y.size})",
            fix="pass the two scores of each pair at the same position",
        )
    keep = ~(np.isnan(x) | np.isnan(y))
    return x[keep], y[keep], int(x.size - keep.sum())


def interpret_effect(value: float, kind: str) -> str:
    """Label an effect size as negligible, small, medium or large (DESIGN thresholds).

    Args:
        value: The effect size; its sign is ignored.
        kind: ``cohen_d_z`` or ``hedges_g`` (thresholds 0.2/0.5/0.8), ``rank_biserial``
            (0.1/0.3/0.5), or ``none`` (always negligible). ``d`` and ``r`` are accepted
            as short forms.

    Returns:
        One of ``negligible``, ``small``, ``medium``, ``large``.
    """
    if kind in ("cohen_d_z", "hedges_g", "d"):
        bounds = _D_BOUNDS
    elif kind in ("rank_biserial", "r"):
        bounds = _R_BOUNDS
    elif kind == "none":
        return "negligible"
    else:
        raise StatisticsError(
            f"unknown effect size kind {kind!r}",
            fix="use one of cohen_d_z, hedges_g, rank_biserial, none",
        )
    if not np.isfinite(value):
        raise StatisticsError(
            f"effect size {value!r} is not a finite number", fix="check the statistic's inputs"
        )
    size = abs(value)
    for bound, label in zip(bounds, _LABELS, strict=False):
        if size < bound:
            return label
    return _LABELS[-1]


def check_choice(value: str, allowed: tuple[str, ...], *, name: str) -> None:
    """Raise a :class:`StatisticsError` naming the choices when ``value`` is not one of them."""
    if value not in allowed:
        raise StatisticsError(f"unknown {name} {value!r}", fix=f"use one of: {', '.join(allowed)}")


#: Differences are rounded to this many decimals before any test sees them.
DIFF_DECIMALS = 12


def rounded_differences(x: FloatArray, y: FloatArray) -> FloatArray:
    """``x - y`` rounded to :data:`DIFF_DECIMALS`.

    Scores are often weighted means: 0.1 + 0.2 - 0.3 must count as "no change", not as a tiny
    positive difference that Wilcoxon would rank and the zero/constant checks would miss.
    """
    return np.round(x - y, DIFF_DECIMALS)


def paired_differences(a: ArrayLike, b: ArrayLike) -> tuple[FloatArray, int]:
    """The rounded differences ``a - b`` of the complete pairs, and how many pairs were dropped.

    Raises:
        StatisticsError: the two vectors differ in length.
    """
    x, y, dropped = complete_pairs(a, b)
    return rounded_differences(x, y), dropped


def check_positive(value: float, *, what: str, fix: str) -> None:
    """Refuse a setting that must be positive (a margin, a scale step).

    Raises:
        StatisticsError: ``value`` is not positive (the message names ``what``).
    """
    if not value > 0:
        raise StatisticsError(f"the {what} must be positive, got {value!r}", fix=fix)

