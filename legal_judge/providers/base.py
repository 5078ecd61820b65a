"""The provider contract and what every adapter shares.

A judge spec is one string, ``<prefix>:<model>[@<base_url>]``::

    openai:gpt-4o                                   OPENAI_API_KEY
    anthropic:claude-sonnet-4-5                     ANTHROPIC_API_KEY
    gemini:gemini-2.5-pro                           GEMINI_API_KEY   (Gemini's OpenAI-compatible API)
    mistral:mistral-large-latest                    MISTRAL_API_KEY
    together:meta-llama/Llama-3.1-70B-Instruct-Turbo TOGETHER_API_KEY
    groq:llama-3.1-70b-versatile                    GROQ_API_KEY
    openai-compatible:llama3.1:70b@http://localhost:11434/v1
                                                    OPENAI_COMPATIBLE_API_KEY if set, else none needed
    local:smollm2          local:/path/model.gguf   llama-cpp-python in process (extra 'local')
    simulated:<profile>                             the deterministic simulator (demos and tests only)

The prefix is everything before the first ``:``; the model may itself contain ``:`` (Ollama tags).
A base URL is split off at the LAST ``@`` and only when what follows starts with ``http://`` or
``https://``, so model ids that contain ``@`` (``claude-3-5-sonnet@20240620`` on Vertex) survive.

Adapters implement :class:`Provider`: one ``complete`` coroutine that turns a
:class:`~legal_judge.models.CompletionRequest` into a
:class:`~legal_judge.models.CompletionResponse` or raises a
:class:`~legal_judge.errors.ProviderError` subclass translated from the SDK's exceptions.
Keys are read from the environment when the provider is created and are never put in a message,
a repr or a log line.
"""

from __future__ import annotations

import asyncio
import os
import re
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Protocol, TypeVar, runtime_checkable
from urllib.parse import urlsplit

import httpx
from pydantic import BaseModel, ConfigDict, Field, field_validator

from legal_judge.errors import ConfigError, MissingKeyError
from legal_judge.models import CompletionRequest, CompletionResponse
from legal_judge.providers.retry import RequestRateLimiter, RetryPolicy

__all__ = [
    "CallGate",
    "Provider",
    "ProviderOptions",
    "ProviderSpec",
    "elapsed_ms",
    "is_simulated_spec",
    "normalize_finish_reason",
    "url_problem",
    "parse_spec",
    "read_key",
    "redact",
    "spec_prefix",
]

T = TypeVar("T")

_PREFIX = re.compile(r"^[a-z][a-z0-9_-]*$")
_URL = re.compile(r"^https?://", re.IGNORECASE)
# Key-shaped tokens that servers echo back in auth errors ("Incorrect API key provided: sk-...").
_KEY_LIKE = re.compile(r"\b(?:sk|pk|rk|gsk|key|tgp)[-_][A-Za-z0-9_\-*.]{4,}")


@dataclass(frozen=True)
class ProviderSpec:
    """A parsed judge spec.

    Attributes:
        prefix: the provider name before the first ``:``, e.g. ``openai``.
        model: the model id (or, for ``local``, a model alias or a GGUF path).
        base_url: the URL after ``@``, or None when the spec did not give one.
        raw: the spec string as written.
    """

    prefix: str
    model: str
    base_url: str | None
    raw: str

    def __str__(self) -> str:
        return self.raw


class ProviderOptions(BaseModel):
    """Transport settings for one provider instance; none of them changes a verdict."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    timeout_s: float = Field(default=60.0, gt=0)
    """Per-request timeout in seconds."""
    max_retries: int = Field(default=6, ge=0)
    """Transport retries after the first attempt (429, 5xx, timeouts, connection errors)."""
    max_concurrency: int = Field(default=8, ge=1)
    """Requests in flight at once through this provider instance."""
    requests_per_minute: float | None = Field(default=None, gt=0)
    """Optional cap on request starts per minute."""
    base_url: str | None = None
    """Overrides the endpoint URL (the spec's ``@url`` or the service default)."""
    api_key_env: str | None = None
    """Overrides the environment variable the key is read from."""
    family: str | None = None
    """Overrides the model family derived from the model name."""
    logprobs: bool = True
    """Ask an OpenAI-compatible endpoint for token log-probabilities on verdict calls (each
    rubric's expected score); false where they cost more than they tell (a local llama.cpp
    server computes them token by token, several times slower)."""

    @field_validator("base_url")
    @classmethod
    def _valid_url(cls, value: str | None) -> str | None:
        problem = url_problem(value) if value is not None else None
        if problem:
            raise ValueError(f"malformed URL {value!r} ({problem}); write it as "
                             "http://HOST:PORT/v1")
        return value


@runtime_checkable
class Provider(Protocol):
    """A judge backend: one coroutine from request to response."""

    spec: ProviderSpec
    family: str

    async def complete(self, request: CompletionRequest) -> CompletionResponse:
        """Run one completion; raise a ProviderError subclass on failure."""
        ...

    async def aclose(self) -> None:
        """Release clients and models this provider created."""
        ...


def spec_prefix(spec: str) -> str:
    """The provider prefix of a judge spec as :func:`parse_spec` reads it (lower case; the whole
    text, lowered, when it has no ``:``)."""
    return spec.strip().partition(":")[0].strip().lower()


def is_simulated_spec(spec: str) -> bool:
    """Whether a judge spec names the deterministic simulator (its prefix says so; a model name
    or a judge's words that mention "simulated" do not)."""
    return spec_prefix(spec) == "simulated"


def parse_spec(spec: str) -> ProviderSpec:
    """Parse ``<prefix>:<model>[@<base_url>]`` (see the module docstring for the grammar).

    Args:
        spec: the judge spec as written in config or on the command line.

    Returns:
        The parsed :class:`ProviderSpec`.

    Raises:
        ConfigError: code ``provider-spec-invalid`` when the prefix or model is missing.
    """
    text = spec.strip()
    _, sep, rest = text.partition(":")
    prefix = spec_prefix(text)
    if not sep or not _PREFIX.match(prefix):
        raise ConfigError(
            f"judge spec {spec!r} has no provider prefix",
            code="provider-spec-invalid",
            fix="write it as <provider>:<model>, e.g. openai:gpt-4o or anthropic:claude-sonnet-4-5",
        )
    model, base_url = rest, None
    head, at, tail = rest.rpartition("@")
    if at and _URL.match(tail.strip()):
        model, base_url = head, tail.strip()
        problem = url_problem(base_url)
        if problem:
            raise ConfigError(
                f"judge spec {spec!r}: malformed server URL ({problem})",
                code="provider-url-invalid",
                fix=f"write the server URL as http://HOST:PORT/v1 with a port from 1 to 65535, "
                    f"e.g. {prefix}:{head.strip() or '<model>'}@http://127.0.0.1:8000/v1",
            )
    model = model.strip()
    if not model:
        raise ConfigError(
            f"judge spec {spec!r} names no model",
            code="provider-spec-invalid",
            fix=f"add the model after the prefix, e.g. {prefix}:<model>",
        )
    return ProviderSpec(prefix=prefix, model=model, base_url=base_url, raw=text)


def url_problem(url: str) -> str | None:
    """What is wrong with a server URL (a short phrase), or None when it is well formed.

    Checked when a spec or config is read, so a typo fails before any run exists instead of as
    an internal error (or a failed call per item) halfway through a paid run.
    """
    if not _URL.match(url):
        return "it must start with http:// or https://"
    if any(c.isspace() for c in url):
        return "it contains a space"
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError as exc:
        detail = str(exc)
        if "cast to integer" in detail:
            return "the port is not a number"
        if "out of range" in detail:
            return "the port is above 65535"
        if "IPv6" in detail:
            return "an IPv6 address must be closed with ']'"
        return detail
    if not parts.hostname:
        return "it names no host"
    if port == 0:
        return "the port is 0"
    try:
        httpx.URL(url)
    except httpx.InvalidURL as exc:
        return str(exc)
    return None


def read_key(env_var: str, *, provider: str) -> str:
    """Read an API key from the environment.

    Raises:
        MissingKeyError: the variable is unset or blank; the error names the variable.
    """
    value = os.environ.get(env_var, "").strip()
    if not value:
        raise MissingKeyError(env_var, provider=provider)
    return value


def redact(text: str, *secrets: str | None) -> str:
    """Remove secrets and key-shaped tokens from text a server sent back."""
    for secret in secrets:
        if secret and len(secret) >= 4:
            text = text.replace(secret, "***")
    return _KEY_LIKE.sub("***", text)


_FINISH_REASONS = {
    "length": "length",
    "max_tokens": "length",
    "model_context_window_exceeded": "length",
    "stop": "stop",
    "end_turn": "stop",
    "stop_sequence": "stop",
    "tool_use": "stop",  # we force the tool call, so a tool_use stop is a normal completion
    "tool_calls": "stop",
    "refusal": "refusal",
    "content_filter": "content_filter",
}


def normalize_finish_reason(reason: str | None) -> str | None:
    """Map provider stop reasons onto ``stop`` / ``length`` / ``refusal`` / ``content_filter``.

    Unknown reasons pass through unchanged so nothing is hidden.
    """
    if reason is None:
        return None
    return _FINISH_REASONS.get(reason, reason)


def elapsed_ms(start: float) -> float:
    """Milliseconds since ``start`` (a ``time.perf_counter()`` reading)."""
    return round((time.perf_counter() - start) * 1000.0, 3)


class CallGate:
    """Per-provider limits: a concurrency semaphore, an optional RPM limiter and the retry policy.

    Retries wait outside the semaphore, so a backing-off call does not block other calls.
    """

    def __init__(self, options: ProviderOptions, *, retry: RetryPolicy | None = None) -> None:
        self.retry = retry or RetryPolicy(max_retries=options.max_retries)
        self._semaphore = asyncio.Semaphore(options.max_concurrency)
        self._limiter = (
            # Looked up per call, so a sleep injected into ``retry`` later applies here too.
            RequestRateLimiter(options.requests_per_minute, sleep=lambda s: self.retry.sleep(s))
            if options.requests_per_minute
            else None
        )

    async def run(self, attempt: Callable[[], Awaitable[T]]) -> tuple[T, int]:
        """Run ``attempt`` under the limits with retries; return the result and retry count."""

        async def limited() -> T:
            if self._limiter is not None:
                await self._limiter.acquire()
            async with self._semaphore:
                return await attempt()

        return await self.retry.run(limited)
