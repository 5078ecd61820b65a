"""Label planning against hand-computed figures."""

from __future__ import annotations

import math

import pytest

from legal_judge.stats import StatisticsError, break_even_correlation, labels_for_margin

Z = 1.959963984540054  # scipy.stats.norm.ppf(0.975)


def test_classical_size_without_a_judge() -> None:
    # p = 0.8, ±5 points: n = ceil(z^2 · 0.16 / 0.0025) = ceil(245.86) = 246
    assert labels_for_margin(0.16, 0.05) == math.ceil(Z**2 * 0.16 / 0.05**2) == 246


def test_ppi_size_with_a_correlated_judge() -> None:
    # rho = 0.8, a large run: n = ceil(246 · (1 - 0.64)) with z^2 · 0.16 · 0.36 / 0.0025 = 88.51
    assert labels_for_margin(0.16, 0.05, rho=0.8) == 89
    # a finite run of 1,000 judged items helps less than an infinite one
    assert labels_for_margin(0.16, 0.05, rho=0.8, n_unlabelled=1000) > 89


def test_break_even() -> None:
    assert break_even_correlation(102) == pytest.approx(0.1)
    assert break_even_correlation(27) == pytest.approx(0.2)
    with pytest.raises(StatisticsError):
        break_even_correlation(2)
