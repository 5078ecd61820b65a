"""Paired TOST: equal to statsmodels' ``ttost_paired`` on fixed vectors (numbers recorded from
statsmodels 0.15.0), the 90%-CI reading, the shifted Wilcoxon route, and the sample size."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats as sps

from legal_judge.stats import StatisticsError, pairs_for_equivalence, tost_paired

X = [4.1, 3.6, 4.4, 3.9, 2.8, 4.0, 3.7, 4.6, 3.3, 3.5, 4.2, 3.9, 3.1, 4.3, 3.8]
Y = [3.9, 3.8, 4.1, 3.6, 3.0, 4.1, 3.3, 4.2, 3.4, 3.6, 3.9, 3.7, 3.3, 4.0, 3.5]
A = [3.9, 2.7, 4.8, 3.1, 4.6, 2.2, 3.8, 4.5, 3.0, 2.8, 4.4, 3.6]
B = [3.1, 3.0, 3.6, 2.6, 2.5, 2.9, 2.9, 3.0, 2.8, 2.9, 3.3, 3.0]

# statsmodels.stats.weightstats.ttost_paired(x1, x2, low, upp) -> (p, (t1, p1, df), (t2, p2, df))
RECORDED = [
    (X, Y, 0.5, 1.1200995222683174e-05, 10.147131895973649, 3.896540230863388e-08,
     -6.219209871725784, 1.1200995222683174e-05),
    (X, Y, 0.25, 0.025810555688061936, 6.05554645404879, 1.4794766155760865e-05,
     -2.127624429800926, 0.025810555688061936),
    (A, B, 0.5, 0.7369287280972532, 5.019011475427825, 0.0001953253913503434,
     0.6546536707079773, 0.7369287280972532),
]


@pytest.mark.parametrize(("a", "b", "margin", "p", "t1", "p1", "t2", "p2"), RECORDED)
def test_t_route_equals_statsmodels_ttost_paired(a: list[float], b: list[float], margin: float,
                                                 p: float, t1: float, p1: float, t2: float,
                                                 p2: float) -> None:
    res = tost_paired(a, b, margin=margin)
    assert res.p_value == pytest.approx(p, rel=1e-9)
    assert res.statistic_lower == pytest.approx(t1, rel=1e-9)
    assert res.p_lower == pytest.approx(p1, rel=1e-9)
    assert res.statistic_upper == pytest.approx(t2, rel=1e-9)
    assert res.p_upper == pytest.approx(p2, rel=1e-9)
    assert res.equivalent is (p < 0.05)
    # Equivalent exactly when the 90% t interval lies inside the margin.
    assert res.ci90 is not None
    assert res.equivalent is (-margin < res.ci90[0] and res.ci90[1] < margin)
    ci = sps.ttest_rel(a, b).confidence_interval(0.90)
    assert res.ci90 == pytest.approx((ci.low, ci.high), rel=1e-12)


def test_t_route_equals_statsmodels_live() -> None:
    weightstats = pytest.importorskip("statsmodels.stats.weightstats")
    for a, b, margin, *_ in RECORDED:
        p, (t1, p1, _), (t2, p2, _) = weightstats.ttost_paired(np.array(a), np.array(b),
                                                               -margin, margin)
        res = tost_paired(a, b, margin=margin)
        assert (res.p_value, res.p_lower, res.p_upper) == pytest.approx((p, p1, p2), rel=1e-9)


def test_wilcoxon_route_is_the_shifted_signed_rank_test() -> None:
    d = np.round(np.subtract(X, Y), 12)  # equal differences tie, as in paired_test
    res = tost_paired(X, Y, margin=0.5, method="wilcoxon")
    low = sps.wilcoxon(d + 0.5, alternative="greater")
    upp = sps.wilcoxon(d - 0.5, alternative="less")
    assert res.p_lower == low.pvalue and res.p_upper == upp.pvalue
    assert res.p_value == max(low.pvalue, upp.pvalue) and res.equivalent
    assert "shifted Wilcoxon" in res.test_used and "t interval" in (res.note or "")


def test_degenerate_inputs_are_documented_not_invented() -> None:
    one = tost_paired([3.0], [3.0], margin=0.5)
    assert not one.equivalent and one.p_value == 1.0 and one.ci90 is None and one.note
    flat = tost_paired([3.0] * 5, [3.0] * 5, margin=0.5)
    assert flat.equivalent and flat.sd == 0.0 and "sd = 0" in (flat.note or "")
    shifted = tost_paired([3.6] * 5, [3.0] * 5, margin=0.5)
    assert not shifted.equivalent
    with pytest.raises(StatisticsError, match="margin must be positive"):
        tost_paired(X, Y, margin=0.0)


def test_pairs_needed_reaches_the_power_it_promises() -> None:
    sd, margin = 0.42, 0.5
    n = pairs_for_equivalence(sd, margin)
    assert n == 8
    assert pairs_for_equivalence(1.0, 0.5) == 36
    assert pairs_for_equivalence(0.0, 0.5) == 2
    rng = np.random.default_rng(7)

    def power(k: int) -> float:
        # TOST at 0.05 on 4000 simulated samples of k differences with true mean 0, vectorised.
        d = rng.normal(0.0, sd, (4000, k))
        se = d.std(axis=1, ddof=1) / np.sqrt(k)
        crit = sps.t.ppf(0.95, k - 1)
        mean = d.mean(axis=1)
        return float(np.mean(((mean + margin) / se > crit) & ((mean - margin) / se < -crit)))

    assert n is not None
    assert power(n) >= 0.78  # the t approximation is slightly conservative
    assert power(n - 3) < 0.8
