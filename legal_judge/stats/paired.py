"""Paired score differences: the audit's per-dimension test, its power and its noise floor.

Conventions (DESIGN.md, "Statistics conventions"): ``d_i = a_i - b_i`` with ``a`` the variant
carrying the attribute; the 95% CI is ``mean ± t(0.975, n-1)·sd/√n`` (BCa bootstrap as an option);
the t-test is ``scipy.stats.ttest_rel`` with Cohen's ``d_z``; Wilcoxon is ``scipy.stats.wilcoxon``
with scipy's defaults and the matched-pairs rank-biserial ``r``; ``auto`` picks Wilcoxon when
Shapiro-Wilk rejects normality of the differences.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass
from typing import Literal

import numpy as np
from scipy import optimize, stats

from legal_judge.stats._common import (
    ArrayLike,
    FloatArray,
    StatisticsError,
    check_choice,
    complete_pairs,
    interpret_effect,
    rounded_differences,
)

__all__ = [
    "NoiseFloor",
    "PairedFigures",
    "PairedResult",
    "minimum_detectable_effect",
    "noise_floor",
    "paired_test",
]

PairedMethod = Literal["auto", "t-test", "wilcoxon"]
CiMethod = Literal["t", "bca"]

T_TEST = "paired t-test"
WILCOXON = "wilcoxon signed-rank"
NO_TEST = "none"
_BOOT_CELLS = 4_000_000


@dataclass(frozen=True, slots=True)
class PairedFigures:
    """The figures every paired comparison of two score vectors reports (two- or one-sided).

    ``test_used`` is ``"paired t-test"``, ``"wilcoxon signed-rank"`` or ``"none"`` (degenerate data:
    then ``statistic`` is None and ``note`` says why). A single pair is not evidence: ``sd``,
    ``ci95``, ``p_value`` and ``effect_size`` are None (undefined, where scipy gives nan).
    """

    n: int
    n_dropped: int
    n_nonzero: int
    mean_difference: float
    sd: float | None
    ci95: tuple[float, float] | None
    test_used: str
    statistic: float | None
    p_value: float | None
    effect_size: float | None
    effect_size_kind: str
    interpretation: str
    normality_p: float | None
    note: str | None


@dataclass(frozen=True, slots=True)
class PairedResult(PairedFigures):
    """The paired comparison of two score vectors.

    ``test_used`` is ``"paired t-test"``, ``"wilcoxon signed-rank"`` or ``"none"`` (degenerate data:
    then ``statistic`` is None and ``note`` says why). Every difference zero: ``p_value`` 1.0 and
    effect 0 (DESIGN.md). A single pair is not evidence: ``p_value`` and ``effect_size`` are None
    (undefined, where scipy gives nan), never 1.0.
    ``ci_method`` is ``"t"``, ``"bca"``, ``"degenerate"`` (every difference equal: sd = 0, the CI
    collapses to the mean) or ``"none"``: with a single pair the sd and the CI are undefined and
    ``sd`` and ``ci95`` are None, never a zero-width interval.
    """

    ci_method: str


@dataclass(frozen=True, slots=True)
class NoiseFloor:
    """How much a score moves when the same input is judged twice."""

    n: int
    n_dropped: int
    n_changed: int
    changed_share: float
    mean_abs_diff: float


def paired_test(
    a: ArrayLike,
    b: ArrayLike,
    *,
    method: PairedMethod = "auto",
    alpha: float = 0.05,
    ci_method: CiMethod = "t",
    n_boot: int = 9999,
    seed: int | None = 0,
) -> PairedResult:
    """Compare paired scores ``a`` and ``b`` (difference ``a - b``).

    Pairs with a missing score (NaN or None) are dropped and counted in ``n_dropped``.

    Degenerate data never raises once one complete pair exists. With ``n == 1`` no test runs
    (``test_used="none"``): the sd, the CI, the p-value and the effect size are all undefined
    (None; scipy's ``ttest_rel`` gives nan for each), since one pair is not evidence of anything.
    With every difference zero (n > 1) no test runs: p 1.0, effect 0, CI ``[0, 0]``.
    When every difference is the same non-zero value the t statistic is undefined (sd = 0), so the
    Wilcoxon test runs whatever ``method`` says and ``note`` records it.

    Args:
        a: Scores of the variant carrying the attribute.
        b: Scores of the baseline variant, same length and order.
        method: ``auto`` (Wilcoxon when Shapiro-Wilk p < ``alpha``, else the t-test),
            ``t-test`` or ``wilcoxon``.
        alpha: Threshold of the Shapiro-Wilk normality check used by ``auto``.
        ci_method: ``t`` (``mean ± t(0.975, n-1)·sd/√n``) or ``bca`` (scipy bootstrap, BCa).
        n_boot: Bootstrap resamples for ``bca``.
        seed: Seed of the bootstrap generator (recorded so a report can be reproduced).

    Returns:
        A :class:`PairedResult`.

    Raises:
        StatisticsError: No complete pair, mismatched lengths or an unknown option.
    """
    check_choice(method, ("auto", "t-test", "wilcoxon"), name="method")
    check_choice(ci_method, ("t", "bca"), name="ci_method")
    x, y, dropped = complete_pairs(a, b)
    if x.size == 0:
        raise StatisticsError(
            "no complete pair: every pair has a missing score",
            fix="check the judge errors of this dimension; at least one scored pair is needed",
        )
    d = _differences(x, y)
    n = int(d.size)
    n_nonzero = int(np.count_nonzero(d))
    mean = float(d.mean())
    if n == 1:
        return _single_pair(d, dropped)
    if n_nonzero == 0:
        return _degenerate(d, dropped, "all differences are zero: no test; p set to 1.0")
    sd = float(d.std(ddof=1))
    constant = bool(np.ptp(d) == 0)
    normality_p = None if constant or n < 3 else _shapiro_p(d)
    test, note = _choose_test(method, constant=constant, normality_p=normality_p, alpha=alpha)
    ci, used_ci = _ci(d, constant=constant, ci_method=ci_method, n_boot=n_boot, seed=seed)
    if test == T_TEST:
        # scipy's ttest_rel(a, b) is ttest_1samp(a - b, 0); the differences are already at hand.
        res = stats.ttest_1samp(d, 0.0)
        statistic, p_value = float(res.statistic), float(res.pvalue)
        effect, kind = mean / sd, "cohen_d_z"
    else:
        wil = stats.wilcoxon(d)
        statistic, p_value = float(wil.statistic), float(wil.pvalue)
        effect, kind = rank_biserial_paired(d), "rank_biserial"
    return PairedResult(
        n=n,
        n_dropped=dropped,
        n_nonzero=n_nonzero,
        mean_difference=mean,
        sd=sd,
        ci95=ci,
        ci_method=used_ci,
        test_used=test,
        statistic=statistic,
        p_value=p_value,
        effect_size=float(effect),
        effect_size_kind=kind,
        interpretation=interpret_effect(effect, kind),
        normality_p=normality_p,
        note=note,
    )


def _differences(x: FloatArray, y: FloatArray) -> FloatArray:
    return rounded_differences(x, y)


def rank_biserial_paired(d: FloatArray) -> float:
    """Matched-pairs rank-biserial ``r = (R+ - R-)/(R+ + R-)`` over the non-zero differences."""
    nz = d[d != 0]
    if nz.size == 0:
        return 0.0
    ranks = stats.rankdata(np.abs(nz))
    r_plus = float(ranks[nz > 0].sum())
    r_minus = float(ranks[nz < 0].sum())
    return (r_plus - r_minus) / (r_plus + r_minus)


def _single_pair(d: FloatArray, dropped: int) -> PairedResult:
    # One difference has no variance: sd, CI, t, its p-value and d_z are undefined (scipy gives
    # nan), not zero and not 1.0. A p of 1.0 would read as "tested, no difference" and a rank-
    # biserial of +-1 as a "large" effect: one pair is evidence of neither.
    mean = float(d[0])
    return PairedResult(
        n=1,
        n_dropped=dropped,
        n_nonzero=int(mean != 0),
        mean_difference=mean,
        sd=None,
        ci95=None,
        ci_method="none",
        test_used=NO_TEST,
        statistic=None,
        p_value=None,
        effect_size=None,
        effect_size_kind="none",
        interpretation="undefined",
        normality_p=None,
        note="n = 1: no variance, so no sd, no CI, no test, no p-value and no effect size",
    )


def _degenerate(d: FloatArray, dropped: int, note: str) -> PairedResult:
    mean = float(d.mean())
    return PairedResult(
        n=int(d.size),
        n_dropped=dropped,
        n_nonzero=int(np.count_nonzero(d)),
        mean_difference=mean,
        sd=float(d.std(ddof=1)),
        ci95=(mean, mean),
        ci_method="degenerate",
        test_used=NO_TEST,
        statistic=None,
        p_value=1.0,
        effect_size=0.0,
        effect_size_kind="none",
        interpretation="negligible",
        normality_p=None,
        note=note,
    )


def _shapiro_p(d: FloatArray) -> float:
    with warnings.catch_warnings():
        # scipy warns that p may be inaccurate above n = 5000; the choice of test only needs
        # "clearly non-normal or not", which stays reliable at that size.
        warnings.simplefilter("ignore", UserWarning)
        return float(stats.shapiro(d).pvalue)


def _choose_test(
    method: str, *, constant: bool, normality_p: float | None, alpha: float
) -> tuple[str, str | None]:
    if constant:
        return WILCOXON, "all differences equal and non-zero: t undefined (sd = 0), Wilcoxon used"
    if method == "auto":
        non_normal = normality_p is not None and normality_p < alpha
        return (WILCOXON if non_normal else T_TEST), None
    return (T_TEST if method == "t-test" else WILCOXON), None


def _ci(
    d: FloatArray, *, constant: bool, ci_method: str, n_boot: int, seed: int | None
) -> tuple[tuple[float, float], str]:
    mean = float(d.mean())
    if constant:
        return (mean, mean), "degenerate"
    if ci_method == "bca":
        res = stats.bootstrap(
            (d,),
            np.mean,
            method="BCa",
            n_resamples=n_boot,
            # Resamples (and BCa's jackknife) are n x batch arrays: cap them near 32 MB.
            batch=max(1, _BOOT_CELLS // d.size),
            rng=np.random.default_rng(seed),
        )
        low, high = float(res.confidence_interval.low), float(res.confidence_interval.high)
        if math.isfinite(low) and math.isfinite(high):
            return (low, high), "bca"
        # BCa is undefined on some tiny samples (acceleration 0/0); the t interval still is.
    ci = stats.ttest_1samp(d, 0.0).confidence_interval(confidence_level=0.95)
    return (float(ci.low), float(ci.high)), "t"


def minimum_detectable_effect(n: int, *, alpha: float = 0.05, power: float = 0.8) -> float:
    """Smallest ``d_z`` a two-sided paired t-test on ``n`` pairs detects with ``power``.

    Power is computed exactly from the noncentral t distribution (``scipy.stats.nct``) and solved
    for ``d_z`` with ``scipy.optimize.brentq``.

    Args:
        n: Number of complete pairs (at least 2).
        alpha: Two-sided significance level.
        power: Target power, strictly between ``alpha`` and 1.

    Returns:
        The minimum detectable effect in ``d_z`` units.

    Raises:
        StatisticsError: ``n < 2`` or a power/alpha outside their range.
    """
    if n < 2:
        raise StatisticsError(
            f"the minimum detectable effect needs at least 2 pairs, got {n}",
            fix="collect more complete pairs",
        )
    if not (0.0 < alpha < power < 1.0):
        raise StatisticsError(
            f"need 0 < alpha < power < 1, got alpha={alpha}, power={power}",
            fix="use for example alpha=0.05 and power=0.8",
        )
    df = n - 1
    t_crit = float(stats.t.ppf(1.0 - alpha / 2.0, df))

    def gap(d: float) -> float:
        nc = d * math.sqrt(n)
        # Lower tail as sf(t, df, -nc): equal to cdf(-t, df, nc), but scipy's cdf returns NaN
        # far in that tail (e.g. df=199, nc=11), where sf returns the correct 0.
        achieved = stats.nct.sf(t_crit, df, nc) + stats.nct.sf(t_crit, df, -nc)
        return float(achieved) - power

    upper = 1.0
    while gap(upper) < 0:
        upper *= 2.0
    return float(optimize.brentq(gap, 1e-9, upper, xtol=1e-12))


def noise_floor(first: ArrayLike, second: ArrayLike) -> NoiseFloor:
    """Summarise repeated judgments of the same input (the run-to-run noise).

    Args:
        first: Scores of the first judgment of each input.
        second: Scores of the repeat, same order; missing scores drop the pair.

    Returns:
        A :class:`NoiseFloor` with the share of changed scores and the mean absolute change.
    """
    x, y, dropped = complete_pairs(first, second)
    if x.size == 0:
        raise StatisticsError(
            "no complete repeat pair for the noise floor",
            fix="judge at least one variant twice without errors",
        )
    diff = np.abs(_differences(x, y))
    changed = int(np.count_nonzero(diff))
    return NoiseFloor(
        n=int(x.size),
        n_dropped=dropped,
        n_changed=changed,
        changed_share=changed / x.size,
        mean_abs_diff=float(diff.mean()),
    )
