"""The escalation study (issue 30): the guarantee holds on random labels; shifted labels break it
and the product's exchangeability warning fires. Figures: ``python scripts/escalation_study.py``
(1,000 repetitions); here 30, so the floors allow Monte Carlo noise."""

from __future__ import annotations

import pytest

from legal_judge.devtools.escalation_study import escalation_study


@pytest.mark.slow
def test_guarantee_holds_on_random_labels_and_shift_is_flagged() -> None:
    fair = escalation_study(30, seed=7)
    for name, f in fair.items():
        assert f["held"] >= 0.9, (name, f)
        assert f["guaranteed"] > 0.3 and 0.0 < f["coverage"] < 1.0, (name, f)
        assert f["warned"] <= 0.1, (name, f)
    shifted = escalation_study(30, seed=7, shifted=True)
    assert shifted["target 0.90"]["held"] < 0.8, shifted  # what breaks: the guarantee
    assert all(f["warned"] >= 0.9 for f in shifted.values()), shifted  # and the warning fires
