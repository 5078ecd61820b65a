"""Token log-probabilities of an OpenAI-compatible answer: the digit tokens a score is made of.

A chat completion asked with ``logprobs`` carries, per output token, its log-probability and the
top alternatives at that position. A judge's scores are digits, so only digit tokens are kept,
each with its offset in the answer text (:func:`digit_logprobs`); the judge turns them into
probability-weighted expected scores (:mod:`legal_judge.judge.parse`).

The OpenAI adapter asks for them on every call that carries a verdict schema (not from reasoning
models, which refuse them); an endpoint that rejects the parameters (400/422 naming them) is asked
again without, and remembered for the life of the process.
"""

from __future__ import annotations

import re
from typing import Any

from legal_judge.errors import BadRequestError, ProviderError, ProviderUnavailable
from legal_judge.models import DigitToken

__all__ = ["TOP_LOGPROBS", "digit_logprobs", "forget_refusals", "logprob_params",
           "note_refusal", "rejects_logprobs"]

#: Alternatives asked for at each output token (OpenAI allows up to 20).
TOP_LOGPROBS = 5
_DIGIT = re.compile(r"\d")
# (base URL, model) of the endpoints that refused the parameters, for the life of the process.
_REFUSED: set[tuple[str, str]] = set()


def logprob_params(endpoint: tuple[str, str]) -> dict[str, Any]:
    """The request parameters asking an endpoint ``(base URL, model)`` for log-probabilities
    (none once it refused them)."""
    return {} if endpoint in _REFUSED else {"logprobs": True, "top_logprobs": TOP_LOGPROBS}


def note_refusal(error: ProviderError, endpoint: tuple[str, str]) -> bool:
    """Remember an endpoint that refused the parameters; True when ``error`` is that refusal
    and the call is worth repeating without them."""
    if endpoint in _REFUSED or not rejects_logprobs(error):
        return False
    _REFUSED.add(endpoint)
    return True


def forget_refusals() -> None:
    """Forget every refusal (tests, or after reconfiguring a server)."""
    _REFUSED.clear()


def rejects_logprobs(error: ProviderError) -> bool:
    """Whether a provider error is a server refusing the ``logprobs`` parameters."""
    return (isinstance(error, BadRequestError | ProviderUnavailable)
            and error.status in (400, 422) and "logprob" in error.message.lower())


def digit_logprobs(choice: dict[str, Any], text: str) -> list[DigitToken] | None:
    """The digit tokens of a chat-completion choice with their top alternatives.

    Args:
        choice: ``choices[0]`` of a chat completion.
        text: The answer's content.

    Returns:
        The tokens that hold a digit, each with its offset in ``text``; None when the choice has
        no token log-probabilities, or its tokens do not spell ``text`` (the offsets would lie).
    """
    block = choice.get("logprobs")
    content = block.get("content") if isinstance(block, dict) else None
    if not isinstance(content, list) or not content:
        return None
    out: list[DigitToken] = []
    offset = 0
    for entry in content:
        token = entry.get("token") if isinstance(entry, dict) else None
        if not isinstance(token, str) or not isinstance(entry.get("logprob"), int | float):
            return None
        if _DIGIT.search(token):
            top = {str(alt["token"]): float(alt["logprob"])
                   for alt in entry.get("top_logprobs") or []
                   if isinstance(alt, dict) and isinstance(alt.get("logprob"), int | float)}
            top.setdefault(token, float(entry["logprob"]))
            out.append(DigitToken(offset=offset, token=token, logprob=float(entry["logprob"]),
                                  top=top))
        offset += len(token)
    return out if offset == len(text) else None
