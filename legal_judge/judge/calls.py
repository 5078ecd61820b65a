"""One judge's provider calls: the cache key, single flight, the provider cache and the call log.

A call is answered from the provider cache when its key is there (a key of what changes the output:
provider, base URL, model, messages, parameters, schema; not timeouts or retry settings); a request
identical to one in flight waits for it and is answered as a cache hit, as it would be a moment
later; otherwise the provider is called. The call's log row and its response's cache entry go to
the caller's :class:`~legal_judge.store.pending.PendingWrites` (committed with the verdict they
lead to, in one commit), or are committed at once when the caller gives none.
"""

from __future__ import annotations

import asyncio
import hashlib
import marshal
from typing import Any

from legal_judge.errors import ProviderError
from legal_judge.models import CompletionRequest, CompletionResponse
from legal_judge.store import PendingWrites, Store, canonical_json

__all__ = ["Calls", "call_summary"]


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
