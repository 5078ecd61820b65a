"""The one JSON retry loop, with usage and cost: every judgment that must come back as JSON uses it.

The policy is DESIGN's: the first attempt at the configured temperature, then up to two more at 0.2
and 0.4 with the ``json_retry`` instruction ("Your previous output was not valid JSON. Ensure the
response strictly conforms to the output schema.") and the parse error appended. An output truncated
at ``max_tokens`` is invalid even when it happens to parse; a refusal is named as such. After three
invalid outputs the outcome is inconclusive with every raw output kept: the caller never gets a
default in place of an answer. Used by the judge's verdicts and self-debias pass, the audit's targets
(legal-judge's judge and generic ones) and the debias experiment's pairwise judge.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field, replace
from typing import Any, Generic, TypeVar

from legal_judge.assets.catalogue import Assets
from legal_judge.judge.parse import ParseError
from legal_judge.models import (
    CallContext,
    CompletionRequest,
    CompletionResponse,
    DigitToken,
    Message,
    Verdict,
)

__all__ = ["RETRY_TEMPERATURES", "Attempts", "Complete", "add_counts", "call_cost", "run_attempts",
           "with_batch_calls"]

RETRY_TEMPERATURES = (0.0, 0.2, 0.4)
T = TypeVar("T")

#: One provider call (its attempt is in the request's context), through whatever cache and call log
#: the caller keeps.
Complete = Callable[[CompletionRequest], Awaitable[CompletionResponse]]


def call_cost(provider: str, model: str, resp: CompletionResponse) -> float | None:
    """The USD cost of one response: 0 for a cache hit (no call was made), the batch rate for an
    answer that came through a provider batch, None when unpriced."""
    from legal_judge.providers.pricing import cost_usd

    if resp.cached:
        return 0.0
    return cost_usd(model, resp.usage.input_tokens, resp.usage.output_tokens, provider=provider,
                    batch=resp.batched)


def add_counts(a: int | None, b: int | None) -> int | None:
    """A sum of token counts, None as soon as one is unknown (a sum with a hole is not a sum)."""
    return None if a is None or b is None else a + b


def with_batch_calls(verdict: Verdict, calls: int) -> Verdict:
    """The verdict noting how many of its calls went through a provider batch (at batch rates,
    already in its cost); unchanged when none did."""
    if not calls:
        return verdict
    extra = {k: v for k, v in verdict.extra.items() if k != "batch_calls"}
    return verdict.model_copy(update={"extra": {**extra, "batch_calls": calls}})


@dataclass
class Attempts(Generic[T]):
    """The outcome of :func:`run_attempts`: the parsed answer (when ``ok``), the raw outputs, usage.

    Tokens and cost are None as soon as one call's are unknown (a sum with a hole is not a sum).
    """

    ok: bool = False
    value: T | None = None
    error: str = ""  # the last attempt's parse error (empty when ok)
    raw: list[str] = field(default_factory=list)
    calls: int = 0
    input_tokens: int | None = 0
    output_tokens: int | None = 0
    cost_usd: float | None = 0.0
    latency_ms: float = 0.0
    cached: bool = True
    #: The last response's digit tokens with their log-probabilities (None: the provider gave none).
    logprobs: list[DigitToken] | None = None
    batched: int = 0  # calls answered through a provider batch (not coalesced)

    @property
    def status(self) -> str:
        """``ok`` or ``inconclusive``."""
        return "ok" if self.ok else "inconclusive"

    @property
    def reason(self) -> str | None:
        """Why there is no answer (None when ok)."""
        return None if self.ok else f"invalid output after {self.calls} attempts: {self.error}"

    def add(self, resp: CompletionResponse, cost: float | None) -> None:
        """Count one response."""
        self.calls += 1
        self.raw.append(resp.text)
        self.logprobs = resp.digit_logprobs
        self.latency_ms += resp.latency_ms
        self.cached = self.cached and resp.cached
        self.batched += resp.batched and not resp.cached
        self.input_tokens = add_counts(self.input_tokens, resp.usage.input_tokens)
        self.output_tokens = add_counts(self.output_tokens, resp.usage.output_tokens)
        self.cost_usd = None if self.cost_usd is None or cost is None else self.cost_usd + cost


async def run_attempts(
    complete: Complete, messages: list[Message], parse: Callable[[str], T], *, assets: Assets,
    provider: str, model: str, temperature: float, max_tokens: int,
    json_schema: dict[str, Any] | None, schema_name: str = "verdict", seed: int | None = None,
    context: CallContext | None = None,
) -> Attempts[T]:
    """Call, parse, and retry with the JSON retry instruction; inconclusive after three failures.

    Args:
        complete: Makes one call (the caller's cache, single flight and call log).
        messages: The conversation of the first attempt.
        parse: Text -> answer; raises :class:`~legal_judge.judge.parse.ParseError` when invalid.
        assets: Where the ``json_retry`` template comes from.
        provider: The spec prefix, for pricing (:func:`call_cost`).
        model: The model the requests name.
        temperature: The first attempt's temperature (retries use 0.2 and 0.4).
        max_tokens: The output limit of every attempt.
        json_schema: The schema sent to providers that enforce one (None: none).
        schema_name: The schema's name (a tool name for some providers).
        seed: The request seed (a noise-floor repeat's, or None).
        context: Who calls and why; each attempt's request carries it with its attempt number.

    Raises:
        ProviderError: from ``complete``; the caller decides what a failed call means.
    """
    out: Attempts[T] = Attempts()
    convo = list(messages)
    for attempt, retry_temperature in enumerate(RETRY_TEMPERATURES, start=1):
        request = CompletionRequest(
            model=model, messages=convo, temperature=temperature if attempt == 1 else retry_temperature,
            max_tokens=max_tokens, json_schema=json_schema, schema_name=schema_name, seed=seed,
            # The same call's context at this attempt (no method call: one less module per call).
            context=(context if context is None or context.attempt == attempt
                     else replace(context, attempt=attempt)),
        )
        resp = await complete(request)
        out.add(resp, call_cost(provider, model, resp))
        try:
            if resp.finish_reason == "length":
                raise ParseError("the output was truncated at max_tokens")
            out.value = parse(resp.text)
        except ParseError as exc:
            out.error = f"the model refused: {resp.refusal}" if resp.refusal else str(exc)
            convo = [*convo, Message(role="assistant", content=resp.text or "(empty)"),
                     Message(role="user", content=assets.template("json_retry").render(error=out.error))]
            continue
        out.ok, out.error = True, ""
        return out
    return out
