"""Non-inferiority bounds against published reference numbers (issue 28).

References:
- Tango's asymptotic score interval for paired proportions: Fagerland, Lydersen & Laake,
  *Statistical Analysis of Contingency Tables* (CRC 2017), chapter 8, worked example "complete
  response before and after consolidation therapy" (Cavo et al. 2012), table [[59, 6], [16, 80]]:
  estimate -0.0621, Tango 95% CI -0.1240 to -0.0054 (as printed by the book's R package
  ``contingencytables::Tango_asymptotic_score_CI_paired_2x2``).
- Hodges-Lehmann bounds: the Hamilton depression scale data of Hollander & Wolfe (Nonparametric
  Statistical Methods, Example 3.1; also R's ``?wilcox.test``), n = 9 without ties. The one-sided
  5% critical value of the signed-rank statistic for n = 9 is 8 (standard table: P(T+ <= 8) =
  0.0488), so the 95% lower bound is the 9th smallest of the 45 Walsh averages, 0.175, and the
  upper bound the 9th largest, 0.726. The one-sided p-value of the data, 0.01953, is R's.
"""

from __future__ import annotations

import math

import pytest
from scipy import stats as sps

from legal_judge.stats import StatisticsError
from legal_judge.stats.noninferiority import (
    hodges_lehmann_bounds,
    items_needed,
    mean_bounds,
    paired_proportions_bounds,
    tango_interval,
    tango_items_needed,
)

# Cavo et al. 2012: rows = before consolidation (response yes/no), columns = after.
N11, N12, N21, N22 = 59, 6, 16, 80
X = [1.83, 0.50, 1.62, 2.48, 1.68, 1.88, 1.55, 3.06, 1.30]
Y = [0.878, 0.647, 0.598, 2.05, 1.06, 1.29, 1.06, 3.14, 1.29]


def _outcomes() -> tuple[list[bool], list[bool]]:
    first = [True] * (N11 + N12) + [False] * (N21 + N22)
    second = [True] * N11 + [False] * N12 + [True] * N21 + [False] * N22
    return first, second


def test_tango_interval_equals_the_published_example() -> None:
    low, high = tango_interval(N12, N21, N11 + N12 + N21 + N22, level=0.95)
    assert (round(low, 4), round(high, 4)) == (-0.1240, -0.0054)


def test_one_sided_bounds_are_the_two_sided_limits_at_2c_minus_1() -> None:
    # The difference B - A with B the first condition of the reference table (its rows): swap
    # roles so that "after" is the table's first condition.
    first, second = _outcomes()
    one = paired_proportions_bounds(second, first, confidence=0.975)
    assert (round(one.lower, 4), round(one.upper, 4)) == (-0.1240, -0.0054)
    assert one.difference == pytest.approx((N12 - N21) / 161)
    assert (one.worse, one.better) == (N21, N12)
    at95 = paired_proportions_bounds(second, first, confidence=0.95)
    assert (at95.lower, at95.upper) == pytest.approx(tango_interval(N12, N21, 161, level=0.90))
    assert -0.1240 < at95.lower < at95.upper < -0.0054  # one-sided 95% is narrower


def test_no_change_is_not_a_zero_width_interval() -> None:
    # b = c = 0: Tango's lower limit solves N(-Δ)/(1 + Δ) = z², i.e. Δ = -z²/(N + z²).
    same = paired_proportions_bounds([True] * 40 + [False] * 17, [True] * 40 + [False] * 17)
    z2 = sps.norm.ppf(0.95) ** 2
    assert same.lower == pytest.approx(-z2 / (57 + z2), abs=1e-9)
    assert same.upper == pytest.approx(z2 / (57 + z2), abs=1e-9)
    assert same.sd == 0.0


def test_hodges_lehmann_bounds_are_the_signed_rank_walsh_order_statistics() -> None:
    b = hodges_lehmann_bounds(X, Y, confidence=0.95)
    assert b.lower == pytest.approx(0.175, abs=1e-8)
    assert b.upper == pytest.approx(0.726, abs=1e-8)
    assert b.estimate == pytest.approx(0.46)  # median of the Walsh averages
    assert sps.wilcoxon([x - y for x, y in zip(X, Y, strict=True)],
                        alternative="greater").pvalue == pytest.approx(0.01953125)


def test_t_bounds_are_one_sided_t_limits() -> None:
    b = mean_bounds(X, Y, confidence=0.95)
    ci = sps.ttest_rel(X, Y).confidence_interval(confidence_level=0.90)
    assert (b.lower, b.upper) == pytest.approx((ci.low, ci.high), rel=1e-12)
    flat = mean_bounds([3.0] * 5, [3.0] * 5)
    assert (flat.lower, flat.upper) == (0.0, 0.0)
    one = mean_bounds([3.0], [2.0])
    assert (one.lower, one.upper, one.sd) == (None, None, None)


def test_items_needed_is_the_normal_sample_size() -> None:
    # n = ((z_0.95 + z_power) * sd / (δ + m))²; power 0.5 (the default) adds nothing to z.
    z = sps.norm.ppf(0.95) + sps.norm.ppf(0.8)
    assert items_needed(0.3, 0.0, 0.05, power=0.8) == math.ceil((z * 0.3 / 0.05) ** 2)
    assert items_needed(0.3, 0.0, 0.05) == math.ceil((sps.norm.ppf(0.95) * 0.3 / 0.05) ** 2)
    assert items_needed(0.3, -0.06, 0.05) is None  # already beyond the margin
    assert items_needed(None, 0.0, 0.05) is None


def test_bad_inputs_raise() -> None:
    with pytest.raises(StatisticsError):
        tango_interval(5, 6, 10)
    with pytest.raises(StatisticsError):
        paired_proportions_bounds([True], [True, False])
    with pytest.raises(StatisticsError):
        mean_bounds([1.0], [1.0], confidence=0.4)


def test_tango_items_needed_when_nothing_changed_is_the_closed_form() -> None:
    # b = c = 0: the lower limit -z²/(N + z²) clears -m once N > z²(1 - m)/m.
    z2 = sps.norm.ppf(0.95) ** 2
    for m in (0.05, 0.10):
        n = tango_items_needed(0.0, 0.0, m)
        assert n == math.floor(z2 * (1 - m) / m) + 1
        assert tango_interval(0, 0, n, level=0.90)[0] > -m
        assert tango_interval(0, 0, n - 1, level=0.90)[0] <= -m
    assert tango_items_needed(0.0, 0.06, 0.05) is None  # the difference is beyond the margin
