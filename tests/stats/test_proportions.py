"""Binomial, Clopper-Pearson, Wilson and exact McNemar against scipy/statsmodels references."""

from __future__ import annotations

import pytest

from legal_judge.stats import (
    StatisticsError,
    binomial_first_position,
    mcnemar_exact,
    mcnemar_from_outcomes,
    proportion_ci,
)


def test_binomial_first_position_matches_references() -> None:
    r = binomial_first_position(14, 20)
    # scipy.stats.binomtest(14, 20).pvalue
    assert r.p_value == pytest.approx(0.11531829833984375, rel=1e-12)
    # statsmodels.stats.proportion.proportion_confint(14, 20, method="beta")
    assert r.ci95 == pytest.approx((0.45721081772371086, 0.8810684095942724), rel=1e-9)
    assert r.proportion == 0.7 and r.ci_method == "exact"


def test_binomial_with_no_trials() -> None:
    r = binomial_first_position(0, 0)
    assert (r.p_value, r.proportion, r.ci95) == (1.0, None, None)


def test_wilson_interval_matches_statsmodels() -> None:
    # statsmodels.stats.proportion.proportion_confint(37, 50, method="wilson")
    assert proportion_ci(37, 50) == pytest.approx(
        (0.6044684273515116, 0.841284725064476), rel=1e-12
    )
    # ... method="beta" (Clopper-Pearson)
    assert proportion_ci(14, 20, method="exact") == pytest.approx(
        (0.45721081772371086, 0.8810684095942724), rel=1e-9
    )


def test_proportion_ci_rejects_bad_counts() -> None:
    with pytest.raises(StatisticsError):
        proportion_ci(3, 2)
    with pytest.raises(StatisticsError):
        proportion_ci(0, 0)


@pytest.mark.parametrize(
    ("b", "c", "p", "statistic"),
    [
        # statsmodels.stats.contingency_tables.mcnemar([[10, b], [c, 7]], exact=True)
        (3, 12, 0.03515625, 3.0),
        (5, 5, 1.0, 5.0),
        (0, 6, 0.03125, 0.0),
        (1, 0, 1.0, 0.0),
        (9, 20, 0.06142834573984146, 9.0),
    ],
)
def test_mcnemar_matches_statsmodels(b: int, c: int, p: float, statistic: float) -> None:
    r = mcnemar_exact(b, c)
    assert r.p_value == pytest.approx(p, rel=1e-12)
    assert r.statistic == statistic
    assert r.n_discordant == b + c


def test_mcnemar_without_discordant_pairs() -> None:
    assert mcnemar_exact(0, 0).p_value == 1.0


def test_mcnemar_from_outcomes() -> None:
    before = [True] * 13 + [False] * 19  # table [[10, 3], [12, 7]]
    after = [True] * 10 + [False] * 3 + [True] * 12 + [False] * 7
    r = mcnemar_from_outcomes(before, after)
    assert (r.b, r.c, r.n) == (3, 12, 32)
    assert r.p_value == pytest.approx(0.03515625, rel=1e-12)
    assert r.rate_before == pytest.approx(13 / 32)
    assert r.rate_after == pytest.approx(22 / 32)
    assert r.rate_change == pytest.approx(9 / 32)
    with pytest.raises(StatisticsError):
        mcnemar_from_outcomes([True], [True, False])
