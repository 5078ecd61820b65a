"""What the audit's targets share: what one judgment returns, the repeat seeds, pairwise parsing.

The calls go through the one JSON retry loop (:func:`legal_judge.judge.attempts.run_attempts`, the
judge's policy from DESIGN): the first attempt at the configured temperature, then 0.2 and 0.4 with the
retry instruction appended; after three invalid outputs the judgment is INCONCLUSIVE with the raw
outputs kept. A parse function never invents a score.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar

from legal_judge.assets.catalogue import Assets
from legal_judge.errors import AuthError, BadRequestError, ProviderError
from legal_judge.judge.attempts import Attempts, Complete, run_attempts
from legal_judge.judge.parse import ParseError, extract_json
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
    """The JSON retry loop (:func:`~legal_judge.judge.attempts.run_attempts`), an inconclusive
    outcome logged as the audit's."""
    out = await run_attempts(complete, messages, parse, assets=assets, provider=provider,
                             model=model, temperature=temperature, max_tokens=max_tokens,
                             json_schema=json_schema, schema_name=schema_name, seed=seed,
                             context=context)
    if not out.ok:
        log.warning("INCONCLUSIVE audit judgment after %d attempts: %s", out.calls, out.error)
    return out


def json_path_get(data: Any, path: str) -> Any:
    """Follow a simple JSON path (``$.a.b[0].c`` or ``a.b.0.c``); ParseError when absent."""
    parts = path.removeprefix("$").lstrip(".").replace("[", ".").replace("]", "").split(".")
    node = data
    for part in (p for p in parts if p):
        if isinstance(node, dict) and part in node:
            node = node[part]
        elif isinstance(node, list) and part.isdigit() and int(part) < len(node):
            node = node[int(part)]
        else:
            raise ParseError(f"'{path}' not found in the answer")
    return node


def number_in(value: Any, scale: tuple[float, float], *, where: str) -> float:
    """A score inside the scale, or ParseError (never a default)."""
    if isinstance(value, bool) or not isinstance(value, int | float | str):
        raise ParseError(f"{where} must be a number, got {value!r}")
    try:
        number = float(value)
    except ValueError:
        raise ParseError(f"{where} must be a number, got {value!r}") from None
    if not scale[0] <= number <= scale[1]:
        raise ParseError(f"{where} {number:g} is outside {scale[0]:g}-{scale[1]:g}")
    return number


def parse_pairwise(text: str, *, first: str = "score_a", second: str = "score_b",
                   winner: str = "winner", scale: tuple[float, float] = (0.0, 5.0)
                   ) -> tuple[float, float, str]:
    """Parse a pairwise answer: the two slot scores and the winning slot (A, B or tie)."""
    data = extract_json(text)
    sa = number_in(json_path_get(data, first), scale, where=first)
    sb = number_in(json_path_get(data, second), scale, where=second)
    try:
        w = str(json_path_get(data, winner)).strip().upper()
    except ParseError:
        w = "A" if sa > sb else "B" if sb > sa else "TIE"
    if w not in ("A", "B", "TIE"):
        raise ParseError(f"{winner} must be 'A' or 'B', got {w!r}")
    return sa, sb, "tie" if w == "TIE" else w
