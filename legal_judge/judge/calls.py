"""One judge's provider calls: the one JSON retry loop, the cache key, single flight, the provider
cache and the call log.

**The retry loop** (:func:`run_attempts`, with usage and cost: every judgment that must come back as
JSON uses it). The policy is DESIGN's: the first attempt at the configured temperature, then up to
two more at 0.2 and 0.4 with the ``json_retry`` instruction ("Your previous output was not valid
JSON. Ensure the response strictly conforms to the output schema.") and the parse error appended.
An output truncated at ``max_tokens`` is invalid even when it happens to parse; a refusal is named
as such. After three invalid outputs the outcome is inconclusive with every raw output kept: the
caller never gets a default in place of an answer. Used by the judge's verdicts and self-debias
pass, the audit's targets (legal-judge's judge and generic ones) and the debias experiment's
pairwise judge.

**Each call** (:class:`Calls`) is answered from the provider cache when its key is there (a key of
what changes the output: provider, base URL, model, messages, parameters, schema; not timeouts or
retry settings); a request identical to one in flight waits for it and is answered as a cache hit,
as it would be a moment later; otherwise the provider is called. The call's log row and its
response's cache entry go to the caller's :class:`~legal_judge.store.PendingWrites` (committed with
the verdict they lead to, in one commit), or are committed at once when the caller gives none.
"""

from __future__ import annotations

import asyncio
import hashlib
import marshal
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field, replace
from typing import Any, Generic, TypeVar

from legal_judge.assets.catalogue import Assets
from legal_judge.errors import ProviderError
from legal_judge.judge.parse import ParseError
from legal_judge.models import (
    CallContext,
    CompletionRequest,
    CompletionResponse,
    DigitToken,
    Message,
    Verdict,
)
from legal_judge.store import PendingWrites, Store, canonical_json

__all__ = ["RETRY_TEMPERATURES", "Attempts", "Calls", "Complete", "add_counts", "call_cost",
           "call_summary", "run_attempts", "with_batch_calls"]


class Calls:
    """The calls of one judge (``label``) to ``provider``, through ``store`` when one is given.

    Args:
        provider: An object with ``spec`` and ``async complete(request)``.
        label: The judge's display name (the call log's ``judge``).
        store: Where calls are logged and responses cached; None disables both.
        use_cache: Read the provider cache (writes happen whenever a store is given).
        coalesce: Identical concurrent requests share one call (a provider that ``parks``
            requests, batching, coalesces them itself).
    """

    def __init__(self, provider: Any, *, label: str, store: Store | None, use_cache: bool = True,
                 coalesce: bool = True) -> None:
        self.provider = provider
        self.label = label
        self.store = store
        self.use_cache = use_cache
        self.coalesce = coalesce
        # Cache key -> the call in flight for it; None tells the waiting callers that it failed.
        self._in_flight: dict[str, asyncio.Future[CompletionResponse | None]] = {}

    def cache_key(self, request: CompletionRequest) -> str:
        """Key of what changes the output: provider, model, base URL, messages, parameters, schema."""
        return self._key(_Parts(request))

    def _key(self, parts: _Parts) -> str:
        spec = self.provider.spec
        # The URL actually used (a default endpoint or an options override), not only the spec's.
        base_url = getattr(self.provider, "base_url", None) or getattr(spec, "base_url", None)
        # Hash the message texts directly: JSON-encoding ~10 KB of prompt per call is the slow part.
        h = hashlib.sha256()
        h.update(canonical_json({"provider": spec.prefix, "base_url": base_url,
                                 **parts.head}).encode())
        h.update(b"\x00" + parts.schema_digest.encode())
        for role, content in zip(parts.roles, parts.contents, strict=True):
            h.update(b"\x00" + role + b"\x1f" + content)
        return h.hexdigest()

    async def complete(self, request: CompletionRequest,
                       writes: PendingWrites | None = None) -> CompletionResponse:
        """One provider call through the cache and single flight, logged in the store under the
        request's :class:`~legal_judge.models.CallContext` (no context: not logged).

        An audit's variants and a benchmark's repeated items often render the same request, and
        concurrency would otherwise pay for each.

        Args:
            writes: Where the call's log row and cache entry wait for the caller's commit; what
                waits there already (an earlier attempt) is committed before the call is awaited,
                so nothing paid for waits on the provider. None: committed at once.
        """
        store = self.store
        if store is None:
            return await self._send(request, "", None, None)
        if writes is None:
            own = store.writes()
            try:
                return await self.complete(request, own)
            finally:
                own.flush()
        parts = _Parts(request)  # what the cache key and the call log's digests share
        key = self._key(parts)
        # A provider that parks requests (batching) coalesces them itself: a caller waiting here
        # for another's call would never park, and the batch round would wait for it forever.
        shared = self.use_cache and self.coalesce and not getattr(self.provider, "parks", False)
        if self.use_cache:
            hit = store.cache_get(key)
            if hit is None and shared and key in self._in_flight:
                writes.flush()
                first = await asyncio.shield(self._in_flight[key])
                hit = None if first is None else first.model_dump()
            if hit is not None:
                resp = CompletionResponse.model_validate({**hit, "cached": True, "latency_ms": 0.0,
                                                          "retries": 0})
                self._log(writes, request, parts, resp, None)
                return resp
        writes.flush()
        if not shared:
            return await self._send(request, key, writes, parts)
        done: asyncio.Future[CompletionResponse | None] = asyncio.get_running_loop().create_future()
        self._in_flight[key] = done
        answer: CompletionResponse | None = None
        try:
            answer = await self._send(request, key, writes, parts)
            return answer
        finally:
            if self._in_flight.get(key) is done:
                del self._in_flight[key]
            done.set_result(answer)

    async def _send(self, request: CompletionRequest, key: str, writes: PendingWrites | None,
                    parts: _Parts | None) -> CompletionResponse:
        try:
            resp: CompletionResponse = await self.provider.complete(request)
        except ProviderError as exc:
            self._log(writes, request, parts, None, str(exc), retries=getattr(exc, "retries", 0))
            raise
        if writes is not None:
            writes.cache(key, provider=self.provider.spec.prefix, model=self.provider.spec.model,
                         response=resp.model_dump(exclude={"cached", "latency_ms", "retries"}))
            self._log(writes, request, parts, resp, None)
        return resp

    def _log(self, writes: PendingWrites | None, request: CompletionRequest,
             parts: _Parts | None, resp: CompletionResponse | None,
             error: str | None, *, retries: int = 0) -> None:
        """Queue the call's log row (nothing without a store, a context or a run)."""
        ctx = request.context
        if writes is None or ctx is None or ctx.run is None or parts is None:
            return
        writes.call(
            ctx.run, ctx.item, self.label, purpose=ctx.purpose, attempt=ctx.attempt,
            request=parts.summary(),
            response_text=resp.text if resp else None,
            usage=resp.usage.model_dump() if resp else None,
            latency_ms=resp.latency_ms if resp else None, cached=bool(resp and resp.cached),
            retries=resp.retries if resp else retries, error=error,
        )


    def judgment_ended(self) -> None:
        """Tell a provider that collects calls into batches that one judgment (a chain of calls)
        has ended: a batch round waits until every judgment has parked a call or ended."""
        ended = getattr(self.provider, "judgment_ended", None)
        if ended is not None:
            ended()


class _Parts:
    """What the cache key and the call log's summary of one request share, computed once: the
    parameters, the schema's digest, the messages as bytes."""

    def __init__(self, request: CompletionRequest) -> None:
        self.head = request.model_dump(exclude={"messages", "json_schema"})
        self.has_schema = request.json_schema is not None
        self.schema_digest = _schema_digest(request.json_schema)
        self.roles = [m.role.encode() for m in request.messages]
        self.contents = [m.content.encode() for m in request.messages]

    def summary(self) -> dict[str, Any]:
        out = dict(self.head)
        out["n_messages"] = len(self.contents)
        out["messages_sha256"] = hashlib.sha256(b"\x1e".join(self.contents)).hexdigest()[:16]
        if self.has_schema:
            out["json_schema_sha256"] = self.schema_digest[:16]
        return out


# Schema digests by the schema's exact content: a run sends the same few schemas thousands of
# times, each request holding its own copy. The memo key is the schema's marshal (format 2: no
# back-references, so the same content in the same order gives the same bytes): it tells 1 from
# 1.0 and True, as the canonical JSON does (== would not), at a tenth of the cost of encoding it.
_SCHEMA_DIGESTS: dict[bytes, str] = {}


def _schema_digest(schema: dict[str, Any] | None) -> str:
    if schema is None:
        return "none"
    try:
        exact = marshal.dumps(schema, 2)
    except ValueError:  # a value marshal cannot write: no memo
        return hashlib.sha256(canonical_json(schema).encode()).hexdigest()
    digest = _SCHEMA_DIGESTS.get(exact)
    if digest is None:
        digest = hashlib.sha256(canonical_json(schema).encode()).hexdigest()
        if len(_SCHEMA_DIGESTS) >= 64:
            _SCHEMA_DIGESTS.clear()
        _SCHEMA_DIGESTS[exact] = digest
    return digest


def call_summary(request: CompletionRequest) -> dict[str, Any]:
    """What the call log keeps of a request: parameters, and digests of the bulky parts."""
    return _Parts(request).summary()


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
