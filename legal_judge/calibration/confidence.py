"""How sure the ensemble is of one item's decision: the confidence the escalation thresholds.

:func:`item_confidence` is a fixed, documented combination of what a run already stores on each
ensemble result (nothing is fitted, so nothing can be fitted on the labels it is then judged by):

* ``vote``: the weighted vote margin ``|pass - fail| / (pass + fail)``: 1 when the judges are
  unanimous, 1/3 for a 2-1 split of three equal judges;
* ``rule``: how far the ensemble's scores are from the pass/fail rule's lines, in points, capped at
  :data:`RULE_FAR` and scaled to [0, 1]. For a pass, the distance of the closest numeric line
  (``legal_soundness <= 1``...) above which it stays; for a fail, the largest distance below a
  line that fired; a fail decided by a category alone (``hallucination = hallucinated``) counts
  as far (its doubt is in the vote);
* ``agreement``: ``1 - (largest score range of the judges over the rubrics) / scale width``;
* ``review``: the item was flagged for review (a split vote, judges far apart) or a rule-based
  finding changed or questioned it (an override, a citation forcing a zero): the mean of the
  three components is then halved.

* ``expected`` (only when the judges' providers returned token log-probabilities, so the result
  carries ``expected_scores``): the ``rule`` distance recomputed with the probability-weighted
  expected scores in place of the chosen ones. A judge that chose 2 on legal soundness while
  weighing 1 heavily has an expected score near the line, and this component says so where the
  chosen score cannot.

``confidence = mean(vote, rule, agreement)`` (``mean(vote, rule, agreement, expected)`` with
expected scores), halved under ``review``. With ``rubric`` (agreement within a point on one
rubric), ``vote`` and ``rule`` say nothing about that rubric: the confidence is that rubric's
``agreement`` (averaged with ``1 - |expected - chosen|``, capped at [0, 1], when the rubric has an
expected score), halved under ``review``. An inconclusive item has
no confidence (None): it always goes to a lawyer.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from legal_judge.assets.rubrics import RubricSet

__all__ = ["RULE_FAR", "ItemConfidence", "item_confidence"]

#: Points from the pass/fail line at which the ``rule`` component reaches 1.
RULE_FAR = 2.0
#: The width of the numeric rubric scale (0-5).
SCALE_WIDTH = 5.0


@dataclass(frozen=True, slots=True)
class ItemConfidence:
    """One item's confidence and the components it was made of."""

    item_id: str
    value: float
    vote: float
    rule: float
    agreement: float
    review: bool
    expected: float | None = None


def _vote(result: dict[str, Any]) -> float:
    votes = result.get("votes") or {}
    p, f = float(votes.get("pass", 0.0)), float(votes.get("fail", 0.0))
    return abs(p - f) / (p + f) if p + f > 0 else 0.0


def _rule(result: dict[str, Any], rubric_set: RubricSet,
          scores: dict[str, Any] | None = None) -> float:
    scores = scores if scores is not None else (result.get("scores") or {})
    lines = [(c.rubric, float(c.at_most)) for c in rubric_set.pass_fail.fail_if
             if c.at_most is not None and c.rubric in scores]
    if result.get("overall") == "pass":
        gaps = [float(scores[r]) - line for r, line in lines]
        distance = min(gaps, default=RULE_FAR)
    else:
        fired = [line - float(scores[r]) for r, line in lines if float(scores[r]) <= line]
        distance = max(fired, default=RULE_FAR)
    return min(1.0, max(0.0, distance) / RULE_FAR)


def _agreement(result: dict[str, Any], rubric: str | None) -> float:
    block = result.get("disagreement") or {}
    ranges = [float(v.get("range", 0.0)) for r, v in block.items() if rubric is None or r == rubric]
    return max(0.0, 1.0 - max(ranges, default=0.0) / SCALE_WIDTH)


def _review(result: dict[str, Any]) -> bool:
    checks = result.get("checks") or {}
    return bool(result.get("flagged_for_review") or result.get("overrides")
                or checks.get("forces_citation_zero"))


def item_confidence(result: dict[str, Any], rubric_set: RubricSet, *,
                    rubric: str | None = None) -> ItemConfidence | None:
    """The confidence of one stored ensemble result (see the module docstring).

    Args:
        result: The stored ensemble result of an item (``store.load_results``).
        rubric_set: The run's rubric set (its pass/fail rule's lines).
        rubric: Confidence for agreement on this rubric instead of the pass/fail decision.

    Returns:
        An :class:`ItemConfidence`, or None for an inconclusive item or, with ``rubric``, an item
        the ensemble did not score on it.
    """
    if result.get("status") != "ok" or result.get("overall") not in ("pass", "fail"):
        return None
    if rubric is not None and rubric not in (result.get("scores") or {}):
        return None
    vote, rule, agree = _vote(result), _rule(result, rubric_set), _agreement(result, rubric)
    review = _review(result)
    expected = _expected(result, rubric_set, rubric)
    parts = [agree] if rubric is not None else [vote, rule, agree]
    if expected is not None:
        parts.append(expected)
    value = sum(parts) / len(parts)
    if review:
        value /= 2.0
    return ItemConfidence(str(result.get("item_id")), round(value, 10), vote, rule, agree, review,
                          expected)


def _expected(result: dict[str, Any], rubric_set: RubricSet, rubric: str | None) -> float | None:
    """The ``expected`` component, or None when the result has no expected scores."""
    expected = result.get("expected_scores") or {}
    if rubric is not None:
        if rubric not in expected:
            return None
        gap = abs(float(expected[rubric]) - float(result["scores"][rubric]))
        return max(0.0, 1.0 - min(1.0, gap))
    if not expected:
        return None
    return _rule(result, rubric_set, {**(result.get("scores") or {}), **expected})
