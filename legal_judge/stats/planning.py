"""Planning the lawyers' time: labels for a judge-error-corrected estimate within ±margin.

PPI++ (Angelopoulos et al. 2023, power-tuned) with ``n`` labelled items and ``N`` items judged
but not labelled, at the optimal lambda, has the variance of a regression estimator:
``Var = sigma^2 / n · (1 - rho^2 · N / (n + N))`` (``rho`` the judge-lawyer correlation,
``sigma^2`` the lawyers' variance; Angelopoulos, Duchi and Zrnic 2023, eq. for lambda*). The
normal 95% CI's half-width is ``z · sqrt(Var)``. Without the judge it is ``z · sigma / sqrt(n)``.
Judge scores help the estimate only when the correlation clears the noise of estimating lambda:
the break-even ``|rho| >= 1 / sqrt(n - 2)`` (Mani et al. 2025), the critical value of a
correlation's t-test at ``t = 1``.
"""

from __future__ import annotations

import math

from scipy import stats

from legal_judge.stats._common import StatisticsError

__all__ = ["break_even_correlation", "labels_for_margin"]

#: The largest label count :func:`labels_for_margin` searches.
MAX_PLANNED = 1_000_000


def break_even_correlation(n: int) -> float:
    """``1 / sqrt(n - 2)``: the judge-lawyer correlation below which judge scores do not help.

    Raises:
        StatisticsError: ``n < 3``.
    """
    if n < 3:
        raise StatisticsError(f"n = {n}: the break-even correlation needs n >= 3",
                              fix="plan at least 3 labels")
    return 1.0 / math.sqrt(n - 2)


def labels_for_margin(variance: float, margin: float, *, rho: float = 0.0,
                      n_unlabelled: float = math.inf, alpha: float = 0.05) -> int | None:
    """The fewest labels whose PPI++ CI half-width is at most ``margin``.

    Args:
        variance: The lawyers' variance (``p(1 - p)`` for a pass rate).
        margin: The wanted half-width of the ``1 - alpha`` CI (0.05 = ±5 points).
        rho: The judge-lawyer correlation (0: the classical estimate).
        n_unlabelled: Items judged but not labelled (``inf``: a large run).
        alpha: Error level of the CI.

    Returns:
        ``n``, or None above :data:`MAX_PLANNED`.
    """
    if variance < 0 or margin <= 0 or not -1.0 <= rho <= 1.0:
        raise StatisticsError(f"variance {variance}, margin {margin}, rho {rho} out of range",
                              fix="variance >= 0, margin > 0, -1 <= rho <= 1")
    z = float(stats.norm.ppf(1.0 - alpha / 2.0))

    def half_width(n: int) -> float:
        share = 1.0 if math.isinf(n_unlabelled) else n_unlabelled / (n + n_unlabelled)
        return z * math.sqrt(variance / n * (1.0 - rho**2 * share))

    lo, hi = 1, MAX_PLANNED
    if half_width(hi) > margin:
        return None
    while lo < hi:  # the half-width falls as n grows: bisect for the first n within the margin
        mid = (lo + hi) // 2
        if half_width(mid) <= margin:
            hi = mid
        else:
            lo = mid + 1
    return lo
