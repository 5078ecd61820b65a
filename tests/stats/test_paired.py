"""Paired audit statistics against fixed reference numbers (scipy / pingouin / statsmodels)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from legal_judge.stats import (
    StatisticsError,
    flag,
    minimum_detectable_effect,
    noise_floor,
    paired_test,
)

# Continuous scores; d = A - B has no zeros and no ties, Shapiro p ~ 1 (auto -> t-test).
A = [3.9, 2.7, 4.8, 3.1, 4.6, 2.2, 3.8, 4.5, 3.0, 2.8, 4.4, 3.6]
B = [3.1, 3.0, 3.6, 2.6, 2.5, 2.9, 2.9, 3.0, 2.8, 2.9, 3.3, 3.0]
# Integer rubric scores with zeros and ties; Shapiro rejects (auto -> Wilcoxon).
IA = [4, 3, 5, 4, 2, 3, 4, 5, 3, 4, 4, 2, 5, 3, 4, 4]
IB = [3, 3, 4, 4, 2, 2, 3, 4, 3, 3, 4, 2, 4, 3, 3, 4]

REL, ABS = 1e-10, 1e-12


def test_t_test_matches_scipy_ttest_rel() -> None:
    r = paired_test(A, B, method="t-test")
    # scipy.stats.ttest_rel(A, B): statistic, pvalue, confidence_interval()
    assert r.test_used == "paired t-test"
    assert r.statistic == pytest.approx(2.836832573067902, rel=REL, abs=ABS)
    assert r.p_value == pytest.approx(0.016173255501607264, rel=REL, abs=ABS)
    assert r.ci95 == pytest.approx((0.14569094502027857, 1.1543090549797215), rel=REL, abs=ABS)
    assert r.ci_method == "t"
    # numpy: mean(d), std(d, ddof=1), mean/sd
    assert r.mean_difference == pytest.approx(0.65, rel=REL, abs=ABS)
    assert r.sd == pytest.approx(0.7937253933193771, rel=REL, abs=ABS)
    assert r.effect_size == pytest.approx(0.8189230248533258, rel=REL, abs=ABS)
    assert r.effect_size_kind == "cohen_d_z"
    assert r.interpretation == "large"
    # scipy.stats.shapiro(A - B).pvalue
    assert r.normality_p == pytest.approx(0.9999686468777202, rel=1e-6)
    assert (r.n, r.n_dropped, r.n_nonzero) == (12, 0, 12)


def test_wilcoxon_matches_scipy_and_pingouin() -> None:
    r = paired_test(A, B, method="wilcoxon")
    # scipy.stats.wilcoxon(A, B) -> (10.0, 0.02099609375); pingouin.wilcoxon(A, B).RBC
    assert r.test_used == "wilcoxon signed-rank"
    assert r.statistic == 10.0
    assert r.p_value == pytest.approx(0.02099609375, rel=REL, abs=ABS)
    assert r.effect_size == pytest.approx(0.7435897435897436, rel=REL, abs=ABS)
    assert r.effect_size_kind == "rank_biserial"
    assert r.interpretation == "large"
    # The CI stays the t interval of the mean difference whichever test ran.
    assert r.ci95 == pytest.approx((0.14569094502027857, 1.1543090549797215), rel=REL, abs=ABS)


def test_auto_picks_t_for_normal_differences() -> None:
    assert paired_test(A, B).test_used == "paired t-test"


def test_auto_picks_wilcoxon_with_zeros_and_ties() -> None:
    r = paired_test(IA, IB)
    # scipy.stats.shapiro(IA - IB).pvalue = 4.339517974443173e-05 < 0.05
    assert r.normality_p == pytest.approx(4.339517974443173e-05, rel=1e-6)
    assert r.test_used == "wilcoxon signed-rank"
    # scipy.stats.wilcoxon(IA, IB) with its defaults (zeros dropped)
    assert r.statistic == 0.0
    assert r.p_value == pytest.approx(0.0046777349810472576, rel=REL, abs=ABS)
    # pingouin.wilcoxon(IA, IB).RBC: every non-zero difference is positive
    assert r.effect_size == 1.0
    assert r.n_nonzero == 8
    # scipy.stats.ttest_rel(IA, IB).confidence_interval()
    assert r.ci95 == pytest.approx((0.22483104689218741, 0.7751689531078125), rel=REL, abs=ABS)


def test_integer_t_test_matches_scipy() -> None:
    r = paired_test(IA, IB, method="t-test")
    # scipy.stats.ttest_rel(IA, IB)
    assert r.statistic == pytest.approx(3.8729833462074175, rel=REL, abs=ABS)
    assert r.p_value == pytest.approx(0.0015017735386984273, rel=REL, abs=ABS)


def test_bca_interval_matches_scipy_bootstrap() -> None:
    r = paired_test(A, B, ci_method="bca", n_boot=9999, seed=0)
    # scipy.stats.bootstrap((A - B,), np.mean, method="BCa", n_resamples=9999,
    #                       rng=np.random.default_rng(0)).confidence_interval
    assert r.ci_method == "bca"
    assert r.ci95 == pytest.approx((0.22500000000000006, 1.0666666666666669), rel=REL, abs=ABS)


def test_all_differences_zero_runs_no_test() -> None:
    r = paired_test([3, 4, 5, 2], [3, 4, 5, 2])
    assert r.test_used == "none"
    assert r.statistic is None
    assert r.p_value == 1.0
    assert r.effect_size == 0.0
    assert r.interpretation == "negligible"
    assert r.ci95 == (0.0, 0.0)
    assert r.note is not None and "zero" in r.note


def test_single_pair_runs_no_test_and_reports_no_sd_or_ci() -> None:
    # Issue 20, item 17: was sd 0.0, CI (1.5, 1.5) and a rank-biserial of 0.
    # Issue 28: one pair is not evidence: p and the effect were 1.0; scipy gives nan for both.
    r = paired_test([4.0], [2.5])
    ref = __import__("scipy.stats", fromlist=["ttest_rel"]).ttest_rel([4.0], [2.5])
    assert math.isnan(ref.pvalue) and math.isnan(ref.statistic)
    assert (r.n, r.test_used, r.statistic, r.p_value) == (1, "none", None, None)
    assert r.mean_difference == 1.5
    assert r.sd is None and r.ci95 is None and r.ci_method == "none"
    assert (r.effect_size, r.effect_size_kind, r.interpretation) == (None, "none", "undefined")
    assert r.note is not None and "n = 1" in r.note


def test_single_pair_negative_zero_and_after_dropping_missing_pairs() -> None:
    neg = paired_test([2.0], [4.0], ci_method="bca")
    assert (neg.effect_size, neg.p_value, neg.sd, neg.ci95) == (None, None, None, None)
    zero = paired_test([3.0], [3.0])
    assert (zero.effect_size, zero.p_value, zero.effect_size_kind, zero.n_nonzero) == (
        None, None, "none", 0)
    assert zero.ci95 is None
    left = paired_test([4.0, None, 5.0], [3.0, 2.0, None])  # one complete pair of three
    assert (left.n, left.n_dropped, left.p_value, left.effect_size, left.ci95) == (
        1, 2, None, None, None)
    assert not flag(left.p_value, left.effect_size, significance=0.05, min_effect=0.2)


def test_one_nonzero_difference() -> None:
    t = paired_test([3, 3, 3, 3, 4], [3, 3, 3, 3, 3], method="t-test")
    # scipy.stats.ttest_rel([3,3,3,3,4], [3,3,3,3,3])
    assert t.statistic == pytest.approx(1.0, rel=REL, abs=ABS)
    assert t.p_value == pytest.approx(0.37390096630005887, rel=REL, abs=ABS)
    assert t.ci95 == pytest.approx((-0.3552890210395587, 0.7552890210395586), rel=REL, abs=ABS)
    assert t.effect_size == pytest.approx(
        0.2 / math.sqrt(0.2), rel=REL, abs=ABS
    )  # mean 0.2, sd sqrt(0.2)
    w = paired_test([3, 3, 3, 3, 4], [3, 3, 3, 3, 3], method="wilcoxon")
    # scipy.stats.wilcoxon -> (0.0, 1.0); the single non-zero difference is positive: r = 1
    assert (w.statistic, w.p_value, w.effect_size) == (0.0, 1.0, 1.0)
    # auto: shapiro p = 0.00013097817774592973 -> Wilcoxon
    assert paired_test([3, 3, 3, 3, 4], [3, 3, 3, 3, 3]).test_used == "wilcoxon signed-rank"


def test_constant_nonzero_differences_fall_back_to_wilcoxon() -> None:
    r = paired_test([4.0, 5, 3, 4], [2.0, 3, 1, 2], method="t-test")
    # scipy.stats.wilcoxon([2, 2, 2, 2]) -> (0.0, 0.125)
    assert r.test_used == "wilcoxon signed-rank"
    assert r.p_value == pytest.approx(0.125, rel=REL, abs=ABS)
    assert r.effect_size == 1.0
    assert r.ci95 == (2.0, 2.0)
    assert r.note is not None and "sd = 0" in r.note


def test_missing_scores_drop_the_pair_and_are_counted() -> None:
    a = [*A, None, 3.0, float("nan")]
    b = [*B, 2.0, None, 4.0]
    r = paired_test(a, b, method="t-test")
    assert (r.n, r.n_dropped) == (12, 3)
    assert r.p_value == pytest.approx(0.016173255501607264, rel=REL, abs=ABS)


def test_no_complete_pair_and_bad_options_raise() -> None:
    with pytest.raises(StatisticsError, match="no complete pair"):
        paired_test([None, 1.0], [2.0, None])
    with pytest.raises(StatisticsError, match="differ in length"):
        paired_test([1.0, 2.0], [1.0])
    with pytest.raises(StatisticsError, match="unknown method"):
        paired_test(A, B, method="sign")  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("n", "expected"),
    [
        # statsmodels TTestPower().solve_power(nobs=n, alpha=0.05, power=0.8,
        #                                      alternative="two-sided")
        (10, 0.9960019107624178),
        (30, 0.5292357045238948),
        (60, 0.36770432031149547),
        (200, 0.19906465946973934),
    ],
)
def test_minimum_detectable_effect_matches_statsmodels(n: int, expected: float) -> None:
    assert minimum_detectable_effect(n) == pytest.approx(expected, abs=2e-6)


def test_minimum_detectable_effect_needs_two_pairs() -> None:
    with pytest.raises(StatisticsError):
        minimum_detectable_effect(1)
    assert minimum_detectable_effect(2) > minimum_detectable_effect(3)


def test_noise_floor() -> None:
    nf = noise_floor([3, 4, 5, 2, None, 4], [3, 5, 5, 1, 3, 4])
    assert (nf.n, nf.n_dropped, nf.n_changed) == (5, 1, 2)
    assert nf.changed_share == pytest.approx(0.4)
    assert nf.mean_abs_diff == pytest.approx(0.4)


def test_float_noise_is_not_a_difference() -> None:
    rng = np.random.default_rng(3)
    a = rng.normal(3.0, 1.0, 500)
    r = paired_test(a, a - 0.5)
    assert r.mean_difference == pytest.approx(0.5)
    assert r.test_used == "wilcoxon signed-rank"  # constant differences despite float noise
    zero = paired_test([0.1 + 0.2, 1.0, 2.0], [0.3, 1.0, 2.0])
    assert zero.test_used == "none" and zero.n_nonzero == 0


def test_audit_analysis_copes_with_a_single_pair() -> None:
    # Consumers of paired_test with n = 1 (the library allows min_complete_pairs=1).
    from legal_judge.audit.analysis import PairRow, analyse

    row = PairRow(dimension="authority", pair_id="p1", variant_a_input="a", variant_a_score=4.0,
                  variant_b_input="b", variant_b_score=3.0, repeat_score=3.0)
    (st,) = analyse([row], min_complete_pairs=1)
    assert st.result.ci95 is None and st.result.sd is None and st.result.effect_size is None
    assert st.result.p_value is None and st.p_adjusted is None  # issue 28: was 1.0
    assert st.mde is None and not st.flagged
    assert st.noise is not None and st.noise["sd_of_repeat_difference"] is None
