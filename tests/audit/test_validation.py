"""Statistical validation with the simulated judge: the audit finds what is there, and does not cry
wolf. The full study (200 repetitions) is marked slow; a reduced one always runs."""

from __future__ import annotations

import pytest

from legal_judge.audit.validation import EIGHT, validation_study


def test_power_d_05_60_pairs_reduced() -> None:
    res = validation_study("simulated:fair?verbosity=0.5", ["verbosity"], repetitions=40)
    # Exact power of a paired t-test at d_z = 0.5, n = 60, alpha = 0.05 is 0.97.
    assert res.rate("verbosity") >= 0.9
    assert 0.35 < res.mean_effect["verbosity"] < 0.65  # the injected d_z really is ~0.5


def test_false_positive_rate_eight_null_dimensions_reduced() -> None:
    res = validation_study("simulated:fair", EIGHT, repetitions=40)
    # Holm keeps the family-wise error at or below 0.05; P(>= 6 of 40 | 0.05) < 0.02.
    assert res.any_flagged <= 5, res.flagged_counts


@pytest.mark.slow
def test_power_full_200_repetitions() -> None:
    single = validation_study("simulated:fair?verbosity=0.5", ["verbosity"], repetitions=200)
    assert single.rate("verbosity") >= 0.9
    among_eight = validation_study("simulated:fair?verbosity=0.5", EIGHT, repetitions=200)
    others = sum(v for k, v in among_eight.flagged_counts.items() if k != "verbosity")
    assert among_eight.rate("verbosity") >= 0.75 and others <= 20  # 200 x 7 null dims, Holm


@pytest.mark.slow
def test_false_positive_rate_full_200_repetitions() -> None:
    res = validation_study("simulated:fair", EIGHT, repetitions=200)
    assert res.rate() <= 0.08  # 0.05 plus sampling error (binomial sd 0.015)
