"""Agreement that survives skew: Gwet's AC1/AC2 and PABAK (Brennan-Prediger), with CIs.

Cohen's kappa collapses when one category dominates (the "kappa paradox": 95% raw agreement on
answers that nearly all pass can give a kappa near zero), because its chance agreement comes
from the raters' own marginals. Gwet's AC1 (nominal) and AC2 (weighted, ordinal) take chance
agreement as the propensity to agree on hard-to-score items; PABAK (prevalence- and bias-adjusted
kappa, Byrt et al. 1993) is ``2·p_a - 1`` for two categories, the Brennan-Prediger coefficient
with chance agreement ``1/q``. Both sit beside kappa, never instead of it.

The formulas and the variance are those of Gwet's "Handbook of Inter-Rater Reliability" (4th
ed.) as the reference implementation ``irrCAC`` (0.4.4, ``CAC.gwet`` / ``CAC.bp``) computes them:
the linearised per-item variance with no finite-population correction and a Student t interval
on ``n - 1`` degrees of freedom, its upper end capped at 1. Weights are agreement weights on the
*positions* of the scale (``1 - d/d_max``, ``d`` the linear or squared distance), the same
weights :func:`legal_judge.stats.kappa_ci` uses, so AC2 and weighted kappa read the same table.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np
from scipy import stats

from legal_judge.stats._common import FloatArray, StatisticsError, check_choice

__all__ = ["RobustAgreement", "gwet_ac", "pabak"]

Weights = Literal["linear", "quadratic"] | None


@dataclass(frozen=True, slots=True)
class RobustAgreement:
    """One chance-corrected agreement coefficient with its standard error and CI.

    ``name`` is ``AC1`` (unweighted), ``AC2`` (weighted) or ``PABAK``; ``pa`` the (weighted)
    observed agreement and ``pe`` the chance agreement the coefficient subtracts. ``value``,
    ``se`` and ``ci`` are None when the coefficient is undefined (chance agreement of 1).
    """

    name: str
    n: int
    value: float | None
    se: float | None
    ci: tuple[float, float] | None
    pa: float
    pe: float
    weights: str | None


def _table(a: Sequence[Hashable], b: Sequence[Hashable],
           labels: Sequence[Hashable] | None) -> tuple[FloatArray, int]:
    """Items x categories counts of the two raters' ratings (pairs with a missing side dropped)."""
    if len(a) != len(b):
        raise StatisticsError(f"rating lists differ in length ({len(a)} vs {len(b)})",
                              fix="pass the two ratings of each item at the same position")
    pairs = [(x, y) for x, y in zip(a, b, strict=True) if not (_missing(x) or _missing(y))]
    if len(pairs) < 2:
        raise StatisticsError(f"{len(pairs)} item(s) rated by both raters; an agreement "
                              "coefficient with a CI needs at least 2",
                              fix="label more items")
    cats = list(labels) if labels is not None else sorted({v for p in pairs for v in p})  # type: ignore[type-var]
    index = {c: i for i, c in enumerate(cats)}
    unknown = sorted({repr(v) for p in pairs for v in p if v not in index})
    if unknown:
        raise StatisticsError(f"ratings not among the labels: {', '.join(unknown[:10])}",
                              fix="pass labels covering the whole scale")
    counts = np.zeros((len(pairs), len(cats)))
    for row, (x, y) in enumerate(pairs):
        counts[row, index[x]] += 1.0
        counts[row, index[y]] += 1.0
    return counts, len(cats)


def _missing(value: object) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value))


def _weight_matrix(q: int, weights: Weights) -> FloatArray:
    if weights is None or q < 2:
        return np.eye(q)
    pos = np.arange(q, dtype=np.float64)
    dist = np.abs(pos[:, None] - pos[None, :])
    if weights == "quadratic":
        dist = dist**2
    return 1.0 - dist / dist.max()


def _observed(counts: FloatArray, w: FloatArray) -> tuple[FloatArray, float]:
    """Per-item weighted agreement of the two ratings, and its mean."""
    weighted = counts @ w.T
    per_item = (counts * (weighted - 1.0)).sum(axis=1) / 2.0  # r(r - 1) = 2 for two raters
    return per_item, float(per_item.mean())


def _interval(value: float, per_item: FloatArray, alpha: float) -> tuple[float, tuple[float, float]]:
    n = per_item.size
    se = math.sqrt(float(((per_item - value) ** 2).sum()) / (n * (n - 1)))
    t = float(stats.t.ppf(1.0 - alpha / 2.0, n - 1))
    return se, (value - t * se, min(1.0, value + t * se))


def gwet_ac(
    a: Sequence[Hashable],
    b: Sequence[Hashable],
    *,
    weights: Weights = None,
    labels: Sequence[Hashable] | None = None,
    alpha: float = 0.05,
) -> RobustAgreement:
    """Gwet's AC1 (``weights=None``) or AC2 (linear/quadratic weights) of two raters, with CI.

    Args:
        a: Ratings of the first rater (the judge); None/NaN pairs are dropped.
        b: Ratings of the second rater (the lawyer), same order.
        weights: None (AC1), ``linear`` or ``quadratic`` (AC2).
        labels: The full ordered scale, so unused levels still count (as for weighted kappa).
        alpha: Error level of the two-sided t interval.

    Returns:
        A :class:`RobustAgreement` named ``AC1`` or ``AC2``.

    Raises:
        StatisticsError: Fewer than two complete pairs, or a rating outside ``labels``.
    """
    if weights is not None:
        check_choice(weights, ("linear", "quadratic"), name="AC2 weights")
    counts, q = _table(a, b, labels)
    n = counts.shape[0]
    w = _weight_matrix(q, weights)
    pa_i, pa = _observed(counts, w)
    name = "AC1" if weights is None else "AC2"
    if q < 2:
        return RobustAgreement(name, n, None, None, None, pa, 1.0, weights)
    pi = (counts / 2.0).mean(axis=0)  # each category's share of all ratings
    factor = float(w.sum()) / (q * (q - 1))
    pe = factor * float((pi * (1.0 - pi)).sum())
    ac = (pa - pe) / (1.0 - pe)
    pe_i = factor * (counts @ (1.0 - pi)) / 2.0
    # Gwet's linearisation: each item's contribution, corrected for the estimated chance term.
    ac_i = (pa_i - pe) / (1.0 - pe) - 2.0 * (1.0 - ac) * (pe_i - pe) / (1.0 - pe)
    se, ci = _interval(ac, ac_i, alpha)
    return RobustAgreement(name, n, ac, se, ci, pa, pe, weights)


def pabak(
    a: Sequence[Hashable],
    b: Sequence[Hashable],
    *,
    labels: Sequence[Hashable] | None = None,
    alpha: float = 0.05,
) -> RobustAgreement:
    """PABAK: the Brennan-Prediger coefficient ``(p_a - 1/q)/(1 - 1/q)``, with CI.

    For pass/fail (``q = 2``) it is ``2·p_a - 1``, the prevalence- and bias-adjusted kappa.

    Args:
        a: Ratings of the first rater; None/NaN pairs are dropped.
        b: Ratings of the second rater, same order.
        labels: The categories (default the observed ones); pass both when one never occurred.
        alpha: Error level of the two-sided t interval.

    Returns:
        A :class:`RobustAgreement` named ``PABAK`` (value None with a single category).
    """
    counts, q = _table(a, b, labels)
    n = counts.shape[0]
    pa_i, pa = _observed(counts, np.eye(q))
    if q < 2:
        return RobustAgreement("PABAK", n, None, None, None, pa, 1.0, None)
    pe = 1.0 / q
    value = (pa - pe) / (1.0 - pe)
    se, ci = _interval(value, (pa_i - pe) / (1.0 - pe), alpha)
    return RobustAgreement("PABAK", n, value, se, ci, pa, pe, None)
