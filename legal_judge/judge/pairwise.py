"""Pairwise (A vs B) judging in one place: one fence, one prompt render, one parser, one schema.

Used by the audit's position pairs (:meth:`legal_judge.audit.target.JudgeTarget.compare`, and a
generic target's own pairwise template through :func:`parse_pairwise_answer`), the debias
experiment (:class:`legal_judge.debias.pairwise.PairwiseJudge`) and the pasteable prompts of
:func:`legal_judge.judge.mitigation.prompt_texts`. The answer is
``{"reasoning", "winner", "score_a", "score_b"}`` (:data:`PAIRWISE_SCHEMA`).

Where the callers' rules differ, the difference is a parameter (:class:`PairwiseRules`):

* the audit reads a position pair's *scores*: they are required (inside the scale), a tie is a
  valid winner and a missing winner follows the scores (:data:`AUDIT_RULES`);
* the debias experiment reads the *winner*: it is required and a tie is not an answer, scores are
  optional (an out-of-scale one is dropped, never clamped) (:data:`DEBIAS_RULES`).

The requests stay byte-identical to those the stores already cache: the audit's fence digests the
two answers joined by a newline, the experiment's by a NUL (``separator``), and each caller keeps
its schema name.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Any, Literal

from legal_judge.assets.catalogue import Assets
from legal_judge.judge.parse import PAIRWISE_SCHEMA, ParseError, extract_json

__all__ = [
    "AUDIT_RULES",
    "DEBIAS_RULES",
    "PAIRWISE_SCHEMA",
    "PairwiseAnswer",
    "PairwiseParseError",
    "PairwiseRules",
    "json_path_get",
    "number_in",
    "pair_fence",
    "pairwise_prompt",
    "parse_pairwise_answer",
]

Winner = Literal["A", "B", "tie"]


class PairwiseParseError(ParseError):
    """The judge's answer is not a valid pairwise verdict; the message goes into the retry."""


@dataclass(frozen=True)
class PairwiseRules:
    """What a valid pairwise answer must hold.

    Attributes:
        ties: A tie (``"tie"``) is a valid winner.
        scores_required: Both scores must be numbers inside ``scale`` (read first; a missing
            winner then follows the scores); False: the winner is read first and required, and
            a missing or out-of-scale score is None.
        scale: The scores' range.
        first: Where the first slot's score is (a simple JSON path).
        second: Where the second slot's score is.
        winner: Where the winner is.
    """

    ties: bool
    scores_required: bool
    scale: tuple[float, float] = (0.0, 5.0)
    first: str = "score_a"
    second: str = "score_b"
    winner: str = "winner"


AUDIT_RULES = PairwiseRules(ties=True, scores_required=True)
DEBIAS_RULES = PairwiseRules(ties=False, scores_required=False)


@dataclass(frozen=True)
class PairwiseAnswer:
    """One order's answer: the winning slot (``A`` = shown first), the slot scores, the reasons."""

    winner: Winner
    score_a: float | None
    score_b: float | None
    reasoning: str = ""


def pair_fence(first: str, second: str, *, separator: str = "\x00") -> tuple[str, str]:
    """Delimiters neither answer can close: they carry a digest of both answers.

    Args:
        separator: What joins the answers in the digest (the audit's requests used a newline,
            the debias experiment's a NUL; each keeps its own so cached requests still match).
    """
    nonce = hashlib.sha256(f"{first}{separator}{second}".encode()).hexdigest()[:16]
    return f"<<<UNTRUSTED_ANSWER {nonce}>>>", f"<<<END_UNTRUSTED_ANSWER {nonce}>>>"


def pairwise_prompt(assets: Assets, *, criterion: str, question: str, answer_a: str,
                    answer_b: str, fence: tuple[str, str], bias_warning: str = "") -> str:
    """The pairwise template (``prompts/pairwise``) filled for one order."""
    return assets.template("pairwise").render(
        criterion=criterion, question=question, answer_a=answer_a, answer_b=answer_b,
        fence_open=fence[0], fence_close=fence[1], bias_warning=bias_warning)


def parse_pairwise_answer(text: str, rules: PairwiseRules) -> PairwiseAnswer:
    """Parse one pairwise answer under ``rules``.

    Raises:
        PairwiseParseError: no JSON object, a required score missing or outside the scale, or a
            winner the rules do not allow.
    """
    try:
        data = extract_json(text)
    except ParseError as exc:
        raise PairwiseParseError(str(exc)) from None
    allowed = ("A", "B", "TIE") if rules.ties else ("A", "B")
    reasoning = str(data.get("reasoning", "")) if isinstance(data, dict) else ""
    if rules.scores_required:
        sa, sb = (_number(data, path, rules.scale) for path in (rules.first, rules.second))
        try:
            w = str(_get(data, rules.winner)).strip().upper()
        except ParseError:
            w = "A" if sa > sb else "B" if sb > sa else "TIE"
        if w not in allowed:
            raise PairwiseParseError(f"{rules.winner} must be 'A' or 'B', got {w!r}")
        return PairwiseAnswer("tie" if w == "TIE" else w, sa, sb, reasoning)  # type: ignore[arg-type]
    if not isinstance(data, dict):
        raise PairwiseParseError("the answer must be a JSON object")
    w = str(data.get(rules.winner, "")).strip().upper()
    if w not in allowed:
        raise PairwiseParseError(f"winner must be 'A' or 'B', got {data.get(rules.winner)!r}")
    return PairwiseAnswer("tie" if w == "TIE" else w,  # type: ignore[arg-type]
                          _optional(data.get(rules.first), rules.scale),
                          _optional(data.get(rules.second), rules.scale), reasoning)


def _get(data: Any, path: str) -> Any:
    try:
        return json_path_get(data, path)
    except ParseError as exc:
        raise PairwiseParseError(str(exc)) from None


def _number(data: Any, path: str, scale: tuple[float, float]) -> float:
    try:
        return number_in(_get(data, path), scale, where=path)
    except ParseError as exc:
        raise PairwiseParseError(str(exc)) from None


def _optional(value: Any, scale: tuple[float, float]) -> float | None:
    # An out-of-scale or missing score is dropped, never clamped: the winner still stands.
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value) if scale[0] <= value <= scale[1] else None


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
