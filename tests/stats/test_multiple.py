"""Holm / BH correction against statsmodels reference values, and the flag rule."""

from __future__ import annotations

import math

import numpy as np
import pytest

from legal_judge.stats import StatisticsError, adjust_pvalues, flag, interpret_effect

P = [0.01, 0.04, 0.03, 0.005, 0.2, 0.5, 0.012, 0.8]


def test_holm_matches_statsmodels() -> None:
    # statsmodels.stats.multitest.multipletests(P, method="holm")[1]
    expected = [0.07, 0.16, 0.15, 0.04, 0.6000000000000001, 1.0, 0.07200000000000001, 1.0]
    assert adjust_pvalues(P, "holm") == pytest.approx(expected, abs=1e-15)


def test_bh_matches_statsmodels() -> None:
    # statsmodels.stats.multitest.multipletests(P, method="fdr_bh")[1]
    expected = [0.032, 0.064, 0.06, 0.032, 0.26666666666666666, 0.5714285714285714, 0.032, 0.8]
    assert adjust_pvalues(P, "bh") == pytest.approx(expected, abs=1e-15)


def test_none_and_nan_pass_through() -> None:
    assert adjust_pvalues(P, "none").tolist() == P
    out = adjust_pvalues([0.01, float("nan"), 0.04], "holm")
    assert out[0] == pytest.approx(0.02) and out[2] == pytest.approx(0.04)
    assert math.isnan(out[1])


def test_invalid_input() -> None:
    with pytest.raises(StatisticsError):
        adjust_pvalues([0.5, 1.5])
    with pytest.raises(StatisticsError):
        adjust_pvalues(P, "bonferroni")  # type: ignore[arg-type]


def test_flag_rule_needs_both_conditions() -> None:
    assert flag(0.01, 0.5, significance=0.05, min_effect=0.2)
    assert flag(0.01, -0.5, significance=0.05, min_effect=0.2)
    assert not flag(0.01, 0.2, significance=0.05, min_effect=0.2)  # effect must exceed
    assert not flag(0.05, 0.9, significance=0.05, min_effect=0.2)  # p must be below
    assert not flag(float("nan"), 0.9, significance=0.05, min_effect=0.2)


@pytest.mark.parametrize(
    ("value", "kind", "label"),
    [
        (0.19, "cohen_d_z", "negligible"),
        (0.2, "cohen_d_z", "small"),
        (-0.49, "hedges_g", "small"),
        (0.5, "cohen_d_z", "medium"),
        (0.8, "cohen_d_z", "large"),
        (0.09, "rank_biserial", "negligible"),
        (-0.1, "rank_biserial", "small"),
        (0.3, "rank_biserial", "medium"),
        (0.5, "rank_biserial", "large"),
        (3.0, "none", "negligible"),
    ],
)
def test_interpret_effect_thresholds(value: float, kind: str, label: str) -> None:
    assert interpret_effect(value, kind) == label


def test_holm_on_a_large_vector_is_monotone() -> None:
    p = np.random.default_rng(0).uniform(size=50)
    adj = adjust_pvalues(p, "holm")
    order = np.argsort(p)
    assert np.all(np.diff(adj[order]) >= 0)
    assert np.all(adj >= p)


def test_interpret_effect_rejects_nan_and_unknown_kind() -> None:
    with pytest.raises(StatisticsError):
        interpret_effect(float("nan"), "cohen_d_z")
    with pytest.raises(StatisticsError):
        interpret_effect(0.3, "eta_squared")
