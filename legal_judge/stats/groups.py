"""Independent groups (production traffic audit) and dispersion across ensemble judges."""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass
from typing import Literal

import numpy as np
from scipy import stats

from legal_judge.stats._common import (
    ArrayLike,
    FloatArray,
    StatisticsError,
    as_float_array,
    check_choice,
    interpret_effect,
)

__all__ = ["Dispersion", "GroupResult", "score_dispersion", "two_group_test"]

GroupMethod = Literal["auto", "welch", "mann-whitney"]


@dataclass(frozen=True, slots=True)
class GroupResult:
    """Two independent groups compared; the difference and CI are always ``mean(x) - mean(y)``
    with the Welch-Satterthwaite interval, whichever test ran.

    ``test_used`` is ``"welch t-test"`` (effect ``hedges_g``) or ``"mann-whitney u"`` (effect
    ``rank_biserial`` = ``2U/(n_x n_y) - 1``, positive when ``x`` tends to be larger).
    """

    n_x: int
    n_y: int
    n_dropped: int
    mean_x: float
    mean_y: float
    mean_difference: float
    ci95: tuple[float, float]
    test_used: str
    statistic: float
    p_value: float
    effect_size: float
    effect_size_kind: str
    interpretation: str


@dataclass(frozen=True, slots=True)
class Dispersion:
    """Spread of one item's scores across judges (missing judges ignored)."""

    n: int
    range: float
    sd: float


def _clean(values: ArrayLike, name: str) -> tuple[FloatArray, int]:
    arr = as_float_array(values, name=name)
    keep = ~np.isnan(arr)
    return arr[keep], int(arr.size - keep.sum())


def two_group_test(x: ArrayLike, y: ArrayLike, *, method: GroupMethod = "auto") -> GroupResult:
    """Compare the scores of two independent groups (observational: no causal claim).

    Args:
        x: Scores of the first group (NaN/None dropped).
        y: Scores of the second group.
        method: ``welch`` (``scipy.stats.ttest_ind(equal_var=False)``), ``mann-whitney``
            (``scipy.stats.mannwhitneyu``, two-sided) or ``auto`` (Mann-Whitney when Shapiro-Wilk
            rejects normality at 0.05 in either group of 3 or more, else Welch).

    Returns:
        A :class:`GroupResult`.

    Raises:
        StatisticsError: A group with fewer than two scores, or both groups constant.
    """
    check_choice(method, ("auto", "welch", "mann-whitney"), name="method")
    gx, dx = _clean(x, "x")
    gy, dy = _clean(y, "y")
    if gx.size < 2 or gy.size < 2:
        raise StatisticsError(
            f"each group needs at least 2 scores (got {gx.size} and {gy.size})",
            fix="widen the time window or group by a coarser attribute",
        )
    if np.ptp(gx) == 0 and np.ptp(gy) == 0:
        raise StatisticsError(
            "both groups are constant: the Welch interval is undefined",
            fix="nothing to test; report the two means directly",
        )
    if method == "auto":
        method = "mann-whitney" if _non_normal(gx) or _non_normal(gy) else "welch"
    welch = stats.ttest_ind(gx, gy, equal_var=False)
    ci = welch.confidence_interval(confidence_level=0.95)
    if method == "welch":
        test, statistic, p = "welch t-test", float(welch.statistic), float(welch.pvalue)
        effect, kind = _hedges_g(gx, gy), "hedges_g"
    else:
        mw = stats.mannwhitneyu(gx, gy, alternative="two-sided")
        test, statistic, p = "mann-whitney u", float(mw.statistic), float(mw.pvalue)
        effect, kind = 2.0 * statistic / (gx.size * gy.size) - 1.0, "rank_biserial"
    mean_x, mean_y = float(gx.mean()), float(gy.mean())
    return GroupResult(
        n_x=int(gx.size),
        n_y=int(gy.size),
        n_dropped=dx + dy,
        mean_x=mean_x,
        mean_y=mean_y,
        mean_difference=mean_x - mean_y,
        ci95=(float(ci.low), float(ci.high)),
        test_used=test,
        statistic=statistic,
        p_value=p,
        effect_size=effect,
        effect_size_kind=kind,
        interpretation=interpret_effect(effect, kind),
    )


def _non_normal(g: FloatArray) -> bool:
    if g.size < 3 or np.ptp(g) == 0:
        return False
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # n > 5000 accuracy note; see paired.py
        return bool(stats.shapiro(g).pvalue < 0.05)


def _hedges_g(x: FloatArray, y: FloatArray) -> float:
    nx, ny = x.size, y.size
    pooled = math.sqrt(((nx - 1) * x.var(ddof=1) + (ny - 1) * y.var(ddof=1)) / (nx + ny - 2))
    d = (x.mean() - y.mean()) / pooled
    # Small-sample correction J = 1 - 3/(4(nx+ny) - 9), as pingouin.compute_effsize('hedges').
    return float(d * (1.0 - 3.0 / (4.0 * (nx + ny) - 9.0)))


def score_dispersion(scores: ArrayLike, *, ddof: int = 1) -> Dispersion:
    """Range and standard deviation of one item's scores across the ensemble judges.

    Args:
        scores: One score per judge; NaN/None (an INCONCLUSIVE judge) is ignored.
        ddof: Delta degrees of freedom of the sd (1: sample sd, as everywhere else here).

    Returns:
        A :class:`Dispersion`; with a single valid score, range and sd are 0.0.
    """
    s, _ = _clean(scores, "scores")
    if s.size == 0:
        raise StatisticsError("no valid judge score for this item", fix="check judge errors")
    sd = float(s.std(ddof=ddof)) if s.size > ddof else 0.0
    return Dispersion(n=int(s.size), range=float(np.ptp(s)), sd=sd)
