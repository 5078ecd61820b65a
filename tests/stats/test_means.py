"""Mean with its t interval (the run summary's rubric means), against scipy."""

from __future__ import annotations

import math

import pytest

from legal_judge.stats import MIN_N_FOR_INTERVAL, mean_ci


def test_mean_ci_matches_scipy_t_interval() -> None:
    m = mean_ci([3.4, 2.9, 4.1, 3.7, None, 2.2])  # type: ignore[list-item]
    # numpy mean and std(ddof=1); scipy.stats.t.interval(0.95, 4, loc=mean, scale=sem)
    assert (m.n, m.mean) == (5, pytest.approx(3.2599999999999993, rel=1e-12))
    assert m.sd == pytest.approx(0.7368853370776215, rel=1e-12)
    assert m.ci95 == pytest.approx((2.3450360061464712, 4.1749639938535275), rel=1e-12)
    two = mean_ci([3.0, 4.0])
    assert two.ci95 == pytest.approx((-2.853102368087347, 9.853102368087347), rel=1e-12)


def test_one_value_has_no_sd_and_no_interval() -> None:
    # Issue 20, item 17 (other stats modules): was sd 0.0 and the interval (3.4, 3.4).
    one = mean_ci([3.4])
    assert (one.n, one.mean, one.sd, one.ci95) == (1, 3.4, None, None)
    empty = mean_ci([])
    assert empty.n == 0 and math.isnan(empty.mean) and empty.ci95 is None


def test_an_interval_is_clamped_to_the_scale_and_withheld_below_the_minimum() -> None:
    # Issue 33: a 3-item run printed a 95% CI of -3.32 to 8.26 on a 0-5 scale.
    # scipy.stats.t.interval(0.95, 4, loc=4, scale=sem([0, 5, 5, 5, 5])) = (1.2236, 6.7764)
    five = mean_ci([0.0, 5.0, 5.0, 5.0, 5.0], bounds=(0.0, 5.0), min_n=MIN_N_FOR_INTERVAL)
    assert five.ci95 == pytest.approx((1.2235548948022066, 5.0), rel=1e-12)
    assert not five.too_few
    # Unclamped, three values 0, 3, 5 give (-3.585, 8.918): withheld, with the mean kept.
    three = mean_ci([0.0, 3.0, 5.0], bounds=(0.0, 5.0), min_n=MIN_N_FOR_INTERVAL)
    assert (three.n, three.ci95, three.too_few) == (3, None, True)
    assert three.mean == pytest.approx(2.6666666666666665, rel=1e-12)
    assert MIN_N_FOR_INTERVAL == 5
    # Without a minimum, the default stays the t interval (other callers are unchanged).
    assert mean_ci([0.0, 3.0, 5.0]).ci95 == pytest.approx(
        (-3.584942812709109, 8.918276146042443), rel=1e-12)
