"""One-sided confidence bounds for non-inferiority: paired proportions and paired mean shifts.

A release gate asks "is B shown not worse than A by more than a margin?". Its answer is a one-sided
lower confidence bound of ``B - A`` compared with ``-margin`` (and the upper bound with ``-margin``
for "shown worse"). A one-sided bound at confidence ``c`` is the limit of the two-sided interval
at level ``2c - 1`` (the 95% lower bound is the lower limit of the 90% interval).

- **Pass rate** (paired binary outcomes): Tango's asymptotic score interval for the difference of
  paired proportions (Tango 1998, Stat Med 17:891-908), recommended with Newcombe's hybrid score
  interval by Fagerland, Lydersen & Laake (2014, Stat Med 33:2850-2875). Unlike the Wald interval
  it stays inside [-1, 1] and is not degenerate when no item changed. Neither scipy nor
  statsmodels has it (statsmodels' paired interval is for the risk ratio); the limits are found by
  root finding on the score statistic, and the tests pin them to the worked example of Fagerland,
  Lydersen & Laake (2017), chapter 8.
- **Rubric mean, t**: ``mean ± t(c, n-1)·sd/√n`` (scipy's t quantile).
- **Rubric shift, Wilcoxon**: the Hodges-Lehmann bound, i.e. the shift ``δ`` where the one-sided
  signed-rank test of ``d - δ`` (``scipy.stats.wilcoxon``, scipy's defaults: zeros dropped, exact
  or normal with ties) stops rejecting. Without ties it is a Walsh average picked by the
  signed-rank critical value.
- **Items needed** "at this variance": how many paired items the bound would need to clear
  ``-margin`` if the observed figures held. For a mean, the normal sample size of a one-sided
  non-inferiority test ``n = ((z_c + z_power)·sd / (δ + margin))²`` (``power`` 0.5: the bound
  itself, no extra power); for the pass rate, the smallest ``n`` at which Tango's bound with the
  observed shares of items that got worse and better clears the margin (the t formula would say
  0 when no item changed, where Tango needs ``z²(1 - m)/m`` items).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from scipy import optimize, stats

from legal_judge.stats._common import ArrayLike, StatisticsError, as_float_array

__all__ = ["Bounds", "PairedProportionsBounds", "hodges_lehmann_bounds", "items_needed",
           "mean_bounds", "paired_proportions_bounds", "tango_interval",
           "tango_items_needed"]

_ITER = 100
_DECIMALS = 12
_HL_MAX = 2000  # Walsh averages of a larger sample (n²/2 values) are not worth their memory


@dataclass(frozen=True, slots=True)
class Bounds:
    """One-sided ``confidence`` bounds of a paired shift ``B - A`` (each bound one-sided).

    ``lower``/``upper`` are None when undefined (fewer than 2 pairs). ``estimate`` is the mean
    (t) or the Hodges-Lehmann estimate (Wilcoxon; None above 2,000 pairs); ``sd`` is the per-pair
    sd of the differences (ddof 1).
    """

    n: int
    estimate: float | None
    mean: float
    sd: float | None
    lower: float | None
    upper: float | None
    confidence: float
    method: str


@dataclass(frozen=True, slots=True)
class PairedProportionsBounds:
    """Tango one-sided bounds of ``rate(after) - rate(before)`` on paired binary outcomes.

    ``worse`` counts items true before and false after (pass -> fail); ``better`` the reverse.
    ``sd`` is the per-item sd of the ``-1/0/+1`` changes (ddof 0), the spread the items-needed
    figure uses.
    """

    n: int
    worse: int
    better: int
    difference: float
    sd: float
    lower: float
    upper: float
    confidence: float
    method: str = "tango score"


def _check_confidence(confidence: float) -> None:
    if not 0.5 < confidence < 1:
        raise StatisticsError(f"confidence {confidence} is not between 0.5 and 1",
                              fix="use e.g. 0.95 (one-sided)")


def _tango_statistic(delta: float, better: float, worse: float, n: int) -> float:
    """Tango's score statistic ``(n12 - n21 - NΔ)/√(N(2q̃21 + Δ(1 - Δ)))``, decreasing in Δ."""
    a = 2.0 * n
    b = -better - worse + (2.0 * n - better + worse) * delta
    c = -worse * delta * (1.0 - delta)
    # q̃21: the constrained maximum-likelihood estimate of P(before only) under Δ.
    q = (math.sqrt(max(0.0, b * b - 4.0 * a * c)) - b) / (2.0 * a)
    var = n * (2.0 * q + delta * (1.0 - delta))
    num = better - worse - n * delta
    if var <= 0:
        return 0.0 if num == 0 else math.copysign(math.inf, num)
    return num / math.sqrt(var)


def tango_interval(better: int, worse: int, n: int, *,
                   level: float = 0.95) -> tuple[float, float]:
    """Tango's two-sided score interval of ``(better - worse)/n`` at ``level``.

    Args:
        better: Pairs with the outcome in the second condition only (``n12``).
        worse: Pairs with the outcome in the first condition only (``n21``).
        n: All pairs.
        level: Two-sided confidence level.

    Returns:
        ``(low, high)`` within [-1, 1].

    Raises:
        StatisticsError: counts that do not fit (``better + worse > n``), ``n == 0``.
    """
    if n <= 0 or better < 0 or worse < 0 or better + worse > n:
        raise StatisticsError(f"invalid paired counts better={better}, worse={worse}, n={n}",
                              fix="need 0 <= better + worse <= n and n >= 1")
    if not 0 < level < 1:
        raise StatisticsError(f"level {level} is not between 0 and 1", fix="use e.g. 0.95")
    z = float(stats.norm.ppf(1 - (1 - level) / 2))
    est = (better - worse) / n
    eps = 1e-12

    def gap(delta: float, target: float) -> float:
        return _tango_statistic(delta, better, worse, n) - target

    low = -1.0 if gap(-1 + eps, z) <= 0 else float(
        optimize.brentq(gap, -1 + eps, est, args=(z,), xtol=1e-12, maxiter=_ITER))
    high = 1.0 if gap(1 - eps, -z) >= 0 else float(
        optimize.brentq(gap, est, 1 - eps, args=(-z,), xtol=1e-12, maxiter=_ITER))
    return low, high


def paired_proportions_bounds(before: Sequence[bool], after: Sequence[bool], *,
                              confidence: float = 0.95) -> PairedProportionsBounds:
    """One-sided ``confidence`` bounds of ``rate(after) - rate(before)`` (Tango score).

    Args:
        before: Outcome per item under the baseline (run A: passed).
        after: Outcome per item under the new condition (run B), same order.
        confidence: One-sided confidence of each bound (0.95: the two-sided 90% limits).

    Raises:
        StatisticsError: no item, vectors of different lengths, a confidence out of (0.5, 1).
    """
    _check_confidence(confidence)
    x, y = np.asarray(before, dtype=bool), np.asarray(after, dtype=bool)
    if x.shape != y.shape or x.ndim != 1 or x.size == 0:
        raise StatisticsError(f"paired outcomes of shapes {x.shape} and {y.shape}",
                              fix="pass one outcome per item under each condition, same order")
    n = int(x.size)
    worse, better = int(np.sum(x & ~y)), int(np.sum(~x & y))
    low, high = tango_interval(better, worse, n, level=2 * confidence - 1)
    change = y.astype(float) - x.astype(float)
    return PairedProportionsBounds(n=n, worse=worse, better=better, difference=(better - worse) / n,
                                   sd=float(change.std(ddof=0)), lower=low, upper=high,
                                   confidence=confidence)


def _differences(a: ArrayLike, b: ArrayLike) -> np.ndarray:
    x, y = as_float_array(a, name="a"), as_float_array(b, name="b")
    if x.shape != y.shape:
        raise StatisticsError(f"{x.size} and {y.size} scores", fix="pass paired scores")
    keep = ~(np.isnan(x) | np.isnan(y))
    # Weighted-mean scores: 0.1 + 0.2 - 0.3 is no change (as in paired_test).
    return np.round(x[keep] - y[keep], _DECIMALS)


def _paired(after: ArrayLike, before: ArrayLike, confidence: float,
            ) -> tuple[np.ndarray, int, float]:
    """The complete pairs' differences, their count and mean, after checking the level.

    Raises:
        StatisticsError: a confidence outside (0, 1), or no complete pair.
    """
    _check_confidence(confidence)
    d = _differences(after, before)
    if d.size == 0:
        raise StatisticsError("no complete pair", fix="pass at least two scored pairs")
    return d, int(d.size), float(d.mean())


def mean_bounds(after: ArrayLike, before: ArrayLike, *, confidence: float = 0.95) -> Bounds:
    """One-sided t bounds of the mean of ``after - before``: ``mean ± t(c, n-1)·sd/√n``.

    With every difference equal (sd 0) both bounds are the mean; with one pair they are None.
    """
    d, n, mean = _paired(after, before, confidence)
    if n < 2:
        return Bounds(n, mean, mean, None, None, None, confidence, "t")
    sd = float(d.std(ddof=1))
    half = float(stats.t.ppf(confidence, n - 1)) * sd / math.sqrt(n)
    return Bounds(n, mean, mean, sd, mean - half, mean + half, confidence, "t")


def _wilcoxon_p(d: np.ndarray, shift: float, alternative: str) -> float:
    moved = np.round(d - shift, _DECIMALS)
    if not np.any(moved):
        return 1.0
    return float(stats.wilcoxon(moved, alternative=alternative).pvalue)


def _invert(d: np.ndarray, alpha: float, alternative: str) -> float:
    # The p-value of "d - δ > 0" rises with δ (and of "< 0" falls): bisect for where it crosses
    # alpha. Any shift outside the data's range is rejected or accepted for certain.
    lo, hi = float(d.min()) - 1.0, float(d.max()) + 1.0
    for _ in range(_ITER):
        mid = (lo + hi) / 2
        rejected = _wilcoxon_p(d, mid, alternative) < alpha
        if (alternative == "greater") == rejected:
            lo = mid
        else:
            hi = mid
        if hi - lo < 1e-10:
            break
    return (lo + hi) / 2


def hodges_lehmann_bounds(after: ArrayLike, before: ArrayLike, *,
                          confidence: float = 0.95) -> Bounds:
    """One-sided Hodges-Lehmann bounds of the shift of ``after - before`` (Wilcoxon inverted).

    The lower bound is the smallest shift ``δ`` that ``scipy.stats.wilcoxon(d - δ,
    alternative="greater")`` does not reject at ``1 - confidence``; the upper bound likewise with
    ``"less"``. Every difference zero: both bounds 0. One pair: None.
    """
    d, n, mean = _paired(after, before, confidence)
    sd = float(d.std(ddof=1)) if n > 1 else None
    if n < 2:
        return Bounds(n, None, mean, None, None, None, confidence, "hodges-lehmann")
    estimate = None
    if n <= _HL_MAX:
        i, j = np.triu_indices(n)
        estimate = float(np.median((d[i] + d[j]) / 2))
    if not np.any(d) or np.ptp(d) == 0:
        # No spread: the shift is known exactly (all zero, or one constant change).
        return Bounds(n, estimate, mean, sd, mean, mean, confidence, "hodges-lehmann")
    alpha = 1 - confidence
    return Bounds(n, estimate, mean, sd, _invert(d, alpha, "greater"), _invert(d, alpha, "less"),
                  confidence, "hodges-lehmann")


def items_needed(sd: float | None, difference: float, margin: float, *,
                 confidence: float = 0.95, power: float = 0.5) -> int | None:
    """Paired items a one-sided non-inferiority test needs: ``((z_c + z_p)·sd/(δ + m))²``.

    Args:
        sd: The per-item sd of the differences (the observed variance).
        difference: The true difference assumed (the observed one).
        margin: The non-inferiority margin (positive).
        confidence: One-sided confidence of the bound.
        power: Probability that the bound clears ``-margin`` at that many items (0.5: the
            observed bound itself would).

    Returns:
        The number of items (at least 2), or None when no number would do (the difference is at
        or below ``-margin``) or the sd is unknown.
    """
    if sd is None or not math.isfinite(sd) or difference + margin <= 0:
        return None
    if sd == 0:
        return 2
    z = float(stats.norm.ppf(confidence) + stats.norm.ppf(power))
    return max(2, math.ceil((z * sd / (difference + margin)) ** 2))


def tango_items_needed(better_share: float, worse_share: float, margin: float, *,
                       confidence: float = 0.95, limit: int = 10_000_000) -> int | None:
    """Smallest ``n`` whose one-sided Tango lower bound, at these shares, is above ``-margin``.

    Args:
        better_share: Share of pairs with the outcome only in the new condition.
        worse_share: Share of pairs with the outcome only in the baseline.
        margin: The non-inferiority margin (positive).
        confidence: One-sided confidence of the bound.
        limit: Give up above this many items.

    Returns:
        The number of items, or None when the observed difference is at or below ``-margin``
        (no number of items would do) or more than ``limit`` would be needed.
    """
    _check_confidence(confidence)
    if better_share - worse_share <= -margin:
        return None
    z = float(stats.norm.ppf(confidence))

    def clears(n: int) -> bool:
        # Tango's statistic at Δ = -margin, with the counts scaled to n (real-valued counts); it
        # decreases in Δ, so above z there means the lower limit is above -margin.
        b, c = better_share * n, worse_share * n
        return _tango_statistic(-margin, b, c, n) > z

    lo, hi = 1, 2
    while not clears(hi):
        lo, hi = hi, hi * 2
        if hi > limit:
            return None
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (lo, mid) if clears(mid) else (mid, hi)
    return hi

