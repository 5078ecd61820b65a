"""Equivalence of paired scores: two one-sided tests (TOST) against a margin, and its sample size.

Conventions (DESIGN.md, "Statistics conventions"): ``d_i = a_i - b_i``; the difference is
equivalent to zero within ``±margin`` when both one-sided nulls are rejected at ``alpha``
(``H0_lower: mean <= -margin`` and ``H0_upper: mean >= +margin``); ``p_TOST`` is the larger of the two
one-sided p-values. On the t route this is statsmodels' ``ttost_paired(a, b, -margin, margin)``, and
it holds exactly when the ``1 - 2·alpha`` (90%) t interval of the mean difference lies inside the
margin. The Wilcoxon route runs scipy's signed-rank test on the shifted differences ``d + margin``
(alternative ``greater``) and ``d - margin`` (``less``), scipy's defaults (zeros dropped); its
interval is still the t interval, reported for reading, and the decision is the tests'.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

import numpy as np
from scipy import stats

from legal_judge.stats._common import (
    ArrayLike,
    check_choice,
    check_positive,
    paired_differences,
)

__all__ = ["EquivalenceResult", "pairs_for_equivalence", "tost_paired"]

TostMethod = Literal["t-test", "wilcoxon"]
T_ROUTE = "paired TOST (t)"
W_ROUTE = "paired TOST (shifted Wilcoxon signed-rank)"
_MAX_N = 10_000_000


@dataclass(frozen=True, slots=True)
class EquivalenceResult:
    """The paired TOST of ``a - b`` against ``±margin``.

    ``ci90`` is the ``1 - 2·alpha`` t interval of the mean difference (None below two pairs);
    ``pairs_needed`` is the number of pairs a TOST at this margin needs for ``power`` when the true
    difference is zero and the SD is the observed one (None when it cannot be estimated).
    """

    n: int
    n_dropped: int
    margin: float
    alpha: float
    mean_difference: float
    sd: float | None
    ci90: tuple[float, float] | None
    test_used: str
    statistic_lower: float | None
    statistic_upper: float | None
    p_lower: float
    p_upper: float
    p_value: float
    equivalent: bool
    pairs_needed: int | None
    note: str | None

    @property
    def ci_level(self) -> float:
        """The coverage of ``ci90``: ``1 - 2·alpha`` (0.90 at alpha 0.05; the name is the usual
        case's)."""
        return 1.0 - 2.0 * self.alpha


def _ci90(d: np.ndarray, alpha: float) -> tuple[float, float]:
    ci = stats.ttest_1samp(d, 0.0).confidence_interval(confidence_level=1.0 - 2.0 * alpha)
    return float(ci.low), float(ci.high)


def tost_paired(a: ArrayLike, b: ArrayLike, *, margin: float, method: TostMethod = "t-test",
                alpha: float = 0.05, power: float = 0.8) -> EquivalenceResult:
    """Test whether the paired difference ``a - b`` lies within ``±margin``.

    Pairs with a missing score are dropped (counted in ``n_dropped``). Fewer than two pairs: no
    test (p = 1, not equivalent). Differences that are all equal (sd = 0) have no t statistic: they
    are equivalent exactly when ``|mean| < margin`` (p = 0, else 1), and ``note`` says so.

    Args:
        a: Scores of the variant carrying the attribute.
        b: Scores of the baseline variant, same order.
        margin: The equivalence margin in score points (> 0).
        method: ``t-test`` (statsmodels' ``ttost_paired``) or ``wilcoxon`` (shifted signed-rank).
        alpha: Level of each one-sided test.
        power: Power used for ``pairs_needed``.

    Raises:
        StatisticsError: a margin that is not positive, an unknown method, mismatched inputs.
    """
    check_choice(method, ("t-test", "wilcoxon"), name="method")
    check_positive(margin, what="equivalence margin",
                   fix="pass a margin in score points, for example 0.5")
    d, dropped = paired_differences(a, b)
    n = int(d.size)
    route = T_ROUTE if method == "t-test" else W_ROUTE
    if n < 2:
        mean = float(d.mean()) if n else 0.0
        return EquivalenceResult(n, dropped, margin, alpha, mean, None, None, "none", None, None,
                                 1.0, 1.0, 1.0, False, None,
                                 f"{n} complete pair(s): equivalence cannot be tested")
    mean, sd = float(d.mean()), float(d.std(ddof=1))
    needed = pairs_for_equivalence(sd, margin, alpha=alpha, power=power)
    if sd == 0.0:
        inside = abs(mean) < margin
        p = 0.0 if inside else 1.0
        return EquivalenceResult(n, dropped, margin, alpha, mean, 0.0, (mean, mean), "none", None,
                                 None, p, p, p, inside, needed,
                                 "every difference is the same (sd = 0): no t statistic; "
                                 "equivalent exactly when |mean| < margin")
    ci = _ci90(d, alpha)
    if method == "t-test":
        se = sd / math.sqrt(n)
        t_low, t_upp = (mean + margin) / se, (mean - margin) / se
        p_low = float(stats.t.sf(t_low, n - 1))
        p_upp = float(stats.t.cdf(t_upp, n - 1))
        s_low, s_upp = float(t_low), float(t_upp)
        note = None
    else:
        low = stats.wilcoxon(d + margin, alternative="greater")
        upp = stats.wilcoxon(d - margin, alternative="less")
        p_low, p_upp = float(low.pvalue), float(upp.pvalue)
        s_low, s_upp = float(low.statistic), float(upp.statistic)
        note = ("Wilcoxon route: signed-rank tests of d + margin > 0 and d - margin < 0 (scipy "
                "defaults, zero differences dropped); the interval shown is the t interval")
    p = max(p_low, p_upp)
    return EquivalenceResult(n, dropped, margin, alpha, mean, sd, ci, route, s_low, s_upp,
                             p_low, p_upp, p, p < alpha, needed, note)


def pairs_for_equivalence(sd: float, margin: float, *, alpha: float = 0.05, power: float = 0.8,
                          ) -> int | None:
    """Pairs a paired TOST needs to show equivalence within ``±margin`` with ``power``.

    Assumes the true difference is zero and the differences' SD is ``sd``: the smallest ``n >= 2``
    with ``(t(1-alpha, n-1) + t(1-(1-power)/2, n-1)) · sd / √n <= margin`` (the usual
    t-approximation of TOST power). None when ``sd`` is not finite or no n up to ten million is
    enough.
    """
    if not (math.isfinite(sd) and sd >= 0 and margin > 0 and 0 < alpha < 0.5 and 0 < power < 1):
        return None
    if sd == 0:
        return 2
    beta_half = (1.0 - power) / 2.0

    def enough(n: int) -> bool:
        df = n - 1
        crit = float(stats.t.ppf(1 - alpha, df) + stats.t.ppf(1 - beta_half, df))
        return crit * sd / math.sqrt(n) <= margin

    hi = 2
    while not enough(hi):
        hi *= 2
        if hi > _MAX_N:
            return None
    lo = max(2, hi // 2)
    if enough(lo):
        return lo
    while hi - lo > 1:  # enough(hi) and not enough(lo)
        mid = (lo + hi) // 2
        lo, hi = (lo, mid) if enough(mid) else (mid, hi)
    return hi
