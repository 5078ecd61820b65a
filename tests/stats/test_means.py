"""Mean with its t interval (the run summary's rubric means), against scipy."""

from __future__ import annotations

import math

import pytest

from legal_judge.stats import mean_ci


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
