"""Probability-weighted expected scores from a verdict's token log-probabilities.

A judge answers ``{"rubrics": {"legal_soundness": {"score": 4, ...}, ...}}``. Where the provider
returned token log-probabilities (OpenAI-compatible servers, llama.cpp's), the token that holds
each rubric's score carries the model's top alternatives at that position. The expected score of
a rubric is ``sum(v * p(v)) / sum(p(v))`` over the alternatives that are whole numbers on the
rubric's scale (the chosen one included): a judge that chose 4 with 60% and weighed 3 at 40%
has an expected 3.6, one that chose 4 at 99% has 3.99. Alternatives outside the scale are left
out and the rest renormalised (a grammar-constrained server may list tokens it never allows).

The score token is found in the answer text, not guessed: the rubric's key, then its first
``"score":`` value after it (escaped quotes inside rationales never match). A rubric whose score
token cannot be found, or whose token has no in-scale alternative, gets no expected score.
"""

from __future__ import annotations

import logging
import math
import re
from typing import Any

from legal_judge.assets.rubrics import Rubric
from legal_judge.models import DigitToken

__all__ = ["expected_scores", "say_no_logprobs"]

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
