"""What a judge's answer must look like, and what it says: the schemas sent, the fence, the one JSON
extractor, verdicts, and each rubric's probability-weighted expected score.

A parse function never invents a score: an invalid or out-of-scale value raises :class:`ParseError`,
whose message goes into the JSON retry instruction (:mod:`legal_judge.judge.calls`).

**Expected scores** (:func:`expected_scores`). A judge answers ``{"rubrics": {"legal_soundness":
{"score": 4, ...}, ...}}``. Where the provider returned token log-probabilities (OpenAI-compatible
servers, llama.cpp's), the token that holds each rubric's score carries the model's top alternatives
at that position. The expected score of a rubric is ``sum(v * p(v)) / sum(p(v))`` over the
alternatives that are whole numbers on the rubric's scale (the chosen one included): a judge that
chose 4 with 60% and weighed 3 at 40% has an expected 3.6, one that chose 4 at 99% has 3.99.
Alternatives outside the scale are left out and the rest renormalised (a grammar-constrained server
may list tokens it never allows). The score token is found in the answer text, not guessed: the
rubric's key, then its first ``"score":`` value after it (escaped quotes inside rationales never
match). A rubric whose score token cannot be found, or whose token has no in-scale alternative, gets
no expected score.
"""

from __future__ import annotations

import hashlib
import json
import logging
import math
import re
from dataclasses import dataclass, field
from typing import Any

from legal_judge.assets.catalogue import Assets
from legal_judge.assets.rubrics import Rubric
from legal_judge.models import DigitToken

__all__ = ["PAIRWISE_SCHEMA", "ParsedVerdict", "ParseError", "expected_scores", "extract_json",
           "fence_for", "parse_verdict_json", "rubric_definitions", "rubric_vars",
           "say_no_logprobs", "verdict_schema"]


class ParseError(ValueError):
    """The judge's output is not a valid answer; the message goes into the retry instruction."""


def fence_for(text: str) -> tuple[str, str]:
    """Delimiters the fenced text cannot close: they carry a digest of the text itself."""
    nonce = hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]
    return f"<<<UNTRUSTED_ANSWER {nonce}>>>", f"<<<END_UNTRUSTED_ANSWER {nonce}>>>"


#: The answer of legal-judge's pairwise template (``prompts/pairwise``), for the audit's pairwise
#: judgments and the debias experiment alike. The bounds are the template's ("score_a": <0-5>) and
#: the scale both parsers hold the scores to; a schema-enforcing server keeps the model inside them.
PAIRWISE_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "reasoning": {"type": "string"},
        "winner": {"type": "string", "enum": ["A", "B"]},
        "score_a": {"type": "number", "minimum": 0, "maximum": 5},
        "score_b": {"type": "number", "minimum": 0, "maximum": 5},
    },
    "required": ["reasoning", "winner", "score_a", "score_b"],
    "additionalProperties": False,
}


def _score_schema(low: int, high: int) -> dict[str, Any]:
    # An integral scale as an integer enum: grammar-constrained servers (llama.cpp) enforce enums
    # but not numeric ranges, so they cannot emit 7.8 or -1. The answer is still validated.
    return {"type": "integer", "enum": list(range(int(low), int(high) + 1)),
            "minimum": low, "maximum": high}


def verdict_schema(rubrics: list[Rubric]) -> dict[str, Any]:
    """The JSON schema of a verdict for these rubrics (sent to providers that enforce schemas)."""
    props: dict[str, Any] = {}
    for r in rubrics:
        if r.kind == "numeric":
            assert r.scale is not None
            props[r.name] = {
                "type": "object",
                "properties": {
                    "score": _score_schema(r.scale.min, r.scale.max),
                    "rationale": {"type": "string"},
                },
                "required": ["score", "rationale"],
                "additionalProperties": False,
            }
        else:
            props[r.name] = {
                "type": "object",
                "properties": {"result": {"type": "string", "enum": list(r.values or [])},
                               "notes": {"type": "string"}},
                "required": ["result", "notes"],
                "additionalProperties": False,
            }
    return {
        "type": "object",
        "properties": {
            "rubrics": {"type": "object", "properties": props, "required": [r.name for r in rubrics],
                        "additionalProperties": False},
            "overall": {"type": "string", "enum": ["pass", "fail"]},
            "summary": {"type": "string"},
        },
        "required": ["rubrics", "overall", "summary"],
        "additionalProperties": False,
    }


# A fenced block anywhere in the answer (prose around it is common); an object or a list.
_FENCED_JSON = re.compile(r"```(?:json)?\s*(\{.*\}|\[.*\])\s*```", re.DOTALL)


def extract_json(text: str) -> Any:
    """The JSON value in a model's answer: fenced, bare, or the outermost object inside prose.

    Raises:
        ParseError: no JSON object found, or the JSON is invalid (the message names the position).
    """
    candidate = text.strip()
    match = _FENCED_JSON.search(candidate)
    if match:
        candidate = match.group(1)
    elif not candidate.startswith(("{", "[")):
        start, end = candidate.find("{"), candidate.rfind("}")
        if start < 0 or end <= start:
            raise ParseError("no JSON object found")
        candidate = candidate[start : end + 1]
    try:
        return json.loads(candidate)
    except json.JSONDecodeError as exc:
        raise ParseError(f"invalid JSON: {exc.msg} at position {exc.pos}") from None


@dataclass
class ParsedVerdict:
    """The validated content of one judge answer."""

    scores: dict[str, float] = field(default_factory=dict)
    categorical: dict[str, str] = field(default_factory=dict)
    rationales: dict[str, str] = field(default_factory=dict)
    stated_overall: str = "fail"
    summary: str = ""


def _parse_numeric(r: Rubric, entry: dict[str, Any], out: ParsedVerdict) -> None:
    score = entry.get("score")
    if isinstance(score, bool) or not isinstance(score, int | float):
        raise ParseError(f"rubrics.{r.name}.score must be a number, got {score!r}")
    if not r.valid_score(float(score)):
        assert r.scale is not None
        raise ParseError(f"rubrics.{r.name}.score {score} is outside {r.scale.min}-{r.scale.max}")
    out.scores[r.name] = float(score)
    out.rationales[r.name] = str(entry.get("rationale", ""))


def _parse_categorical(r: Rubric, entry: dict[str, Any], out: ParsedVerdict) -> None:
    result = entry.get("result")
    if result not in (r.values or []):
        raise ParseError(f"rubrics.{r.name}.result must be one of {r.values}, got {result!r}")
    out.categorical[r.name] = str(result)
    out.rationales[r.name] = str(entry.get("notes", ""))


def parse_verdict_json(text: str, rubrics: list[Rubric]) -> ParsedVerdict:
    """Parse and validate a judge's JSON answer against the active rubrics.

    Raises:
        ParseError: not JSON, a rubric missing, a score missing or out of scale, a bad category.
    """
    data = extract_json(text)
    if not isinstance(data, dict) or not isinstance(data.get("rubrics"), dict):
        raise ParseError("the answer must be an object with a 'rubrics' object")
    out = ParsedVerdict()
    for r in rubrics:
        entry = data["rubrics"].get(r.name)
        if not isinstance(entry, dict):
            raise ParseError(f"rubrics.{r.name} is missing")
        (_parse_numeric if r.kind == "numeric" else _parse_categorical)(r, entry, out)
    overall = data.get("overall")
    if overall not in ("pass", "fail"):
        raise ParseError(f"overall must be 'pass' or 'fail', got {overall!r}")
    out.stated_overall = overall
    out.summary = str(data.get("summary", ""))
    return out


def rubric_definitions(assets: Assets, rubrics: list[Rubric]) -> str:
    """The rubric blocks of the judge prompt (``judge_rubric`` template, one per rubric)."""
    template = assets.template("judge_rubric")
    return "\n\n".join(template.render(r=rubric_vars(r)).strip() for r in rubrics)


def rubric_vars(r: Rubric) -> dict[str, Any]:
    """The variables a template sees for one rubric."""
    return {
        "name": r.name, "title": r.title, "kind": r.kind, "description": r.description,
        "bias_guard": r.bias_guard, "guide": list(r.guide.items()),
        "scale_min": r.scale.min if r.scale else None, "scale_max": r.scale.max if r.scale else None,
        "categories": r.values or [],
    }


log = logging.getLogger(__name__)

_WHOLE = re.compile(r'[\s"]*(-?\d+)[\s,}\]]*')


def _score_position(text: str, name: str) -> int | None:
    key = re.compile(r'(?<!\\)"' + re.escape(name) + r'"\s*:\s*\{')
    found = key.search(text)
    if found is None:
        return None
    value = re.compile(r'(?<!\\)"score"\s*:\s*(-?\d)').search(text, found.end())
    return value.start(1) if value is not None else None


def _expected(token: DigitToken, low: float, high: float) -> float | None:
    weights: dict[int, float] = {}
    for alt, logprob in token.top.items():
        whole = _WHOLE.fullmatch(alt)
        if whole is None or not low <= int(whole.group(1)) <= high:
            continue
        value = int(whole.group(1))
        weights[value] = weights.get(value, 0.0) + math.exp(logprob)
    total = sum(weights.values())
    if total <= 0.0:
        return None
    return round(sum(v * p for v, p in weights.items()) / total, 4)


def expected_scores(text: str, tokens: list[DigitToken] | None,
                    rubrics: list[Rubric]) -> dict[str, float] | None:
    """Each numeric rubric's probability-weighted expected score in one answer.

    Args:
        text: The answer the verdict was parsed from.
        tokens: Its digit tokens with their alternatives (``CompletionResponse.digit_logprobs``).
        rubrics: The rubrics of the verdict (categorical ones have no expected score).

    Returns:
        ``{rubric: expected score}`` for the rubrics whose score token was found (possibly
        empty); None when the provider returned no log-probabilities at all.
    """
    if tokens is None:
        return None
    out: dict[str, float] = {}
    for rubric in rubrics:
        if rubric.kind != "numeric" or rubric.scale is None:
            continue
        at = _score_position(text, rubric.name)
        token = next((t for t in tokens if at is not None
                      and t.offset <= at < t.offset + len(t.token)), None)
        got = None if token is None else _expected(token, rubric.scale.min, rubric.scale.max)
        if got is not None:
            out[rubric.name] = got
    return out


def say_no_logprobs(label: str, provider: Any) -> bool:
    """Say (one log line) that a judge's provider returned no token log-probabilities.

    The judge calls it on its first fresh answer without them and then stays quiet: one line per
    judge per run, not one per call. The simulated stand-in never has log-probabilities, and
    saying so on every demo run is noise: it is not said for it.

    Returns:
        True: the judge need not say it again.
    """
    if getattr(provider, "logprobs", True) is False:
        log.info("judge %s: token log-probabilities are switched off (options.logprobs = "
                 "false): its verdicts store no expected scores", label)
    elif getattr(getattr(provider, "spec", None), "prefix", "") != "simulated":
        log.warning("judge %s: its provider returned no token log-probabilities, so its "
                    "verdicts store no expected scores", label)
    return True
