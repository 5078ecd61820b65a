"""The paired rate difference of two judges: pinned to statsmodels/scipy and closed forms."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats
from statsmodels.stats.contingency_tables import mcnemar

from legal_judge.stats import StatisticsError
from legal_judge.stats.paired_rates import (
    items_for_noninferiority,
    items_for_noninferiority_mean,
    paired_rate_difference,
)

# 30 items: 18 right for both, 2 right only before, 7 right only after, 3 wrong for both.
BEFORE = [True] * 18 + [True] * 2 + [False] * 7 + [False] * 3
AFTER = [True] * 18 + [False] * 2 + [True] * 7 + [False] * 3


def test_mcnemar_p_equals_statsmodels_exact() -> None:
    d = paired_rate_difference(BEFORE, AFTER)
    table = [[18, 2], [7, 3]]  # rows: before right/wrong; columns: after right/wrong
    assert (d.b, d.c, d.n) == (2, 7, 30)
    assert d.p_value == pytest.approx(mcnemar(table, exact=True).pvalue, rel=1e-12)
    assert d.p_value == pytest.approx(0.1796875, rel=1e-9)  # 2 * P(X <= 2), X ~ Bin(9, 1/2)
    assert d.estimate == pytest.approx(5 / 30)


def test_ci_is_the_exact_conditional_interval() -> None:
    d = paired_rate_difference(BEFORE, AFTER)
    ci = stats.binomtest(7, 9).proportion_ci(method="exact")
    assert d.ci95 == pytest.approx((9 / 30 * (2 * ci.low - 1), 9 / 30 * (2 * ci.high - 1)))
    # Closed form when every discordant item goes one way: the Clopper-Pearson lower bound of
    # 10/10 is 0.025 ** (1/10); 25 fails, 10 of them passed only by the candidate.
    worse = paired_rate_difference([False] * 25, [True] * 10 + [False] * 15)
    assert worse.ci95[0] == pytest.approx(10 / 25 * (2 * 0.025 ** 0.1 - 1), rel=1e-9)
    assert worse.ci95[1] == pytest.approx(0.4)
    assert worse.ci95[0] == pytest.approx(0.15320, abs=1e-5)


def test_no_discordant_item_is_not_a_zero_width_interval() -> None:
    d = paired_rate_difference([True] * 20, [True] * 20)
    half = 1 - 0.025 ** (1 / 20)  # Clopper-Pearson upper bound of 0/20
    assert d.estimate == 0 and d.p_value == 1.0
    assert d.ci95 == pytest.approx((-half, half))


def test_refuses_mismatched_or_empty_vectors() -> None:
    with pytest.raises(StatisticsError):
        paired_rate_difference([True], [True, False])
    with pytest.raises(StatisticsError):
        paired_rate_difference([], [])


def test_labels_needed_for_non_inferiority() -> None:
    z = 1.959963984540054 + 0.8416212335729143
    # Discordance 0.2, no true difference, margin 0.05: z^2 * 0.2 / 0.05^2 = 627.9 -> 628.
    assert items_for_noninferiority(0.2, 0.0, 0.05) == math.ceil(z ** 2 * 0.2 / 0.0025) == 628
    assert items_for_noninferiority(0.2, 0.03, 0.05) == math.ceil(
        z ** 2 * (0.2 - 0.0009) / 0.08 ** 2)
    assert items_for_noninferiority(0.2, -0.06, 0.05) is None  # looks worse than the margin
    assert items_for_noninferiority_mean(0.8, 0.0, 0.25) == math.ceil((z * 0.8 / 0.25) ** 2)
    assert items_for_noninferiority_mean(0.8, 0.3, 0.25) is None


def test_random_vectors_match_statsmodels() -> None:
    rng = np.random.default_rng(3)
    for _ in range(5):
        a, b = rng.random(40) < 0.6, rng.random(40) < 0.7
        d = paired_rate_difference(a.tolist(), b.tolist())
        table = [[int(np.sum(a & b)), int(np.sum(a & ~b))], [int(np.sum(~a & b)),
                                                             int(np.sum(~a & ~b))]]
        assert d.p_value == pytest.approx(mcnemar(table, exact=True).pvalue, rel=1e-12)
