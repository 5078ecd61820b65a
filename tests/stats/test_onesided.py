"""The probe statistics: one-sided paired tests equal scipy's, the sensitivity CI is
Clopper-Pearson (numbers recorded from scipy 1.17.1)."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats as sps

from legal_judge.stats import StatisticsError, moved_share, one_sided_paired_test, paired_test

X = [4.1, 3.6, 4.4, 3.9, 2.8, 4.0, 3.7, 4.6, 3.3, 3.5, 4.2, 3.9, 3.1, 4.3, 3.8]
Y = [3.9, 3.8, 4.1, 3.6, 3.0, 4.1, 3.3, 4.2, 3.4, 3.6, 3.9, 3.7, 3.3, 4.0, 3.5]
ORIG = [5, 5, 4, 5, 5, 4, 5, 5, 5, 4, 5, 5]
DEGR = [1, 2, 0, 1, 2, 1, 0, 1, 3, 1, 2, 1]


def test_t_route_equals_scipy_one_sided() -> None:
    res = one_sided_paired_test(X, Y, method="t-test")
    ref = sps.ttest_rel(X, Y, alternative="greater")
    assert res.test_used == "paired t-test" and res.alternative == "greater"
    assert res.p_value == pytest.approx(ref.pvalue, rel=1e-12)
    assert res.p_value == pytest.approx(0.034854087722334816, rel=1e-12)  # recorded
    assert res.statistic == pytest.approx(1.9639610121239324, rel=1e-12)
    two = paired_test(X, Y, method="t-test")
    assert res.ci95 == two.ci95 and res.effect_size == two.effect_size
    assert res.p_two_sided == two.p_value
    less = one_sided_paired_test(X, Y, method="t-test", alternative="less")
    assert less.p_value == pytest.approx(sps.ttest_rel(X, Y, alternative="less").pvalue)


def test_wilcoxon_route_equals_scipy_one_sided() -> None:
    res = one_sided_paired_test(X, Y, method="wilcoxon")
    # Differences are rounded to 12 decimals (DESIGN: 0.1 + 0.2 - 0.3 is no change), so that
    # equal differences are tied ranks; scipy on the raw float differences would rank them apart.
    d = np.round(np.subtract(X, Y), 12)
    ref = sps.wilcoxon(d, alternative="greater")
    assert res.p_value == pytest.approx(ref.pvalue, rel=1e-12)
    assert res.p_value == pytest.approx(0.01953403093400054, rel=1e-12)  # recorded
    assert res.statistic == 96.0 and res.effect_size_kind == "rank_biserial"
    big = one_sided_paired_test(ORIG, DEGR, method="wilcoxon")
    assert big.p_value == pytest.approx(0.000244140625, rel=1e-12)  # exact: 1 / 2**12


def test_auto_follows_the_dimension_rule_and_no_movement_has_p_one() -> None:
    assert one_sided_paired_test(ORIG, DEGR).test_used == paired_test(ORIG, DEGR).test_used
    flat = one_sided_paired_test([3.0] * 12, [3.0] * 12)
    assert flat.test_used == "none" and flat.p_value == 1.0 and flat.statistic is None
    # Every pair moved by the same amount: t is undefined, Wilcoxon runs (as for dimensions).
    same = one_sided_paired_test([4.0] * 10, [2.0] * 10)
    assert same.test_used == "wilcoxon signed-rank" and same.p_value == pytest.approx(2 ** -10)


def test_sensitivity_is_the_share_that_moved_a_step_with_clopper_pearson() -> None:
    orig = ORIG + [5]
    degr = DEGR + [4.5]  # moved, but less than one scale step
    share = moved_share(orig, degr, step=1.0)
    assert (share.k, share.n) == (12, 13)
    ci = sps.binomtest(12, 13).proportion_ci(method="exact")
    assert share.ci95 == pytest.approx((ci.low, ci.high), rel=1e-12)
    assert moved_share([3, 3], [4, 2], step=1, direction="less").k == 1
    assert moved_share([5, 4], [4, 3], step=1).k == 2  # exactly one step counts
    recorded = sps.binomtest(11, 13).proportion_ci(method="exact")
    assert (recorded.low, recorded.high) == pytest.approx((0.5455289443234423,
                                                           0.9807933280174715), rel=1e-12)
    with pytest.raises(StatisticsError, match="step must be positive"):
        moved_share(orig, degr, step=0)


def test_single_pair_has_no_p_value_and_no_effect() -> None:
    # Issue 28: one pair is not evidence; p was 1.0 and the effect +1 ("large").
    one = one_sided_paired_test([4.0], [2.0])
    assert (one.p_value, one.p_two_sided, one.effect_size, one.test_used) == (
        None, None, None, "none")
