"""Discrimination probes: a one-sided paired test that the score moved, and the share that moved.

Conventions (DESIGN.md, "Statistics conventions"): ``d_i = score(original) - score(degraded)``; the
test is one-sided (``d > 0`` for a probe whose score must drop) with the same t/Wilcoxon rule as the
bias dimensions (:func:`~legal_judge.stats.paired.paired_test` picks the test, the CI and the effect
size; the p-value is then ``scipy.stats.ttest_1samp(d, 0, alternative=...)`` or
``scipy.stats.wilcoxon(d, alternative=...)``). Sensitivity is the share of pairs whose score moved
in the expected direction by at least one scale step, with the Clopper-Pearson 95% CI.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Literal

from scipy import stats

from legal_judge.stats._common import (
    ArrayLike,
    check_choice,
    check_positive,
    paired_differences,
)
from legal_judge.stats.paired import (
    T_TEST,
    WILCOXON,
    PairedFigures,
    PairedMethod,
    paired_test,
)
from legal_judge.stats.proportions import proportion_ci

__all__ = ["MovedShare", "OneSidedResult", "moved_share", "one_sided_paired_test"]

Alternative = Literal["greater", "less"]
_TOL = 1e-9


@dataclass(frozen=True, slots=True)
class OneSidedResult(PairedFigures):
    """A one-sided paired test of ``a - b`` (``alternative`` ``greater``: a > b).

    ``ci95``, ``effect_size`` and ``test_used`` are :func:`paired_test`'s (two-sided 95% CI);
    ``p_value`` is one-sided and ``p_two_sided`` is :func:`paired_test`'s. With no difference at
    all no test runs and ``p_value`` is 1.0; with a single pair ``sd``, ``ci95``, both p-values and
    the effect size are None (undefined).
    """

    alternative: str
    p_two_sided: float | None


@dataclass(frozen=True, slots=True)
class MovedShare:
    """How many pairs moved by at least ``step`` in the expected direction, with its exact CI."""

    k: int
    n: int
    share: float | None
    ci95: tuple[float, float] | None
    step: float
    direction: str
    ci_method: str = "clopper-pearson"


def one_sided_paired_test(a: ArrayLike, b: ArrayLike, *, alternative: Alternative = "greater",
                          method: PairedMethod = "auto", alpha: float = 0.05) -> OneSidedResult:
    """One-sided paired test of the difference ``a - b``.

    Args:
        a: Scores of the original answers.
        b: Scores of the degraded answers, same order (missing scores drop the pair).
        alternative: ``greater`` (the score drops from a to b) or ``less``.
        method: ``auto``, ``t-test`` or ``wilcoxon``, as :func:`paired_test`.
        alpha: Threshold of the Shapiro-Wilk check ``auto`` uses.

    Raises:
        StatisticsError: no complete pair, mismatched inputs, an unknown option.
    """
    check_choice(alternative, ("greater", "less"), name="alternative")
    base = paired_test(a, b, method=method, alpha=alpha)
    d, _ = paired_differences(a, b)
    statistic: float | None
    p: float | None
    if base.test_used == T_TEST:
        res = stats.ttest_1samp(d, 0.0, alternative=alternative)
        statistic, p = float(res.statistic), float(res.pvalue)
    elif base.test_used == WILCOXON:
        wil = stats.wilcoxon(d, alternative=alternative)
        statistic, p = float(wil.statistic), float(wil.pvalue)
    else:
        # No test: p follows paired_test (1.0 when nothing moved, None for a single pair).
        statistic, p = None, base.p_value
    # Every figure but the test's statistic and p-value is the two-sided test's.
    shared = {f.name: getattr(base, f.name) for f in fields(PairedFigures)}
    return OneSidedResult(**(shared | {"statistic": statistic, "p_value": p}),
                          alternative=alternative, p_two_sided=base.p_value)


def moved_share(a: ArrayLike, b: ArrayLike, *, step: float = 1.0,
                direction: Alternative = "greater") -> MovedShare:
    """Share of pairs with ``a - b >= step`` (``greater``) or ``<= -step`` (``less``).

    Args:
        a: Scores of the original answers.
        b: Scores of the degraded answers (missing scores drop the pair).
        step: One scale step (1 on a 0-5 rubric).
        direction: The expected direction of ``a - b``.

    Raises:
        StatisticsError: a step that is not positive, mismatched inputs.
    """
    check_choice(direction, ("greater", "less"), name="direction")
    check_positive(step, what="scale step",
                   fix="pass the smallest score difference that counts, e.g. 1")
    d, _ = paired_differences(a, b)
    moved = d >= step - _TOL if direction == "greater" else d <= -step + _TOL
    k, n = int(moved.sum()), int(d.size)
    if n == 0:
        return MovedShare(0, 0, None, None, step, direction)
    return MovedShare(k, n, k / n, proportion_ci(k, n, method="exact"), step, direction)
