"""A debias recommendation names the judging form it applies to (issue 29).

`debias compare` printed `position: debias = { mode = "swap" }` to paste into an ensemble, where
swap does nothing (an ensemble scores one answer at a time).
"""

from __future__ import annotations

from typing import Any

from legal_judge.debias.analysis import recommend


def cell(change: float | None, *, significant: bool, accuracy: float = 0.7) -> dict[str, Any]:
    return {"change": change, "significant": significant, "worse": False,
            "over_correction": None, "tokens_per_trial": 100.0, "accuracy": accuracy,
            "mcnemar": {"p_value": 0.001 if significant else 0.5},
            "p_holm": 0.002 if significant else 0.6}


REQUESTS = {"plain": 1, "aware": 1, "aware-all": 1, "swap": 2}


def test_swap_is_recommended_for_pairwise_only_and_never_for_pointwise() -> None:
    cells = {"plain": cell(None, significant=False, accuracy=0.5),
             "aware": cell(0.05, significant=False), "swap": cell(0.3, significant=True)}
    rec = recommend("position", cells, requests=REQUESTS)
    assert rec["mode"] == "swap" and rec["applies_to"] == "pairwise"
    assert rec["pointwise_mode"] == "plain"  # nothing that acts on one answer helped


def test_a_pointwise_alternative_that_helped_is_named() -> None:
    cells = {"plain": cell(None, significant=False, accuracy=0.5),
             "aware-all": cell(0.1, significant=True), "swap": cell(0.3, significant=True)}
    rec = recommend("position", cells, requests=REQUESTS)
    assert rec["pointwise_mode"] == "aware-all"
    assert rec["mode"] == "aware-all" and rec["applies_to"] == "pointwise and pairwise"
