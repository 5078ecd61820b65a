"""What the two SDK adapters (``openai``, ``anthropic``) share: the SDK client they build on
first use, and the translation of SDK and transport errors into legal_judge errors.

Both SDKs name their errors alike and take the same client arguments, so one function serves each
concern for both; the adapters keep only what differs (the request and response shapes).
"""

from __future__ import annotations

import socket
from collections.abc import Callable
from typing import Any, Generic, Protocol, TypeVar

from legal_judge.errors import ProviderError, ProviderUnavailable
from legal_judge.providers.base import redact
from legal_judge.providers.retry import error_for_status

__all__ = [
    "LazySDK",
    "connection_failure",
    "error_for_sdk",
    "raise_transport_failure",
    "transport_failure",
]


def connection_failure(exc: BaseException, *, endpoint: str | None = None,
                       secret: str | None = None) -> str:
    """What a connection error means, in the words a user acts on, with the endpoint it hit.

    The SDKs say "All connection attempts failed" for a closed port; the refusal itself is a few
    causes down the chain (``ConnectionRefusedError``), and it is what tells a user the server is
    not running there (a run of a dead ensemble said only the SDK's words, for every call).
    """
    at = f" at {endpoint}" if endpoint else ""
    seen: set[int] = set()
    link: BaseException | None = exc
    while link is not None and id(link) not in seen:
        seen.add(id(link))
        if isinstance(link, ConnectionRefusedError):
            return f"connection refused{at}"
        if isinstance(link, socket.gaierror):
            return f"host not found{at} (name resolution failed)"
        link = link.__cause__ or link.__context__
    return f"connection failed{at}: {redact(str(exc.__cause__ or exc), secret)}"


def error_for_sdk(exc: Exception, sdk: Any, *, provider: str, timeout_s: float,
                  secret: str | None, key_env: str | None,
                  status_message: Callable[[Any], str],
                  endpoint: str | None = None) -> ProviderError:
    """An ``openai`` or ``anthropic`` SDK error as the matching legal_judge error, key redacted.

    Both SDKs name their errors alike (``APITimeoutError``, ``APIConnectionError``,
    ``APIStatusError``); ``status_message`` reads the provider's message from a status error;
    ``endpoint`` (the base URL) is named in a connection failure.
    """
    if isinstance(exc, sdk.APITimeoutError):
        return ProviderUnavailable(f"timed out after {timeout_s:g}s", provider=provider)
    if isinstance(exc, sdk.APIConnectionError):
        return ProviderUnavailable(connection_failure(exc, endpoint=endpoint, secret=secret),
                                   provider=provider)
    if isinstance(exc, sdk.APIStatusError):
        return error_for_status(exc.status_code, redact(status_message(exc), secret),
                                provider=provider, headers=exc.response.headers, key_env=key_env)
    return ProviderError(f"unexpected response: {redact(str(exc), secret)}", provider=provider)


_HTTP_STACKS = frozenset({"httpcore", "httpcore2", "httpx", "httpx2"})


def transport_failure(exc: BaseException, *, provider: str, timeout_s: float,
                      endpoint: str | None = None) -> ProviderUnavailable | None:
    """A low-level HTTP error an SDK let through unwrapped, as a retryable failure; else None.

    Seen under CI load: ``httpcore2.ReadTimeout`` escaped the openai SDK (it wraps the same
    timeout as ``APITimeoutError`` elsewhere) and ended a whole run instead of being retried.
    Matched by the HTTP stack's base class names, so httpx/httpcore and their ``2`` forks alike.
    """
    for cls in type(exc).__mro__:
        if cls.__module__.split(".")[0] not in _HTTP_STACKS:
            continue
        if cls.__name__ == "TimeoutException":
            return ProviderUnavailable(f"timed out after {timeout_s:g}s", provider=provider)
        if cls.__name__ in {"NetworkError", "ProtocolError", "TransportError"}:
            what = connection_failure(exc, endpoint=endpoint)
            if what.startswith("connection failed"):
                what = f"connection failed{f' at {endpoint}' if endpoint else ''}: " \
                       f"{type(exc).__name__}"
            return ProviderUnavailable(what, provider=provider)
    return None


class _Closable(Protocol):
    async def close(self) -> None: ...


SDK = TypeVar("SDK", bound=_Closable)


class LazySDK(Generic[SDK]):
    """An ``openai`` or ``anthropic`` SDK client as every adapter holds it: built on the first
    call that goes to the provider (a rerun answered from the cache never pays for the client and
    its SSL context) and closed only if it was built. The SDK makes no retry of its own: our
    RetryPolicy is the only retry layer, so retries are counted.

    Args:
        sdk_class: The SDK's async client class.
        api_key: The key read from the environment.
        base_url: The endpoint, or None for the SDK's own.
        timeout_s: The per-request timeout.
        http_client: The HTTP client to send through, or None for the SDK's own.
        prepare: Adjusts the client once it is built (an OpenAI-compatible endpoint clears the
            OpenAI organisation the SDK reads from the environment).
    """

    def __init__(self, sdk_class: Callable[..., SDK], *, api_key: str, base_url: str | None,
                 timeout_s: float, http_client: Any,
                 prepare: Callable[[SDK], None] | None = None) -> None:
        self._build = lambda: sdk_class(api_key=api_key, base_url=base_url, timeout=timeout_s,
                                        max_retries=0, http_client=http_client)
        self._prepare = prepare
        self._client: SDK | None = None

    @property
    def client(self) -> SDK:
        """The SDK client, built now if this is its first use."""
        if self._client is None:
            self._client = self._build()
            if self._prepare is not None:
                self._prepare(self._client)
        return self._client

    async def close(self) -> None:
        """Close the client if it was built (closing builds none)."""
        if self._client is not None:
            await self._client.close()


def raise_transport_failure(exc: BaseException, *, provider: str, timeout_s: float,
                            endpoint: str | None = None) -> None:
    """Raise :func:`transport_failure`'s retryable error for ``exc`` when it is a low-level HTTP
    error an SDK let through; otherwise return, and the caller re-raises ``exc``."""
    failure = transport_failure(exc, provider=provider, timeout_s=timeout_s, endpoint=endpoint)
    if failure is not None:
        raise failure from exc
