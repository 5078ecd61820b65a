"""Two judges on the same items: the paired difference of a rate (agreement, false-pass rate).

The test is exact McNemar (:func:`~legal_judge.stats.proportions.mcnemar_exact`, scipy's exact
binomial test on the discordant items). The 95% CI of the difference is the exact *conditional*
interval that goes with it: with ``b`` items right only before and ``c`` right only after among
``n``, the difference is ``(c - b) / n = (b + c)/n * (2 pi - 1)`` with ``pi = c / (b + c)``, and
``pi`` gets its Clopper-Pearson interval (scipy ``binomtest(...).proportion_ci(method="exact")``).
With no discordant item the interval is ``±`` the exact upper bound of a discordance rate of 0 in
``n`` (the judges could still differ on unseen items), never a zero-width interval.

The labels needed for non-inferiority follow the usual normal approximation for paired
proportions (Connor 1987; Nam 1997): ``n = (z_{1-a/2} + z_{power})^2 (p_d - delta^2) /
(delta + margin)^2``; for a mean difference ``n = ((z_{1-a/2} + z_{power}) sd / (margin - delta))^2``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from scipy import stats

from legal_judge.stats._common import StatisticsError
from legal_judge.stats.proportions import mcnemar_exact

__all__ = ["PairedRateDifference", "items_for_noninferiority", "items_for_noninferiority_mean",
           "paired_rate_difference"]


@dataclass(frozen=True, slots=True)
class PairedRateDifference:
    """``after - before`` of a paired rate: estimate, exact conditional 95% CI, exact McNemar p."""

    n: int
    b: int
    c: int
    rate_before: float
    rate_after: float
    estimate: float
    ci95: tuple[float, float]
    p_value: float


def paired_rate_difference(before: Sequence[bool], after: Sequence[bool], *,
                           confidence: float = 0.95) -> PairedRateDifference:
    """The paired difference ``mean(after) - mean(before)`` with its CI and exact McNemar p.

    Args:
        before: Outcome per item of the reference (the incumbent judge agrees with the lawyers).
        after: Outcome per item of the compared judge (the candidate), same order.
        confidence: Confidence level of the interval.

    Raises:
        StatisticsError: different lengths or no item.
    """
    x = np.asarray(before, dtype=bool)
    y = np.asarray(after, dtype=bool)
    if x.shape != y.shape or x.ndim != 1:
        raise StatisticsError(f"outcome vectors differ in shape ({x.shape} vs {y.shape})",
                              fix="pass one outcome per item for each judge, same order")
    n = int(x.size)
    if n == 0:
        raise StatisticsError("no paired outcome", fix="pass at least one labelled item")
    b, c = int(np.sum(x & ~y)), int(np.sum(~x & y))
    test = mcnemar_exact(b, c)
    if b + c == 0:
        half = float(stats.binomtest(0, n).proportion_ci(confidence_level=confidence,
                                                         method="exact").high)
        ci = (-half, half)
    else:
        pi = stats.binomtest(c, b + c).proportion_ci(confidence_level=confidence, method="exact")
        share = (b + c) / n
        ci = (share * (2 * float(pi.low) - 1), share * (2 * float(pi.high) - 1))
    return PairedRateDifference(n=n, b=b, c=c, rate_before=float(x.mean()),
                                rate_after=float(y.mean()), estimate=(c - b) / n, ci95=ci,
                                p_value=test.p_value)


def _z_sum(alpha: float, power: float) -> float:
    return float(stats.norm.ppf(1 - alpha / 2) + stats.norm.ppf(power))


def items_for_noninferiority(discordant_share: float, difference: float, margin: float, *,
                             alpha: float = 0.05, power: float = 0.8) -> int | None:
    """Paired items needed to show ``difference > -margin`` for a paired rate.

    Args:
        discordant_share: Share of items the two judges decide differently (``(b + c) / n``).
        difference: The difference expected (the observed one): after - before.
        margin: The non-inferiority margin (positive).
        alpha: Two-sided level (the 95% CI's lower bound is the one-sided 2.5% test).
        power: Probability of showing it when ``difference`` is true.

    Returns:
        The number of items, or None when no number would (``difference <= -margin``).
    """
    if difference + margin <= 0:
        return None
    variance = max(discordant_share - difference ** 2, 1e-9)
    return math.ceil(_z_sum(alpha, power) ** 2 * variance / (difference + margin) ** 2)


def items_for_noninferiority_mean(sd: float, difference: float, margin: float, *,
                                  alpha: float = 0.05, power: float = 0.8) -> int | None:
    """Paired items needed to show a mean difference ``< +margin`` (an error that must not grow).

    Returns:
        The number of items, or None when no number would (``difference >= margin``).
    """
    if difference >= margin:
        return None
    return max(2, math.ceil((_z_sum(alpha, power) * sd / (margin - difference)) ** 2))
