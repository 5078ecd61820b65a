"""Position consistency, preference fairness and repetition stability on hand-counted data."""

from __future__ import annotations

import pytest

from legal_judge.stats import (
    StatisticsError,
    position_consistency,
    preference_fairness,
    repetition_stability,
)

# 10 pairs: 5 consistent (A/A, B/B, tie/tie), 3 primacy (A then B), 1 recency (B then A),
# 1 flip involving a tie.
AB = ["A", "A", "B", "tie", "A", "A", "A", "A", "B", "A"]
BA = ["A", "A", "B", "tie", "A", "B", "B", "B", "A", "tie"]


def test_position_consistency_counts() -> None:
    r = position_consistency(AB, BA)
    assert (r.n, r.n_consistent, r.n_primacy, r.n_recency, r.n_other_inconsistent) == (
        10,
        5,
        3,
        1,
        1,
    )
    assert r.position_consistency == 0.5
    assert r.conflict_rate == 0.5
    assert r.preference_fairness == pytest.approx((1 - 3) / 4)
    # scipy.stats.binomtest(3, 4).pvalue == 0.625 (two-sided, exact)
    assert r.first_position.p_value == pytest.approx(0.625)
    assert r.first_position.k == 3 and r.first_position.n == 4


def test_preference_fairness_extremes() -> None:
    assert preference_fairness(["A", "A"], ["B", "B"]) == -1.0  # always the first slot
    assert preference_fairness(["B", "B"], ["A", "A"]) == 1.0  # always the second slot
    assert preference_fairness(["A", "B"], ["A", "B"]) == 0.0  # perfectly consistent


def test_verdict_validation() -> None:
    with pytest.raises(StatisticsError, match="unknown verdict"):
        position_consistency(["first"], ["A"])
    with pytest.raises(StatisticsError, match="differ in length"):
        position_consistency(["A"], ["A", "B"])


def test_repetition_stability() -> None:
    # modal shares: 3/3, 2/3, 2/4 -> mean 13/18
    rs = repetition_stability([["A", "A", "A"], ["A", "B", "A"], ["A", "B", "tie", "B"]])
    assert rs == pytest.approx((1 + 2 / 3 + 0.5) / 3)
    with pytest.raises(StatisticsError):
        repetition_stability([])
