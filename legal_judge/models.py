"""Pydantic boundary types shared by every module.

Files, SQLite rows, provider calls and JSON reports cross module boundaries as these types;
inside a module plain dataclasses are fine.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, SkipValidation

__all__ = [
    "BenchmarkItem",
    "CallContext",
    "CompletionRequest",
    "CompletionResponse",
    "DigitToken",
    "EnsembleResult",
    "JudgeWeight",
    "Message",
    "Usage",
    "Verdict",
]

Role = Literal["system", "user", "assistant"]
HallucinationResult = Literal["clean", "hallucinated", "uncertain"]
Overall = Literal["pass", "fail"]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class BenchmarkItem(_Strict):
    """One row of a benchmark dataset: a prompt and the answer of the system under test."""

    id: str = Field(min_length=1, max_length=256)
    prompt: str = Field(min_length=1)
    response: str
    jurisdiction: str | None = None
    expected_signals: list[str] = Field(default_factory=list)
    system_under_test: str | None = None
    dataset: str | None = None
    #: A critical item may not go from pass to fail in a release (``compare``'s flip guard).
    critical: bool = False
    metadata: dict[str, Any] = Field(default_factory=dict)


class Message(_Strict):
    """One chat message sent to a provider."""

    role: Role
    content: str


@dataclass(frozen=True, slots=True)
class CallContext:
    """Who makes one provider call and why: it rides on the request, outside its cache key.

    The way httpx carries ``Request.extensions``: the call log (run, item, judge, purpose,
    attempt), a batch's custom id (``slot``, else the item's position), batch pricing and the
    Langfuse generation read it; the provider's answer never depends on it, so two requests that
    differ only here share a cache entry.

    Attributes:
        run: The run or audit the call is logged under; None logs nothing.
        item: The item (or audit variant) the call is about.
        judge: The judge's display name.
        purpose: ``verdict``, ``self_debias``, ``audit``, ``audit-pairwise`` or ``pairwise``.
        attempt: The JSON attempt, from 1.
        slot: An audit's call slot (pair task and step), which stands for the item's position
            in a batch custom id; None outside a batched audit.
    """

    run: str | None
    item: str
    judge: str = ""
    purpose: str = "verdict"
    attempt: int = 1
    slot: int | None = None


class CompletionRequest(_Strict):
    """Everything a provider needs for one call; its canonical JSON is the cache key.

    ``context`` (who calls and why) is carried beside the body: excluded from every dump, so it is
    in no cache key, no stored request summary and no wire body.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    model: str
    messages: list[Message]
    temperature: float = 0.0
    max_tokens: int = 1024
    json_schema: dict[str, Any] | None = None
    schema_name: str = "verdict"
    seed: int | None = None
    # Not validated: a frozen dataclass the code builds itself, set on every call.
    context: SkipValidation[CallContext | None] = Field(default=None, exclude=True, repr=False)

    def with_context(self, context: CallContext | None) -> CompletionRequest:
        """This request carrying ``context`` (the body, and so the cache key, unchanged)."""
        return self if context is self.context else self.model_copy(update={"context": context})


class Usage(_Strict):
    """Token usage reported by the provider (None when the provider did not say)."""

    input_tokens: int | None = None
    output_tokens: int | None = None


class DigitToken(_Strict):
    """One output token holding a digit: where it starts in the answer text, its log-probability,
    and the provider's top alternatives at that position (token -> log-probability).

    Only digit tokens are kept (a score is a digit), so a cached response stays small.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    offset: int
    token: str
    logprob: float
    top: dict[str, float] = Field(default_factory=dict)


class CompletionResponse(_Strict):
    """What a provider returned for one call.

    ``digit_logprobs`` is None when the provider returned no token log-probabilities (most
    providers, and every response cached before they were asked for).
    """

    text: str
    model: str
    usage: Usage = Field(default_factory=Usage)
    finish_reason: str | None = None
    refusal: str | None = None
    latency_ms: float = 0.0
    cached: bool = False
    retries: int = 0
    structured_mode: str | None = None
    digit_logprobs: list[DigitToken] | None = None
    #: Answered through a provider batch (priced at the batch rate); never stored or cached.
    batched: bool = Field(default=False, exclude=True)


class Verdict(_Strict):
    """One judge's verdict on one item.

    ``inconclusive``: three invalid outputs (raw kept); ``error``: the provider failed after transport
    retries (retried by ``--resume``). Neither carries scores: a judge never invents a 0.
    """

    judge_id: str
    judge: str
    family: str
    status: Literal["ok", "inconclusive", "error"]
    scores: dict[str, float] = Field(default_factory=dict)
    hallucination: HallucinationResult | None = None
    rationales: dict[str, str] = Field(default_factory=dict)
    overall: Overall | None = None
    rule_fail_reasons: list[str] = Field(default_factory=list)
    summary: str = ""
    reason: str | None = None
    raw: str = ""
    attempts: int = 1
    input_tokens: int | None = None
    output_tokens: int | None = None
    cost_usd: float | None = None
    latency_ms: float = 0.0
    cached: bool = False
    extra: dict[str, Any] = Field(default_factory=dict)


class JudgeWeight(_Strict):
    """The weight one judge carried on one item, and why (a value: frozen, so the items that
    share a weighting share one instance instead of a copy each)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    judge: str
    family: str
    weight: float
    same_family: bool
    reason: str


class EnsembleResult(_Strict):
    """The ensemble's decision on one item."""

    item_id: str
    status: Literal["ok", "inconclusive"]
    scores: dict[str, float] = Field(default_factory=dict)
    raw_scores: dict[str, float] = Field(default_factory=dict)
    hallucination: HallucinationResult | None = None
    overall: Overall | None = None
    raw_overall: Overall | None = None  # the judges' weighted vote, before a rule forced a fail
    rule_fail_reasons: list[str] = Field(default_factory=list)  # the rules that forced a fail
    weights: list[JudgeWeight] = Field(default_factory=list)
    votes: dict[str, float] = Field(default_factory=dict)
    valid_judges: int = 0
    disagreement: dict[str, dict[str, float]] = Field(default_factory=dict)
    flagged_for_review: bool = False
    flags: list[str] = Field(default_factory=list)
    overrides: list[str] = Field(default_factory=list)
    checks: dict[str, Any] = Field(default_factory=dict)
    reason: str | None = None
    #: Per rubric, the weighted mean of the judges' log-probability expected scores (only the
    #: judges whose provider returned log-probabilities; empty when none did).
    expected_scores: dict[str, float] = Field(default_factory=dict)
