"""Independent groups (traffic audit), dispersion and isotonic correction against references."""

from __future__ import annotations

import math

import numpy as np
import pytest

from legal_judge.stats import (
    StatisticsError,
    apply_isotonic,
    fit_isotonic,
    score_dispersion,
    two_group_test,
)

X = [3.2, 4.1, 2.8, 3.9, 4.4, 3.5, 2.9, 4.0, 3.7]
Y = [2.9, 3.1, 3.3, 2.6, 3.0, 2.4, 3.2, 2.8]
REL, ABS = 1e-12, 1e-14
WELCH_CI = (0.236166504622002, 1.16105571760022)  # scipy ttest_ind(equal_var=False) CI


def test_welch_matches_scipy_and_pingouin() -> None:
    r = two_group_test(X, Y, method="welch")
    # scipy.stats.ttest_ind(X, Y, equal_var=False) (pingouin.ttest(X, Y) agrees)
    assert r.statistic == pytest.approx(3.2716478992691727, rel=REL, abs=ABS)
    assert r.p_value == pytest.approx(0.0062439239117485, rel=REL, abs=ABS)
    assert r.ci95 == pytest.approx(WELCH_CI, rel=REL, abs=ABS)
    # pingouin.compute_effsize(X, Y, eftype="hedges")
    assert r.effect_size == pytest.approx(1.4591560478949515, rel=REL, abs=ABS)
    assert (r.effect_size_kind, r.interpretation) == ("hedges_g", "large")
    assert r.mean_difference == pytest.approx(np.mean(X) - np.mean(Y))


def test_mann_whitney_matches_scipy_and_pingouin() -> None:
    r = two_group_test(X, Y, method="mann-whitney")
    # scipy.stats.mannwhitneyu(X, Y, alternative="two-sided"); pingouin.mwu(X, Y).RBC
    assert r.statistic == 60.5
    assert r.p_value == pytest.approx(0.02068648721620012, rel=REL, abs=ABS)
    assert r.effect_size == pytest.approx(0.6805555555555556, rel=REL, abs=ABS)
    assert r.effect_size_kind == "rank_biserial"
    assert r.ci95 == pytest.approx(
        WELCH_CI, rel=REL, abs=ABS
    )  # difference in means, Welch interval


def test_auto_and_guards() -> None:
    assert two_group_test(X, [*Y, None]).test_used == "welch t-test"
    skewed = [1, 1, 1, 1, 1, 1, 1, 1, 5, 5.0]
    assert two_group_test(skewed, X).test_used == "mann-whitney u"
    with pytest.raises(StatisticsError, match="at least 2"):
        two_group_test([1.0], X)
    with pytest.raises(StatisticsError, match="constant"):
        two_group_test([2, 2, 2], [3, 3, 3])


def test_score_dispersion() -> None:
    d = score_dispersion([4, 2, None, 3])
    assert (d.n, d.range) == (3, 2.0)
    assert d.sd == pytest.approx(1.0)
    single = score_dispersion([4.0, float("nan")])
    assert (single.range, single.sd) == (0.0, 0.0)


def test_isotonic_matches_sklearn() -> None:
    ix = [1, 2, 2, 3, 3, 3, 4, 4, 5, 5, 1, 2]
    iy = [1.5, 1, 2.5, 3, 2, 3.5, 4, 3, 4.5, 5, 2, 2]
    model = fit_isotonic(ix, iy, scale=(0, 5))
    grid = [0.5, 1, 1.5, 2, 2.5, 3, 3.5, 4, 4.5, 5, 6]
    # sklearn IsotonicRegression(out_of_bounds="clip", y_min=0, y_max=5).fit(ix, iy).predict(grid)
    expected = [
        1.75,
        1.75,
        1.7916666666666665,
        1.8333333333333333,
        2.3333333333333335,
        2.8333333333333335,
        3.166666666666667,
        3.5,
        4.125,
        4.75,
        4.75,
    ]
    assert apply_isotonic(model, grid) == pytest.approx(expected, rel=REL, abs=ABS)
    assert model.n == 12 and model.x_knots == (1.0, 2.0, 3.0, 4.0, 5.0)
    out = apply_isotonic(model, [float("nan")])
    assert math.isnan(out[0])


def test_isotonic_clips_to_scale() -> None:
    model = fit_isotonic([1, 2, 3], [0.5, 6.0, 7.0], scale=(1, 5))
    assert apply_isotonic(model, [1, 3]).tolist() == [1.0, 5.0]
    with pytest.raises(StatisticsError):
        fit_isotonic([1], [1], scale=(5, 1))
