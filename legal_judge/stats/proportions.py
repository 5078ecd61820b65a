"""Proportions: confidence intervals, the exact binomial test and the exact McNemar test."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np
from scipy import stats

from legal_judge.stats._common import StatisticsError, check_choice

__all__ = [
    "BinomialResult",
    "McNemarResult",
    "binomial_first_position",
    "mcnemar_exact",
    "mcnemar_from_outcomes",
    "proportion_ci",
]

CiKind = Literal["wilson", "exact"]


@dataclass(frozen=True, slots=True)
class BinomialResult:
    """An exact two-sided binomial test of ``k`` successes in ``n`` against 0.5.

    With ``n == 0`` there is nothing to test: ``proportion`` and ``ci95`` are None, p is 1.0.
    """

    k: int
    n: int
    proportion: float | None
    p_value: float
    ci95: tuple[float, float] | None
    ci_method: str


@dataclass(frozen=True, slots=True)
class McNemarResult:
    """Exact McNemar test on the discordant counts ``b`` and ``c``.

    ``statistic`` is ``min(b, c)``, as ``statsmodels``' ``mcnemar(exact=True)`` reports it.
    The rate fields are filled by :func:`mcnemar_from_outcomes` only.
    """

    b: int
    c: int
    n_discordant: int
    statistic: float
    p_value: float
    n: int | None = None
    rate_before: float | None = None
    rate_after: float | None = None
    rate_change: float | None = None


def _check_counts(k: int, n: int) -> None:
    if n < 0 or k < 0 or k > n:
        raise StatisticsError(
            f"invalid counts k={k}, n={n}", fix="need 0 <= k <= n (successes out of trials)"
        )


def proportion_ci(
    k: int, n: int, *, method: CiKind = "wilson", confidence: float = 0.95
) -> tuple[float, float]:
    """Confidence interval of the proportion ``k/n`` (for accuracies and pass rates).

    Args:
        k: Successes.
        n: Trials (at least 1).
        method: ``wilson`` (Wilson score interval, the default for accuracy) or ``exact``
            (Clopper-Pearson), both from ``scipy.stats.binomtest(...).proportion_ci``.
        confidence: Confidence level.

    Returns:
        ``(low, high)``.
    """
    check_choice(method, ("wilson", "exact"), name="ci method")
    _check_counts(k, n)
    if n == 0:
        raise StatisticsError("a proportion needs at least one trial", fix="collect data first")
    ci = stats.binomtest(k, n).proportion_ci(confidence_level=confidence, method=method)
    return float(ci.low), float(ci.high)


def binomial_first_position(first_wins: int, n: int) -> BinomialResult:
    """Test whether the first position wins more (or less) often than chance.

    Args:
        first_wins: Inconsistent pairs decided for the first-shown answer.
        n: Inconsistent pairs decided for either position.

    Returns:
        Exact binomial two-sided p (``scipy.stats.binomtest``, p = 0.5) and the
        Clopper-Pearson 95% CI of the first-position rate.
    """
    _check_counts(first_wins, n)
    if n == 0:
        return BinomialResult(first_wins, 0, None, 1.0, None, "exact")
    res = stats.binomtest(first_wins, n, 0.5)
    ci = res.proportion_ci(confidence_level=0.95, method="exact")
    return BinomialResult(
        k=first_wins,
        n=n,
        proportion=first_wins / n,
        p_value=float(res.pvalue),
        ci95=(float(ci.low), float(ci.high)),
        ci_method="exact",
    )


def mcnemar_exact(b: int, c: int) -> McNemarResult:
    """Exact McNemar test: two-sided binomial test of ``b`` against ``b + c`` at 0.5.

    Args:
        b: Items right before and wrong after (or: condition 1 yes, condition 2 no).
        c: Items wrong before and right after.

    Returns:
        A :class:`McNemarResult`; with no discordant pair p is 1.0.
    """
    _check_counts(b, b + c)
    _check_counts(c, b + c)
    n_disc = b + c
    p = 1.0 if n_disc == 0 else float(stats.binomtest(b, n_disc, 0.5).pvalue)
    return McNemarResult(b=b, c=c, n_discordant=n_disc, statistic=float(min(b, c)), p_value=p)


def mcnemar_from_outcomes(before: Sequence[bool], after: Sequence[bool]) -> McNemarResult:
    """Exact McNemar test from two paired boolean outcome vectors (e.g. correct under two modes).

    Args:
        before: Outcome per item under the reference condition (e.g. ``plain`` or run A).
        after: Outcome per item under the compared condition, same order.

    Returns:
        A :class:`McNemarResult` with ``b = before & ~after``, ``c = ~before & after`` and the two
        rates and their change (``after - before``).
    """
    x = np.asarray(before, dtype=bool)
    y = np.asarray(after, dtype=bool)
    if x.shape != y.shape or x.ndim != 1:
        raise StatisticsError(
            f"outcome vectors differ in shape ({x.shape} vs {y.shape})",
            fix="pass one outcome per item under each condition, same order",
        )
    if x.size == 0:
        raise StatisticsError("no paired outcomes", fix="pass at least one item")
    base = mcnemar_exact(int(np.sum(x & ~y)), int(np.sum(~x & y)))
    before_rate, after_rate = float(x.mean()), float(y.mean())
    return McNemarResult(
        b=base.b,
        c=base.c,
        n_discordant=base.n_discordant,
        statistic=base.statistic,
        p_value=base.p_value,
        n=int(x.size),
        rate_before=before_rate,
        rate_after=after_rate,
        rate_change=after_rate - before_rate,
    )
