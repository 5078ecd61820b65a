"""Per-item outcomes of a run, and of two runs side by side (pure; the reports show them).

One :class:`ItemOutcome` per item says what happened to it and which lists it belongs to, so a
reviewer can go straight to the items they most want to see:

* ``failed``: the ensemble scored the item and failed it;
* ``passed_should_fail``: the ensemble passed it, the dataset's expected conclusion
  (``metadata.expected_pass``, what a careful lawyer concluded) says it should fail;
* ``failed_should_pass``: the reverse;
* ``split``: the judges with a valid verdict did not all reach the same pass/fail;
* ``overridden``: a rule-based override changed a score (rule 1: citation_quality forced to 0);
* ``inconclusive``: fewer valid verdicts than the quorum, so the item is neither passed nor failed;
* ``flagged``: flagged for human review (disagreement over the threshold, or a check).

The definitions of ``passed_should_fail`` and ``failed_should_pass`` are the run summary's
(:func:`legal_judge.benchmark.summary.summarize_run`): only scored items count, so the lists and the
summary's counts agree.

:func:`paired_outcomes` lines up the same items in two runs (baseline A, candidate B) with both
verdicts; :mod:`legal_judge.benchmark.compare` computes the statistics of that comparison.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from legal_judge.dataset import expected_pass_of
from legal_judge.store import Store

__all__ = [
    "CATEGORIES",
    "DIFFERENT_QUESTION",
    "ItemOutcome",
    "ItemPair",
    "item_outcomes",
    "paired_outcomes",
    "question_of",
    "run_item_outcomes",
    "transition_counts",
]

Category = Literal["failed", "passed_should_fail", "failed_should_pass", "split", "overridden",
                   "inconclusive", "flagged"]
#: Every category, in the order a reviewer reads them.
CATEGORIES: tuple[Category, ...] = ("failed", "passed_should_fail", "failed_should_pass", "split",
                                    "overridden", "inconclusive", "flagged")

Change = Literal["regressed", "improved", "unchanged", "not comparable"]


@dataclass(frozen=True)
class JudgeVerdict:
    """One judge's verdict on an item, as stored."""

    judge: str
    status: str
    overall: str | None
    hallucination: str | None
    scores: dict[str, float]
    rationales: dict[str, str]
    reason: str | None


@dataclass(frozen=True)
class ItemOutcome:
    """What happened to one item in one run."""

    item_id: str
    status: str
    overall: str | None
    expected_pass: bool | None
    expected_conclusion: str | None
    scores: dict[str, float]
    hallucination: str | None
    max_range: float | None
    judge_votes: dict[str, int]
    overrides: list[str]
    flags: list[str]
    reason: str | None
    categories: list[Category] = field(default_factory=list)
    judges: list[JudgeVerdict] = field(default_factory=list)


def _expected(item: dict[str, Any]) -> tuple[bool | None, str | None]:
    raw = item.get("metadata")
    meta: dict[str, Any] = raw if isinstance(raw, dict) else {}
    # Read exactly as the run summary reads it, so the lists and the summary's counts agree.
    expected = expected_pass_of(meta)
    conclusion = meta.get("lawyer_conclusion")
    return expected, str(conclusion) if conclusion else None


def _judges(verdicts: list[dict[str, Any]]) -> list[JudgeVerdict]:
    return [JudgeVerdict(judge=str(v.get("judge")), status=str(v.get("status")),
                         overall=v.get("overall"), hallucination=v.get("hallucination"),
                         scores=dict(v.get("scores") or {}),
                         rationales=dict(v.get("rationales") or {}), reason=v.get("reason"))
            for v in sorted(verdicts, key=lambda v: str(v.get("judge")))]


def _outcome(item: dict[str, Any], result: dict[str, Any] | None,
             verdicts: list[dict[str, Any]]) -> ItemOutcome:
    result = result or {"status": "not judged", "reason": "no ensemble result stored"}
    expected, conclusion = _expected(item)
    judges = _judges(verdicts)
    votes = {"pass": 0, "fail": 0}
    for j in judges:
        if j.status == "ok" and j.overall in votes:
            votes[j.overall] += 1
    ranges = [d["range"] for d in (result.get("disagreement") or {}).values()
              if isinstance(d, dict) and isinstance(d.get("range"), int | float)]
    scored = result.get("status") == "ok"
    overall = result.get("overall") if scored else None
    cats: list[Category] = []
    if scored and overall == "fail":
        cats.append("failed")
    if scored and overall == "pass" and expected is False:
        cats.append("passed_should_fail")
    if scored and overall == "fail" and expected is True:
        cats.append("failed_should_pass")
    if votes["pass"] and votes["fail"]:
        cats.append("split")
    if result.get("overrides"):
        cats.append("overridden")
    if not scored:
        cats.append("inconclusive")
    if result.get("flagged_for_review"):
        cats.append("flagged")
    return ItemOutcome(
        item_id=str(item["id"]), status=str(result.get("status")), overall=overall,
        expected_pass=expected, expected_conclusion=conclusion,
        scores=dict(result.get("scores") or {}), hallucination=result.get("hallucination"),
        max_range=max(ranges) if ranges else None, judge_votes=votes,
        overrides=list(result.get("overrides") or []), flags=list(result.get("flags") or []),
        reason=result.get("reason"), categories=cats, judges=judges)


def item_outcomes(items: list[dict[str, Any]], results: dict[str, dict[str, Any]],
                  verdicts: dict[tuple[str, str], dict[str, Any]]) -> list[ItemOutcome]:
    """One outcome per item, in the items' order.

    Args:
        items: The run's items (``Store.load_items``).
        results: Ensemble results by item id (``Store.load_results``).
        verdicts: Verdicts by (item id, judge) (``Store.load_verdicts``).
    """
    by_item: dict[str, list[dict[str, Any]]] = {}
    for (item_id, _), v in verdicts.items():
        by_item.setdefault(item_id, []).append(v)
    return [_outcome(i, results.get(i["id"]), by_item.get(i["id"], [])) for i in items]


def run_item_outcomes(store: Store, run_id: str) -> list[ItemOutcome]:
    """:func:`item_outcomes` of a stored run."""
    return item_outcomes(store.load_items(run_id), store.load_results(run_id),
                         store.load_verdicts(run_id))


#: Why a pair whose id is in both runs is not compared, when its question differs.
DIFFERENT_QUESTION = "a different question in the two runs (prompt or jurisdiction)"


def question_of(item: Mapping[str, Any]) -> tuple[str, str | None]:
    """What makes an id in two runs the same item: its question (the prompt, spacing aside) and
    the jurisdiction it is asked under. Only the answer may differ; two datasets that number
    their items alike are not paired (the release gate compared different questions and passed).
    """
    jurisdiction = item.get("jurisdiction")
    return " ".join(str(item.get("prompt") or "").split()), (
        None if jurisdiction is None else str(jurisdiction))


@dataclass(frozen=True)
class ItemPair:
    """The same item in baseline run A and candidate run B."""

    item_id: str
    change: Change
    a: ItemOutcome
    b: ItemOutcome
    prompt: str
    response_a: str
    response_b: str
    score_changes: dict[str, float]
    #: Why the pair is not compared when its verdicts do not say it (a different question).
    note: str | None = None


def _change(a: ItemOutcome, b: ItemOutcome) -> Change:
    if a.status != "ok" or b.status != "ok" or {a.overall, b.overall} - {"pass", "fail"}:
        return "not comparable"
    if a.overall == "pass" and b.overall == "fail":
        return "regressed"
    if a.overall == "fail" and b.overall == "pass":
        return "improved"
    return "unchanged"


def paired_outcomes(store: Store, run_a: str, run_b: str) -> list[ItemPair]:
    """The items both runs hold, each with both verdicts, in run A's order.

    ``change`` is ``regressed`` (A passed, B failed), ``improved`` (A failed, B passed),
    ``unchanged``, or ``not comparable`` when either run has no scored verdict for the item or
    the two runs ask it differently (:func:`question_of`; the comparison statistics leave those
    out too). ``score_changes`` is B - A per rubric both scored.
    """
    items_a = {i["id"]: i for i in store.load_items(run_a)}
    items_b = {i["id"]: i for i in store.load_items(run_b)}
    out_a = {o.item_id: o for o in run_item_outcomes(store, run_a)}
    out_b = {o.item_id: o for o in run_item_outcomes(store, run_b)}
    pairs = []
    for item_id, item in items_a.items():
        if item_id not in items_b:
            continue
        a, b = out_a[item_id], out_b[item_id]
        same = question_of(item) == question_of(items_b[item_id])
        deltas = {r: round(b.scores[r] - a.scores[r], 4) for r in sorted(a.scores)
                  if r in b.scores and a.status == "ok" and b.status == "ok" and same}
        pairs.append(ItemPair(item_id=item_id, change=_change(a, b) if same else "not comparable",
                              a=a, b=b, prompt=str(item.get("prompt", "")),
                              response_a=str(item.get("response", "")),
                              response_b=str(items_b[item_id].get("response", "")),
                              score_changes=deltas, note=None if same else DIFFERENT_QUESTION))
    return pairs


def transition_counts(pairs: list[ItemPair]) -> dict[str, int]:
    """The pass/fail 2x2 of the comparable pairs: ``pass_pass``, ``pass_fail`` (regressed),
    ``fail_pass`` (improved), ``fail_fail``; plus ``not_comparable``."""
    out = {"pass_pass": 0, "pass_fail": 0, "fail_pass": 0, "fail_fail": 0, "not_comparable": 0}
    for p in pairs:
        if p.change == "not comparable":
            out["not_comparable"] += 1
        else:
            out[f"{p.a.overall}_{p.b.overall}"] += 1
    return out
