"""One cheap request per judge, to tell whether its endpoint answers (``doctor --ping``).

``doctor`` creates every judge as ``run`` does, which proves the spec, the key and the options but
not that anything answers at the URL: an ensemble pointing at a closed port passed every check
and then failed every call of a run. :func:`ping` sends a 1-token completion through the judge's
own adapter (its SDK, its structured-output-free request path, its retry policy), so what it
reaches is what a run would reach. The request is bounded: the caller builds the provider with a
short timeout and at most one retry (:func:`bounded_options`).

A simulated judge has no endpoint ("reachable (simulated)"); a local model runs in process and
is not loaded for a ping (its file was checked when the judge was created).
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from legal_judge.errors import ProviderError
from legal_judge.models import CompletionRequest, Message
from legal_judge.providers.base import Provider, is_simulated_spec

__all__ = ["PING_MAX_RETRIES", "PingResult", "bounded_options", "ping", "ping_all"]

#: Retries of a ping: one, so a blip is forgiven but a dead endpoint is reported in seconds.
PING_MAX_RETRIES = 1

Reach = Literal["reachable", "unreachable", "not pinged"]


@dataclass(frozen=True)
class PingResult:
    """What one ping found.

    Attributes:
        judge: The judge's label.
        endpoint: The URL the request went to (None for a simulated or local judge).
        reach: ``reachable``, ``unreachable`` or ``not pinged``.
        detail: How it answered, or the error (one line, the provider's name left out).
    """

    judge: str
    endpoint: str | None
    reach: Reach
    detail: str

    @property
    def ok(self) -> bool:
        """False only when the endpoint did not answer as a judge must."""
        return self.reach != "unreachable"


def bounded_options(options: Mapping[str, Any], *, timeout_s: float) -> dict[str, Any]:
    """A judge's provider options for a ping: its timeout capped at ``timeout_s``, one retry."""
    out = dict(options)
    out["timeout_s"] = min(float(out.get("timeout_s", timeout_s)), timeout_s)
    out["max_retries"] = min(int(out.get("max_retries", PING_MAX_RETRIES)), PING_MAX_RETRIES)
    return out


def _endpoint(provider: Provider) -> str | None:
    value = getattr(provider, "endpoint", None)
    return str(value) if value else provider.spec.base_url


def _first_line(exc: ProviderError) -> str:
    text = exc.message.splitlines()[0] if exc.message else type(exc).__name__
    prefix = f"{exc.provider}: "
    return text[len(prefix):] if text.startswith(prefix) else text


async def ping(label: str, provider: Provider) -> PingResult:
    """Send one 1-token completion through ``provider``; never raises a provider error.

    Args:
        label: The judge's display name.
        provider: The judge's provider, built with :func:`bounded_options`.
    """
    spec = provider.spec
    if is_simulated_spec(spec.raw):
        return PingResult(label, None, "reachable", "reachable (simulated)")
    if spec.prefix == "local":
        return PingResult(label, None, "not pinged", "local model in process: no endpoint to "
                          "reach (its file was checked; `legal-judge judge --judge "
                          f"{spec.raw} --item ...` loads it)")
    endpoint = _endpoint(provider)
    request = CompletionRequest(model=spec.model, max_tokens=1, temperature=0.0,
                                messages=[Message(role="user", content="ping")])
    try:
        response = await provider.complete(request)
    except ProviderError as exc:
        return PingResult(label, endpoint, "unreachable", _first_line(exc))
    return PingResult(label, endpoint, "reachable", f"reachable: answered in "
                      f"{response.latency_ms:.0f} ms (model {response.model or spec.model})")


async def ping_all(judges: Sequence[tuple[str, Provider]]) -> list[PingResult]:
    """Ping every judge at once (each bounded by its own timeout), in order; providers closed."""
    try:
        return list(await asyncio.gather(*(ping(label, p) for label, p in judges)))
    finally:
        for _, provider in judges:
            await provider.aclose()
