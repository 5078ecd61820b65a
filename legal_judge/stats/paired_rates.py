"""Two judges on the same items: the paired difference of a rate (agreement, false-pass rate).

The test is exact McNemar (:func:`~legal_judge.stats.proportions.mcnemar_exact`, scipy's exact
binomial test on the discordant items). The 95% CI of the difference is Newcombe's square-and-add
interval for paired proportions (Newcombe 1998, method 10): the Wilson score intervals of the two
rates (scipy ``binomtest(...).proportion_ci(method="wilson")``) combined with the estimated
correlation of the two rates, continuity-corrected as in the paper (and as the R package
``contingencytables`` computes it; the tests pin its published figures). Unlike an interval
conditional on the discordant items, it does not collapse when the two judges rarely disagree.

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
           "newcombe_paired_ci", "paired_rate_difference"]


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
    both, neither = int(np.sum(x & y)), int(np.sum(~x & ~y))
    ci = newcombe_paired_ci([[both, c], [b, neither]], confidence=confidence)
    return PairedRateDifference(n=n, b=b, c=c, rate_before=float(x.mean()),
                                rate_after=float(y.mean()), estimate=(c - b) / n, ci95=ci,
                                p_value=test.p_value)


def _wilson(k: int, n: int, confidence: float) -> tuple[float, float]:
    ci = stats.binomtest(k, n).proportion_ci(confidence_level=confidence, method="wilson")
    return float(ci.low), float(ci.high)


def newcombe_paired_ci(table: Sequence[Sequence[int]], *,
                       confidence: float = 0.95) -> tuple[float, float]:
    """Newcombe's square-and-add CI of ``p1 - p2`` for a paired 2x2 table.

    Args:
        table: ``[[both, first only], [second only, neither]]``: rows are the first outcome
            (success, failure), columns the second; ``p1`` is the first row's share, ``p2`` the
            first column's.
        confidence: Confidence level.
    """
    (n11, n12), (n21, n22) = ((int(v) for v in row) for row in table)
    n = n11 + n12 + n21 + n22
    row1, row2, col1, col2 = n11 + n12, n21 + n22, n11 + n21, n12 + n22
    p1, p2 = row1 / n, col1 / n
    l1, u1 = _wilson(row1, n, confidence)
    l2, u2 = _wilson(col1, n, confidence)
    psi = 0.0
    if min(row1, row2, col1, col2) > 0:
        cross = float(n11 * n22 - n12 * n21)
        # The paper's continuity correction of the correlation: positive only beyond n/2.
        cross = cross - n / 2 if cross > n / 2 else (0.0 if cross >= 0 else cross)
        psi = cross / math.sqrt(row1 * row2 * col1 * col2)
    d = p1 - p2
    low = d - math.sqrt(max((p1 - l1) ** 2 + (u2 - p2) ** 2 - 2 * psi * (p1 - l1) * (u2 - p2), 0))
    high = d + math.sqrt(max((p2 - l2) ** 2 + (u1 - p1) ** 2 - 2 * psi * (p2 - l2) * (u1 - p1), 0))
    return low, high


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
