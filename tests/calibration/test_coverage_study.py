"""Coverage study (issue 21 item 8): does the 95% PPI++ interval cover the true mean?

The study is :func:`legal_judge.devtools.coverage.coverage_study` (its docstring describes the
simulated judge). The default run repeats 100 times (about a second, floor 0.88: the Monte Carlo
sd of a 95% coverage over 100 repetitions is 0.022); ``-m slow`` runs the 1,000 repetitions of
the issue against the issue's floor of 93%. Figures: ``python scripts/coverage_study.py``.
"""

from __future__ import annotations

import pytest

from legal_judge.devtools.coverage import coverage_study


def _check(figures: dict[str, dict[str, float]], floor: float) -> None:
    for name, f in figures.items():
        assert f["coverage PPI++"] >= floor, (name, f)
        assert f["coverage PPI"] >= floor, (name, f)
        assert f["coverage naive"] < 0.5, (name, f)  # the biased judge's own interval misses


def test_coverage_quick() -> None:
    _check(coverage_study(100), floor=0.88)


@pytest.mark.slow
def test_coverage_1000_repetitions() -> None:
    _check(coverage_study(1000), floor=0.93)
