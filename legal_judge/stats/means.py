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
    """``mean ± t(0.975, n-1)·sd/√n``; with n < 2 the interval collapses to the mean."""

    n: int
    mean: float
    sd: float
    ci95: tuple[float, float]


def mean_ci(values: npt.ArrayLike, *, confidence: float = 0.95) -> MeanCI:
    """Mean and t confidence interval of ``values`` (NaNs dropped).

    Args:
        values: The sample.
        confidence: Confidence level.

    Returns:
        A :class:`MeanCI`; an empty sample gives NaN mean and interval.
    """
    x = np.asarray(values, dtype=float)
    x = x[~np.isnan(x)]
    n = int(x.size)
    if n == 0:
        nan = float("nan")
        return MeanCI(0, nan, nan, (nan, nan))
    mean = float(x.mean())
    if n < 2:
        return MeanCI(n, mean, 0.0, (mean, mean))
    sd = float(x.std(ddof=1))
    half = float(stats.t.ppf(0.5 + confidence / 2, n - 1)) * sd / math.sqrt(n)
    return MeanCI(n, mean, sd, (mean - half, mean + half))
