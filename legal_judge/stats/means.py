"""Mean of one sample with its t-based 95% confidence interval."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
from scipy import stats

__all__ = ["MIN_N_FOR_INTERVAL", "MeanCI", "mean_ci"]

#: Fewest values a reported rubric-mean interval rests on. Below it the t quantile dominates
#: (t(0.975, 2) = 4.30: three scores 0, 3, 5 give -3.3 to 8.3 on a 0-5 scale), so the interval
#: says nothing a reader can use; "too few items for an interval" is said instead.
MIN_N_FOR_INTERVAL = 5


@dataclass(frozen=True, slots=True)
class MeanCI:
    """``mean ± t(0.975, n-1)·sd/√n``; with n < 2 the sd and the interval are undefined (None).

    ``too_few`` is True when values exist but fewer than the ``min_n`` asked for: the interval
    is withheld (None), not shown as a number.
    """

    n: int
    mean: float
    sd: float | None
    ci95: tuple[float, float] | None
    too_few: bool = False


def mean_ci(values: npt.ArrayLike, *, confidence: float = 0.95,
            bounds: tuple[float, float] | None = None, min_n: int = 2) -> MeanCI:
    """Mean and t confidence interval of ``values`` (NaNs dropped).

    Args:
        values: The sample.
        confidence: Confidence level.
        bounds: The scale's ``(min, max)``: the interval is clamped to it (a mean of 0-5 scores
            cannot lie outside 0-5, whatever the t interval says).
        min_n: Fewest values for an interval; with fewer (but at least one) ``ci95`` is None and
            ``too_few`` is True.

    Returns:
        A :class:`MeanCI`; an empty sample gives a NaN mean; with fewer than two values ``sd``
        and ``ci95`` are None (one value has no spread, so no interval, not a zero-width one).
    """
    x = np.asarray(values, dtype=float)
    x = x[~np.isnan(x)]
    n = int(x.size)
    if n == 0:
        return MeanCI(0, float("nan"), None, None)
    mean = float(x.mean())
    sd = float(x.std(ddof=1)) if n >= 2 else None
    if n < max(min_n, 2):
        return MeanCI(n, mean, sd, None, too_few=n < min_n)
    assert sd is not None
    half = float(stats.t.ppf(0.5 + confidence / 2, n - 1)) * sd / math.sqrt(n)
    low, high = mean - half, mean + half
    if bounds is not None:
        low, high = max(low, bounds[0]), min(high, bounds[1])
    return MeanCI(n, mean, sd, (low, high))
