"""Mean of one sample with its t-based 95% confidence interval."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
from scipy import stats

__all__ = ["MeanCI", "mean_ci"]


@dataclass(frozen=True, slots=True)
class MeanCI:
    """``mean ± t(0.975, n-1)·sd/√n``; with n < 2 the sd and the interval are undefined (None)."""

    n: int
    mean: float
    sd: float | None
    ci95: tuple[float, float] | None


def mean_ci(values: npt.ArrayLike, *, confidence: float = 0.95) -> MeanCI:
    """Mean and t confidence interval of ``values`` (NaNs dropped).

    Args:
        values: The sample.
        confidence: Confidence level.

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
    if n < 2:
        return MeanCI(n, mean, None, None)
    sd = float(x.std(ddof=1))
    half = float(stats.t.ppf(0.5 + confidence / 2, n - 1)) * sd / math.sqrt(n)
    return MeanCI(n, mean, sd, (mean - half, mean + half))
