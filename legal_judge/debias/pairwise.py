"""Pairwise (A vs B) judging with balanced position calibration.

One *order* is one rendering of ``prompts/pairwise.v1.j2`` (the seed's bias-aware template when the
judge's debias mode includes ``aware``), answered as ``{"reasoning", "winner", "score_a",
"score_b"}``; with ``self`` in the mode a second request carries the first verdict and asks the judge
to check it for the bias, then revisit it (both verdicts are kept, with whether the winner changed);
with ``swap`` every judgment asks both orders and answers with their balanced combination.

Balanced position calibration (Wang et al., "Large Language Models are not Fair Evaluators"): both
orders are asked; a winner that survives the swap stands, an inconsistent one is a **tie**; each
answer's score is the mean of its score as first and as second. Position consistency, preference
fairness and repetition stability come from :mod:`legal_judge.stats`.

Verdicts name the winner by *identity* (``"A"`` = the answer passed first to :meth:`compare`), the
convention of :mod:`legal_judge.stats.pairwise`; slots (``"A"`` = shown first) appear only inside
:class:`OrderVerdict`.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from legal_judge.judge.calls import run_attempts
from legal_judge.judge.judge import Judge
from legal_judge.judge.mitigation import self_debias_text, warning_text
from legal_judge.judge.pairwise import (
    DEBIAS_RULES,
    PAIRWISE_SCHEMA,
    PairwiseParseError,
    pair_fence,
    pairwise_prompt,
    parse_pairwise_answer,
)
from legal_judge.models import Message
from legal_judge.stats import position_consistency, repetition_stability

__all__ = [
    "OrderVerdict",
    "PairVerdict",
    "balanced_winner",
    "PairwiseJudge",
    "PairwiseParseError",
    "combine_orders",
    "pair_fence",
    "parse_pairwise",
    "position_summary",
    "stability",
]

Slot = Literal["A", "B"]
Winner = Literal["A", "B", "tie"]

_SELF_FINAL = ('name the final option as the same JSON object only: {"reasoning": "<your '
               'reasoning>", "winner": "A" | "B", "score_a": <0-5>, "score_b": <0-5>}')


@dataclass
class OrderVerdict:
    """The judge's verdict on one order (slots: ``A`` = the option shown first)."""

    status: Literal["ok", "inconclusive"]
    winner: Slot | None = None
    score_a: float | None = None
    score_b: float | None = None
    reasoning: str = ""
    raw: str = ""
    reason: str | None = None
    first: dict[str, Any] | None = None  # the verdict before the self pass
    changed: bool | None = None  # did the self pass change the winner
    calls: int = 0
    input_tokens: int | None = 0
    output_tokens: int | None = 0
    cost_usd: float | None = 0.0

    def add_usage(self, other: OrderVerdict) -> None:
        """Fold another verdict's calls, tokens and cost into this one."""
        self.calls += other.calls
        self.input_tokens = _add(self.input_tokens, other.input_tokens)
        self.output_tokens = _add(self.output_tokens, other.output_tokens)
        self.cost_usd = (None if self.cost_usd is None or other.cost_usd is None
                         else self.cost_usd + other.cost_usd)


@dataclass
class PairVerdict:
    """Both orders of one pair, combined by the tie rule (winner by identity)."""

    winner: Winner
    verdict_ab: Winner  # winner by identity with the original order
    verdict_ba: Winner  # winner by identity with the swapped order
    consistent: bool
    score_a: float | None
    score_b: float | None
    orders: tuple[OrderVerdict, OrderVerdict] = field(repr=False)


def _add(a: int | None, b: int | None) -> int | None:
    return None if a is None or b is None else a + b


def parse_pairwise(text: str) -> tuple[Slot, float | None, float | None, str]:
    """Parse ``{"reasoning", "winner", "score_a", "score_b"}`` under the experiment's rules
    (:data:`~legal_judge.judge.pairwise.DEBIAS_RULES`: winner required, no tie, scores optional).

    Raises:
        PairwiseParseError: no JSON object, or the winner is not ``"A"``/``"B"``.
    """
    answer = parse_pairwise_answer(text, DEBIAS_RULES)
    slot: Slot = "A" if answer.winner == "A" else "B"
    return slot, answer.score_a, answer.score_b, answer.reasoning


def _flip(w: Slot | None) -> Winner:
    return "tie" if w is None else ("B" if w == "A" else "A")


def combine_orders(original: OrderVerdict, swapped: OrderVerdict) -> PairVerdict:
    """The tie rule: a winner that survives the swap stands, anything else is a tie.

    Args:
        original: The verdict with the pair in its original order.
        swapped: The verdict with the two answers swapped (its slot ``A`` is identity ``B``).

    Returns:
        A :class:`PairVerdict`; scores are averaged over the two orders (None if either is missing).
    """
    ab: Winner = original.winner if original.winner else "tie"
    ba = _flip(swapped.winner)
    consistent = ab == ba and ab != "tie"
    score_a = _mean2(original.score_a, swapped.score_b)
    score_b = _mean2(original.score_b, swapped.score_a)
    return PairVerdict(winner=ab if consistent else "tie", verdict_ab=ab, verdict_ba=ba,
                       consistent=consistent, score_a=score_a, score_b=score_b,
                       orders=(original, swapped))


def balanced_winner(pair: PairVerdict) -> Winner:
    """The winner by balanced position calibration (Wang et al.): what the ``swap`` mode answers.

    A winner that survives the swap stands; an inconsistent pair goes to the answer with the higher
    score averaged over both orders (each answer was shown first once, so a first-slot bonus
    cancels); equal or missing averages leave a tie.
    """
    if pair.consistent or pair.score_a is None or pair.score_b is None:
        return pair.winner
    if pair.score_a == pair.score_b:
        return "tie"
    return "A" if pair.score_a > pair.score_b else "B"


def _mean2(x: float | None, y: float | None) -> float | None:
    return None if x is None or y is None else (x + y) / 2


def position_summary(pairs: Sequence[PairVerdict]) -> dict[str, Any]:
    """Position consistency, conflict rate, preference fairness and the first-position test."""
    res = position_consistency([p.verdict_ab for p in pairs], [p.verdict_ba for p in pairs])
    return {"n": res.n, "position_consistency": res.position_consistency,
            "preference_fairness": res.preference_fairness, "n_primacy": res.n_primacy,
            "n_recency": res.n_recency, "first_position_p": res.first_position.p_value}


def stability(repeats: Sequence[Sequence[OrderVerdict]]) -> float:
    """Repetition stability over k re-queries of the same order (tie for an unscored verdict)."""
    return repetition_stability([[v.winner or "tie" for v in rep] for rep in repeats])


class PairwiseJudge:
    """A :class:`Judge` used as a pairwise judge; its ``debias`` config picks the mitigation.

    Calls go through :meth:`Judge.complete` (cache and call log). ``criterion`` defaults to the debias
    config's criterion and is also the focus of the warning ("Judge only {criterion}").
    """

    def __init__(self, judge: Judge, *, criterion: str | None = None) -> None:
        self.judge = judge
        self.debias = judge.config.debias
        if criterion is not None:
            self.debias = self.debias.model_copy(update={"criterion": criterion})
        self.criterion = self.debias.criterion

    def messages(self, question: str, answer_a: str, answer_b: str) -> list[Message]:
        """The one user message of the first request (the warning inside when ``aware``)."""
        warning = (warning_text(self.judge.assets, self.debias, focus=self.criterion)
                   if "aware" in self.debias.mode else "")
        text = pairwise_prompt(self.judge.assets, criterion=self.criterion, question=question,
                               answer_a=answer_a, answer_b=answer_b,
                               fence=pair_fence(answer_a, answer_b), bias_warning=warning)
        return [Message(role="user", content=text)]

    async def ask(self, question: str, answer_a: str, answer_b: str, *, item_id: str,
                  run_id: str | None = None, seed: int | None = None) -> OrderVerdict:
        """Judge one order (plus the self pass when the mode says so; both orders with ``swap``)."""
        if self.debias.mode == "swap":
            return await self._swapped(question, answer_a, answer_b, item_id=item_id,
                                       run_id=run_id, seed=seed)
        messages = self.messages(question, answer_a, answer_b)
        first = await self._ask(messages, item_id=item_id, run_id=run_id, seed=seed,
                                purpose="pairwise")
        if first.status != "ok" or "self" not in self.debias.mode:
            return first
        return await self._self_pass(messages, first, item_id=item_id, run_id=run_id, seed=seed)

    async def compare(self, question: str, answer_a: str, answer_b: str, *, item_id: str,
                      run_id: str | None = None) -> PairVerdict:
        """Balanced position calibration: ask both orders, combine with the tie rule."""
        original = await self.ask(question, answer_a, answer_b, item_id=item_id, run_id=run_id)
        swapped = await self.ask(question, answer_b, answer_a, item_id=f"{item_id}:swapped",
                                 run_id=run_id)
        return combine_orders(original, swapped)

    async def repeat(self, question: str, answer_a: str, answer_b: str, *, k: int, item_id: str,
                     run_id: str | None = None) -> list[OrderVerdict]:
        """The same order asked ``k`` times; seeds 1..k-1 make the repeats real calls (not cache)."""
        out = [await self.ask(question, answer_a, answer_b, item_id=item_id, run_id=run_id)]
        for i in range(1, k):
            out.append(await self.ask(question, answer_a, answer_b, item_id=item_id,
                                      run_id=run_id, seed=i))
        return out

    async def _swapped(self, question: str, answer_a: str, answer_b: str, *, item_id: str,
                       run_id: str | None, seed: int | None) -> OrderVerdict:
        # Slots of the returned verdict are those of the order asked (A = answer_a), so a caller
        # reads it like any one-order verdict; both orders' usage is counted.
        original = await self._ask(self.messages(question, answer_a, answer_b), item_id=item_id,
                                   run_id=run_id, seed=seed, purpose="pairwise")
        swapped = await self._ask(self.messages(question, answer_b, answer_a),
                                  item_id=f"{item_id}:swapped", run_id=run_id, seed=seed,
                                  purpose="pairwise")
        out = OrderVerdict(status="inconclusive", raw=original.raw)
        out.add_usage(original)
        out.add_usage(swapped)
        failed = [f"{name} order: {v.reason}" for name, v in (("original", original),
                                                               ("swapped", swapped))
                  if v.status != "ok"]
        if failed:
            out.reason = "swap needs both orders; " + "; ".join(failed)
            return out
        pair = combine_orders(original, swapped)
        winner = balanced_winner(pair)
        out.status, out.score_a, out.score_b = "ok", pair.score_a, pair.score_b
        out.winner = None if winner == "tie" else winner
        out.first = {"original": pair.verdict_ab, "swapped": pair.verdict_ba,
                     "consistent": pair.consistent}
        out.reasoning = (f"original order: {original.reasoning}\n"
                         f"swapped order: {swapped.reasoning}")
        return out

    async def _self_pass(self, messages: list[Message], first: OrderVerdict, *, item_id: str,
                         run_id: str | None, seed: int | None) -> OrderVerdict:
        summary = {"winner": first.winner, "score_a": first.score_a, "score_b": first.score_b}
        text = self_debias_text(self.judge.assets, self.debias, verdict=json.dumps(summary),
                                final_instruction=_SELF_FINAL, focus=self.criterion)
        convo = [*messages, Message(role="assistant", content=first.raw),
                 Message(role="user", content=text)]
        second = await self._ask(convo, item_id=item_id, run_id=run_id, seed=seed,
                                 purpose="self_debias")
        if second.status != "ok":
            # The second pass failed: the first verdict stands, and the failure is recorded.
            first.first, first.changed = dict(summary), False
            first.reason = f"self pass failed: {second.reason}"
            first.add_usage(second)
            return first
        second.first = {**summary, "reasoning": first.reasoning}
        second.changed = second.winner != first.winner
        second.add_usage(first)
        return second

    async def _ask(self, messages: list[Message], *, item_id: str, run_id: str | None,
                   seed: int | None, purpose: str) -> OrderVerdict:
        j = self.judge

        out = await run_attempts(
            j.calls.complete, messages, parse_pairwise, assets=j.assets, provider=j.provider.spec.prefix,
            model=j.model, temperature=j.config.temperature, max_tokens=j.config.max_tokens,
            json_schema=PAIRWISE_SCHEMA, schema_name="pairwise_verdict", seed=seed,
            context=j.context(item_id, run_id=run_id, purpose=purpose))
        verdict = OrderVerdict(status="inconclusive", raw=out.raw[-1] if out.raw else "",
                               calls=out.calls, input_tokens=out.input_tokens,
                               output_tokens=out.output_tokens, cost_usd=out.cost_usd)
        if not out.ok or out.value is None:
            verdict.reason = out.reason
            return verdict
        verdict.status = "ok"
        verdict.winner, verdict.score_a, verdict.score_b, verdict.reasoning = out.value
        return verdict
