"""What the audit's targets share: what one judgment returns, the repeat seeds, pairwise parsing.

The calls go through the one JSON retry loop (:func:`legal_judge.judge.calls.run_attempts`, the
judge's policy from DESIGN): the first attempt at the configured temperature, then 0.2 and 0.4 with the
retry instruction appended; after three invalid outputs the judgment is INCONCLUSIVE with the raw
outputs kept. A parse function never invents a score.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field, replace
from typing import Any, TypeVar

from legal_judge.assets.catalogue import Assets
from legal_judge.errors import AuthError, BadRequestError, ProviderError
from legal_judge.judge.calls import Attempts, Complete, run_attempts
from legal_judge.judge.pairwise import AUDIT_RULES, json_path_get, number_in, parse_pairwise_answer
from legal_judge.models import CallContext, Message

__all__ = ["Compared", "Scored", "compared_from", "compared_or_error", "json_path_get",
           "number_in", "parse_pairwise", "repeat_seed", "with_json_retries"]

log = logging.getLogger("legal_judge.audit")
T = TypeVar("T")
_REPEAT_BASE = 7_919


def repeat_seed(base: int | None, repeat: int) -> int | None:
    """The request seed of the ``repeat``-th judgment (0 = the normal one)."""
    if repeat == 0:
        return base
    return (base or 0) * 1_000 + _REPEAT_BASE + repeat


@dataclass
class Scored:
    """One pointwise judgment of one variant."""

    score: float | None
    status: str
    error: str | None = None
    raw: str = ""
    attempts: int = 0
    cached: bool = False
    #: The whole verdict, when the target gives more than one score: ``scores`` (numeric
    #: rubrics), ``categories`` (e.g. hallucination) and ``overall`` (pass/fail).
    detail: dict[str, Any] | None = None


@dataclass
class Compared:
    """One pairwise judgment: scores by slot and the winning slot (``A`` first, ``B`` second)."""

    score_first: float | None
    score_second: float | None
    winner: str | None
    status: str
    error: str | None = None
    raw: str = ""
    attempts: int = 0
    extra: dict[str, Any] = field(default_factory=dict)


async def compared_or_error(attempt: Awaitable[Attempts[tuple[float, float, str]]]) -> Compared:
    """:func:`compared_from` on the awaited outcome. A provider failure after its retries is an
    ``error`` judgment; an auth or bad-request error (no retry fixes it) stops the audit."""
    try:
        out = await attempt
    except (AuthError, BadRequestError):
        raise
    except ProviderError as exc:
        return Compared(None, None, None, "error", f"provider failed after retries: {exc.message}")
    return compared_from(out)


def compared_from(out: Attempts[tuple[float, float, str]]) -> Compared:
    """A pairwise judgment from the outcome of :func:`with_json_retries` on a pairwise parse."""
    if not out.ok or out.value is None:
        return Compared(None, None, None, out.status, out.reason, "\n---\n".join(out.raw),
                        len(out.raw))
    sa, sb, winner = out.value
    return Compared(sa, sb, winner, "ok", None, out.raw[-1], len(out.raw))


async def with_json_retries(
    complete: Complete, messages: list[Message], parse: Callable[[str], T], *, assets: Assets,
    provider: str, model: str, temperature: float, max_tokens: int,
    json_schema: dict[str, Any] | None, schema_name: str, seed: int | None,
    context: CallContext | None = None,
) -> Attempts[T]:
    """The JSON retry loop (:func:`~legal_judge.judge.calls.run_attempts`), an inconclusive
    outcome logged as the audit's."""
    out = await run_attempts(complete, messages, parse, assets=assets, provider=provider,
                             model=model, temperature=temperature, max_tokens=max_tokens,
                             json_schema=json_schema, schema_name=schema_name, seed=seed,
                             context=context)
    if not out.ok:
        log.warning("INCONCLUSIVE audit judgment after %d attempts: %s", out.calls, out.error)
    return out


def parse_pairwise(text: str, *, first: str = "score_a", second: str = "score_b",
                   winner: str = "winner", scale: tuple[float, float] = (0.0, 5.0)
                   ) -> tuple[float, float, str]:
    """Parse a pairwise answer: the two slot scores and the winning slot (A, B or tie), under the
    audit's rules (:data:`~legal_judge.judge.pairwise.AUDIT_RULES`: scores required, ties
    allowed) with the answer's paths and scale."""
    rules = replace(AUDIT_RULES, scale=scale, first=first, second=second, winner=winner)
    answer = parse_pairwise_answer(text, rules)
    assert answer.score_a is not None and answer.score_b is not None  # required by the rules
    return answer.score_a, answer.score_b, answer.winner
