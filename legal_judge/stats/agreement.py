"""Agreement between raters: Cohen's kappa, Krippendorff's alpha, Spearman's rho.

Missing ratings are ``None`` or NaN. Cohen's kappa and Spearman drop the pairs with a missing
side; Krippendorff's alpha uses every pairable value (units with fewer than two ratings drop out).
Undefined statistics (no variation at all) are ``None``, never a made-up number.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
import numpy.typing as npt
from scipy import stats

from legal_judge.stats._common import (
    ArrayLike,
    FloatArray,
    StatisticsError,
    check_choice,
    complete_pairs,
)

__all__ = [
    "KappaCI",
    "SpearmanResult",
    "cohen_kappa",
    "is_missing",
    "kappa_ci",
    "krippendorff_alpha",
    "spearman",
]

KappaWeights = Literal["linear", "quadratic"] | None
AlphaLevel = Literal["nominal", "ordinal", "interval", "ratio"]


@dataclass(frozen=True, slots=True)
class SpearmanResult:
    """Spearman's rank correlation over the complete pairs (None when a side is constant)."""

    n: int
    n_dropped: int
    rho: float | None
    p_value: float | None


def is_missing(value: object) -> bool:
    """Whether a rating is missing (None or a float NaN)."""
    return value is None or (isinstance(value, float | np.floating) and math.isnan(value))


def cohen_kappa(
    a: Sequence[Hashable],
    b: Sequence[Hashable],
    *,
    weights: KappaWeights = None,
    labels: Sequence[Hashable] | None = None,
) -> float | None:
    """Cohen's kappa of two raters, unweighted or with linear/quadratic weights.

    The computation matches ``sklearn.metrics.cohen_kappa_score``: weights use the *positions*
    of the labels (0, 1, 2, ...), so pass the full scale as ``labels`` (e.g. ``[0, 1, 2, 3, 4, 5]``)
    when some scores were never used, or the weighted distances shrink.

    Args:
        a: Ratings of the first rater (e.g. the judge).
        b: Ratings of the second rater (e.g. the lawyer), same order.
        weights: None (unweighted), ``linear`` or ``quadratic``.
        labels: The ordered categories; default the sorted union of the observed values.

    Returns:
        Kappa, or None when it is undefined (no expected disagreement, e.g. one category only).

    Raises:
        StatisticsError: Different lengths, no complete pair, or a rating not in ``labels``.
    """
    if weights is not None:
        check_choice(weights, ("linear", "quadratic"), name="kappa weights")
    if len(a) != len(b):
        raise StatisticsError(
            f"rating lists differ in length ({len(a)} vs {len(b)})",
            fix="pass the two ratings of each item at the same position",
        )
    pairs = [(x, y) for x, y in zip(a, b, strict=True) if not (is_missing(x) or is_missing(y))]
    if not pairs:
        raise StatisticsError("no item rated by both raters", fix="check the label import")
    cats = list(labels) if labels is not None else sorted({v for p in pairs for v in p})  # type: ignore[type-var]
    index = {c: i for i, c in enumerate(cats)}
    unknown = sorted({repr(v) for p in pairs for v in p if v not in index})
    if unknown:
        raise StatisticsError(
            f"ratings not among the labels: {', '.join(unknown[:10])}",
            fix="pass labels covering the whole scale, or round fractional scores first",
        )
    k = len(cats)
    rows = np.fromiter((index[x] for x, _ in pairs), dtype=np.intp, count=len(pairs))
    cols = np.fromiter((index[y] for _, y in pairs), dtype=np.intp, count=len(pairs))
    observed = np.bincount(rows * k + cols, minlength=k * k).reshape(k, k).astype(np.float64)
    expected = np.outer(observed.sum(axis=1), observed.sum(axis=0)) / observed.sum()
    pos = np.arange(k)
    if weights is None:
        w = 1.0 - np.eye(k)
    elif weights == "linear":
        w = np.abs(pos[:, None] - pos[None, :]).astype(np.float64)
    else:
        w = ((pos[:, None] - pos[None, :]) ** 2).astype(np.float64)
    denominator = float((w * expected).sum())
    if denominator == 0.0:
        return None
    return 1.0 - float((w * observed).sum()) / denominator


def krippendorff_alpha(
    reliability_data: npt.ArrayLike | Sequence[Sequence[Any]], *, level: AlphaLevel = "interval"
) -> float | None:
    """Krippendorff's alpha from the coincidence matrix.

    Args:
        reliability_data: Raters x units matrix of numeric ratings; NaN or None marks a missing
            rating (the layout of the ``krippendorff`` package).
        level: ``nominal``, ``ordinal`` (ranks of the observed values), ``interval`` or ``ratio``.

    Returns:
        Alpha, or None when undefined (fewer than two distinct pairable values).

    Raises:
        StatisticsError: Not a 2-D matrix or no unit rated at least twice.
    """
    check_choice(level, ("nominal", "ordinal", "interval", "ratio"), name="alpha level")
    by_unit = _as_matrix(reliability_data).T  # units x raters
    rated = ~np.isnan(by_unit)
    values, codes = np.unique(by_unit[rated], return_inverse=True)
    counts = np.zeros((by_unit.shape[0], values.size))  # units x values
    np.add.at(counts, (np.nonzero(rated)[0], codes), 1.0)
    m = counts.sum(axis=1)
    counts = counts[m >= 2]
    m = m[m >= 2]
    if counts.size == 0:
        raise StatisticsError(
            "no unit has two or more ratings", fix="alpha needs items scored by at least two raters"
        )
    scaled = counts / (m - 1.0)[:, None]
    coincidence = scaled.T @ counts - np.diag(scaled.sum(axis=0))
    n_v = coincidence.sum(axis=0)
    delta = _distance(values, n_v, level)
    expected = float((np.outer(n_v, n_v) * delta).sum())
    if expected == 0.0:
        return None
    observed = float((coincidence * delta).sum())
    return 1.0 - (n_v.sum() - 1.0) * observed / expected


def _as_matrix(reliability_data: npt.ArrayLike | Sequence[Sequence[Any]]) -> FloatArray:
    if isinstance(reliability_data, np.ndarray) and reliability_data.dtype.kind in "fiub":
        numeric = reliability_data.astype(np.float64)
        if numeric.ndim == 2:
            return numeric
    rows = np.asarray(reliability_data, dtype=object)
    if rows.ndim != 2:
        raise StatisticsError(
            f"reliability data must be raters x units, got shape {rows.shape}",
            fix="pass one row per rater with one column per item (NaN when not rated)",
        )
    missing = np.vectorize(is_missing, otypes=[bool])(rows)
    try:
        return np.where(missing, np.nan, rows).astype(np.float64)
    except (TypeError, ValueError) as exc:
        raise StatisticsError(
            f"reliability data holds a value that is not a number ({exc})",
            fix="code the ratings as numbers; use None or NaN when a rater skipped an item",
        ) from exc


def _distance(values: FloatArray, n_v: FloatArray, level: str) -> FloatArray:
    """Squared distance ``delta^2`` between every pair of observed values."""
    i = np.arange(values.size)
    if level == "nominal":
        return 1.0 - np.eye(values.size)
    if level == "interval":
        return (values[:, None] - values[None, :]) ** 2
    if level == "ratio":
        total = values[:, None] + values[None, :]
        with np.errstate(invalid="ignore", divide="ignore"):
            ratio = ((values[:, None] - values[None, :]) / total) ** 2
        return np.nan_to_num(ratio)
    lo = np.minimum(i[:, None], i[None, :])
    hi = np.maximum(i[:, None], i[None, :])
    cum = np.concatenate(([0.0], np.cumsum(n_v)))
    between = cum[hi + 1] - cum[lo]  # sum of n_g for g from lo to hi inclusive
    return (between - (n_v[lo] + n_v[hi]) / 2.0) ** 2


def spearman(a: ArrayLike, b: ArrayLike) -> SpearmanResult:
    """Spearman's rho (``scipy.stats.spearmanr``) over the pairs with both scores present.

    Args:
        a: Scores of the first rater.
        b: Scores of the second rater, same order.

    Returns:
        A :class:`SpearmanResult`; ``rho`` and ``p_value`` are None when either side is constant
        or fewer than two pairs remain.
    """
    x, y, dropped = complete_pairs(a, b)
    if x.size < 2 or np.ptp(x) == 0 or np.ptp(y) == 0:
        return SpearmanResult(int(x.size), dropped, None, None)
    res = stats.spearmanr(x, y)
    return SpearmanResult(int(x.size), dropped, float(res.statistic), float(res.pvalue))


@dataclass(frozen=True, slots=True)
class KappaCI:
    """Cohen's kappa with its asymptotic standard error and normal CI (None when undefined)."""

    n: int
    kappa: float | None
    se: float | None
    ci: tuple[float, float] | None
    weights: str | None


def kappa_ci(
    a: Sequence[Hashable],
    b: Sequence[Hashable],
    *,
    weights: KappaWeights = "quadratic",
    labels: Sequence[Hashable] | None = None,
    alpha: float = 0.05,
) -> KappaCI:
    """Cohen's kappa and its CI from the asymptotic variance (Fleiss, Cohen and Everitt 1969).

    The variance is the non-null one SAS PROC FREQ and ``statsmodels.stats.inter_rater.
    cohens_kappa`` report (``std_kappa``), computed with agreement weights
    ``1 - d_ij / d_max`` (``d`` linear or squared distance of the label positions); the CI is
    ``kappa ± z(1 - alpha/2)·se``. With few items the normal CI is rough: read it with n.

    Args:
        a: Ratings of the first rater (the judge); None/NaN pairs are dropped.
        b: Ratings of the second rater (the lawyer).
        weights: None (unweighted), ``linear`` or ``quadratic``.
        labels: The full ordered scale (so unused levels still count as distance).
        alpha: Error level of the CI.

    Returns:
        A :class:`KappaCI`; kappa, se and CI are None when kappa is undefined.
    """
    kappa = cohen_kappa(a, b, weights=weights, labels=labels)
    pairs = [(x, y) for x, y in zip(a, b, strict=True) if not (is_missing(x) or is_missing(y))]
    if kappa is None:
        return KappaCI(len(pairs), None, None, None, weights)
    cats = list(labels) if labels is not None else sorted({v for p in pairs for v in p})  # type: ignore[type-var]
    index = {c: i for i, c in enumerate(cats)}
    k = len(cats)
    table = np.zeros((k, k))
    for x, y in pairs:
        table[index[x], index[y]] += 1.0
    n = table.sum()
    p = table / n
    row, col = p.sum(axis=1), p.sum(axis=0)
    pos = np.arange(k, dtype=np.float64)
    if weights is None:
        w = np.eye(k)
    else:
        dist = np.abs(pos[:, None] - pos[None, :])
        if weights == "quadratic":
            dist = dist**2
        w = 1.0 - dist / dist.max()
    w_row = (w * col[None, :]).sum(axis=1)  # sum_j w_ij p_.j
    w_col = (w * row[:, None]).sum(axis=0)  # sum_i w_ij p_i.
    pe = float((w * np.outer(row, col)).sum())
    term = (p * (w - (w_row[:, None] + w_col[None, :]) * (1.0 - kappa)) ** 2).sum()
    var = (float(term) - (kappa - pe * (1.0 - kappa)) ** 2) / ((1.0 - pe) ** 2 * n)
    se = math.sqrt(max(var, 0.0))
    z = float(stats.norm.ppf(1.0 - alpha / 2.0))
    return KappaCI(int(n), kappa, se, (kappa - z * se, kappa + z * se), weights)
