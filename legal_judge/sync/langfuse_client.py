"""The one Langfuse SDK client of the process (SDK v5), its time budget and its error vocabulary.

Spans go through a recording OTLP exporter (so a failed export is known, not only logged) and a
tracer whose span ids can be seeded (:func:`seeded_span_id`), so a resend updates the same
observations instead of duplicating them. Requests made under a :class:`Deadline` get the time that
is left and no SDK retries: a failure leaves the outbox row pending for the next sync.

The settings come from :mod:`legal_judge.sync.settings`; every ``langfuse_*`` module of this
package reaches Langfuse through :func:`client_for`.
"""

from __future__ import annotations

import base64
import contextvars
import math
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from langfuse import Langfuse
from langfuse import __version__ as sdk_version
from opentelemetry.exporter.otlp.proto.http import Compression
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SpanExporter, SpanExportResult
from opentelemetry.sdk.trace.id_generator import IdGenerator, RandomIdGenerator

from legal_judge.errors import SyncError
from legal_judge.sync.settings import LangfuseSettings

__all__ = [
    "Deadline",
    "LangfuseClient",
    "RecordingExporter",
    "Undeliverable",
    "client_for",
    "project_id",
    "refusal",
    "request_options",
    "seeded_span_id",
]

_NEXT_SPAN_ID: contextvars.ContextVar[int | None] = contextvars.ContextVar("lj_span_id", default=None)


class _SeededIds(IdGenerator):
    """Span ids from a context variable when set (deterministic observations), else random."""

    def __init__(self) -> None:
        self._random = RandomIdGenerator()

    def generate_span_id(self) -> int:
        return _NEXT_SPAN_ID.get() or self._random.generate_span_id()

    def generate_trace_id(self) -> int:
        return self._random.generate_trace_id()


@contextmanager
def seeded_span_id(span: int) -> Iterator[None]:
    """The next span the client's tracer starts inside this block gets id ``span``."""
    token = _NEXT_SPAN_ID.set(span)
    try:
        yield
    finally:
        _NEXT_SPAN_ID.reset(token)


class RecordingExporter(SpanExporter):
    """The SDK's OTLP exporter, counting exports that failed (the SDK only logs them)."""

    def __init__(self, inner: SpanExporter) -> None:
        self.inner, self.failures, self.exported = inner, 0, 0

    def export(self, spans: Any) -> SpanExportResult:
        try:
            result = self.inner.export(spans)
        except Exception:  # transport errors must count as failures, never escape the BSP thread
            result = SpanExportResult.FAILURE
        if result == SpanExportResult.SUCCESS:
            self.exported += len(spans)
        else:
            self.failures += 1
        return result

    def shutdown(self) -> None:
        self.inner.shutdown()

    def force_flush(self, timeout_millis: int = 30000) -> bool:
        return True


@dataclass
class LangfuseClient:
    """The SDK client with the tracer provider and exporter it sends spans through."""

    settings: LangfuseSettings
    lf: Langfuse
    provider: TracerProvider
    exporter: RecordingExporter


_CLIENT: LangfuseClient | None = None


def client_for(settings: LangfuseSettings) -> LangfuseClient:
    """One client per settings; a change of settings shuts the old one down (SDK singletons)."""
    global _CLIENT
    if _CLIENT is not None and _CLIENT.settings == settings:
        return _CLIENT
    if _CLIENT is not None:
        from langfuse._client.resource_manager import LangfuseResourceManager  # private: reset

        _CLIENT.provider.shutdown()
        LangfuseResourceManager.reset()
    auth = base64.b64encode(f"{settings.public_key}:{settings.secret_key}".encode()).decode()
    # the same endpoint and headers the SDK's own exporter uses
    otlp = OTLPSpanExporter(
        endpoint=f"{settings.base_url}/api/public/otel/v1/traces",
        headers={"Authorization": f"Basic {auth}", "x-langfuse-sdk-name": "python",
                 "x-langfuse-sdk-version": sdk_version, "x-langfuse-public-key": settings.public_key,
                 "x-langfuse-ingestion-version": "4"},
        timeout=settings.timeout_s, compression=Compression.Gzip)
    exporter = RecordingExporter(otlp)
    provider = TracerProvider(id_generator=_SeededIds())
    lf = Langfuse(public_key=settings.public_key, secret_key=settings.secret_key,
                  base_url=settings.base_url, timeout=math.ceil(settings.timeout_s),
                  tracer_provider=provider, span_exporter=exporter, sample_rate=1.0,
                  flush_interval=0.2)
    _CLIENT = LangfuseClient(settings, lf, provider, exporter)
    return _CLIENT


def request_options(timeout_s: float) -> Any:
    """Options for one SDK API request: this timeout (whole seconds, at least 1), no retries."""
    return {"timeout_in_seconds": max(1, math.ceil(timeout_s)), "max_retries": 0}


class Deadline:
    """The time budget of one delivery; each request gets what is left of it."""

    def __init__(self, seconds: float) -> None:
        self.end = time.monotonic() + seconds

    def left(self) -> float:
        """Seconds left (negative once the budget is spent)."""
        return self.end - time.monotonic()

    def options(self) -> Any:
        """The request options for the next request, or TimeoutError when no time is left."""
        left = self.left()
        if left <= 0:
            raise TimeoutError("flush timeout reached")
        return request_options(left)


_PROJECT_IDS: dict[LangfuseSettings, str] = {}


def project_id(c: LangfuseClient) -> str:
    """The project the keys belong to (the experiment id derives from it); asked once."""
    if c.settings not in _PROJECT_IDS:
        got = c.lf.api.projects.get(request_options=request_options(c.settings.timeout_s))
        if not got.data:
            raise SyncError("Langfuse returned no project for these keys",
                            fix="check LANGFUSE_PUBLIC_KEY and LANGFUSE_SECRET_KEY")
        _PROJECT_IDS[c.settings] = str(got.data[0].id)
    return _PROJECT_IDS[c.settings]


class Undeliverable(Exception):
    """An entity no retry can deliver as it stands: it is parked with this reason and fix."""

    def __init__(self, reason: str, fix: str) -> None:
        super().__init__(reason)
        self.reason, self.fix = reason, fix


def refusal(exc: Exception) -> tuple[str, str] | None:
    """Reason and fix when Langfuse refused this content (a resend would not help), else None."""
    if isinstance(exc, Undeliverable):
        return exc.reason, exc.fix
    status = getattr(exc, "status_code", None)
    if status in (400, 404, 413, 422):
        body = str(getattr(exc, "body", "") or exc)[:300]
        return (f"Langfuse refused it (HTTP {status}): {body}",
                "correct what Langfuse names (or upgrade legal-judge); the next "
                "`legal-judge sync` retries it")
    return None
