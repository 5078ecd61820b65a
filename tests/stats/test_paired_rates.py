"""The paired rate difference of two judges: pinned to statsmodels/scipy and closed forms."""

from __future__ import annotations

import math

import numpy as np
import pytest
from statsmodels.stats.contingency_tables import mcnemar

from legal_judge.stats import StatisticsError
from legal_judge.stats.paired_rates import (
    items_for_noninferiority,
    items_for_noninferiority_mean,
    newcombe_paired_ci,
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


def test_ci_is_newcombes_square_and_add_interval() -> None:
    # The published figures of R contingencytables' Newcombe_square_and_add_CI_paired_2x2 on
    # the Cavo et al. (2012) table (Fagerland, Lydersen and Laake, chapter 8):
    # estimate -0.0621, 95% CI -0.1186 to -0.0046.
    low, high = newcombe_paired_ci([[59, 6], [16, 80]])
    assert (low, high) == pytest.approx((-0.1186, -0.0046), abs=5e-5)
    # The same table as outcome vectors: first = after (the candidate), second = before.
    after = [True] * 65 + [False] * 96
    before = [True] * 59 + [False] * 6 + [True] * 16 + [False] * 80
    d = paired_rate_difference(before, after)
    assert d.estimate == pytest.approx(-10 / 161) and d.ci95 == pytest.approx((low, high))
    assert (d.b, d.c) == (16, 6)
    assert d.p_value == pytest.approx(mcnemar([[59, 16], [6, 80]], exact=True).pvalue)


def test_rare_disagreement_does_not_collapse_the_interval() -> None:
    # One discordant item in 50: an interval conditional on the discordant items would be
    # [-0.019, +0.020], narrower than with none at all; the square-and-add one is not.
    d = paired_rate_difference([True] * 30 + [False] * 20, [True] * 31 + [False] * 19)
    assert d.ci95[0] < -0.03 and d.ci95[1] > 0.05
    same = paired_rate_difference([True] * 20, [True] * 20)
    assert same.estimate == 0 and same.p_value == 1.0 and same.ci95[0] < 0 < same.ci95[1]


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
