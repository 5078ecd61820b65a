"""Transport resilience: which failures to retry, how long to wait, and how fast to send.

Adapters translate SDK exceptions into :mod:`legal_judge.errors` first (see
:func:`error_for_status`); :func:`classify` then turns a translated error into a frozen
:class:`RetryDecision`, and :class:`RetryPolicy` runs one call with retries:

* 429 -> ``rate_limit(after)``; 408/409/5xx (Anthropic's 529 included), timeouts and connection
  errors -> ``transient(after)``; everything else (401/403/400/404/422...) -> ``no``.
* The wait honours ``retry-after-ms`` / ``Retry-After`` (seconds or an HTTP date) when the
  provider sends one, else exponential backoff with full jitter: ``uniform(0, min(cap, base*2^n))``
  with base 0.5 s and cap 30 s.
* The SDKs' own retries are switched off (``max_retries=0``) so these are the only ones and the
  count can be reported in ``CompletionResponse.retries``.

Each retry is logged at INFO (shown with ``--verbose``) and counted in the active
:func:`counting_retries` tally, which a run's progress line shows; the call log records the same
retries per call, so the progress line and the run's summary count the same thing.

Sleeping and randomness are injectable so tests never wait. :class:`RequestRateLimiter` spaces
request starts for an optional requests-per-minute budget.
"""

from __future__ import annotations

import asyncio
import logging
import math
import random
import time
from collections.abc import Awaitable, Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from typing import Literal, TypeVar

from legal_judge.errors import (
    AuthError,
    BadRequestError,
    ProviderError,
    ProviderUnavailable,
    RateLimitError,
)

__all__ = [
    "RequestRateLimiter",
    "RetryDecision",
    "RetryPolicy",
    "RetryTally",
    "Sleep",
    "classify",
    "counting_retries",
    "error_for_status",
    "retry_after_from_headers",
]

logger = logging.getLogger(__name__)

T = TypeVar("T")
Sleep = Callable[[float], Awaitable[None]]

@dataclass
class _Made:
    """Every retry :class:`RetryPolicy` made in this process (a plain counter: no context var,
    the call path carries no ambient state)."""

    total: int = 0


_MADE = _Made()


@dataclass(frozen=True)
class RetryTally:
    """The retries made since a :func:`counting_retries` block began (asyncio tasks included)."""

    start: int = 0

    @property
    def count(self) -> int:
        """Retries made since the block began."""
        return _MADE.total - self.start


@contextmanager
def counting_retries() -> Iterator[RetryTally]:
    """Count every retry :class:`RetryPolicy` makes inside the block (a run's progress line; one
    run per process, so the process's count since the block began is the run's)."""
    yield RetryTally(_MADE.total)


# A provider that asks for more than this is effectively down; waiting longer helps nobody.
MAX_RETRY_AFTER_S = 300.0
_TRANSIENT_STATUSES = frozenset({408, 409})


@dataclass(frozen=True)
class RetryDecision:
    """Whether a failed call should be tried again, and after how long (None: use backoff)."""

    kind: Literal["no", "transient", "rate_limit"]
    after: float | None = None

    @classmethod
    def no(cls) -> RetryDecision:
        """A failure that retrying cannot fix."""
        return cls("no")

    @classmethod
    def transient(cls, after: float | None = None) -> RetryDecision:
        """A 5xx, timeout or connection failure."""
        return cls("transient", after)

    @classmethod
    def rate_limit(cls, after: float | None = None) -> RetryDecision:
        """A 429; ``after`` is the provider's Retry-After when it sent one."""
        return cls("rate_limit", after)

    @property
    def should_retry(self) -> bool:
        """True unless the decision is ``no``."""
        return self.kind != "no"


def classify(error: BaseException) -> RetryDecision:
    """Decide whether a translated provider error is worth retrying.

    Args:
        error: an exception raised by an adapter (normally a :class:`ProviderError`).

    Returns:
        ``rate_limit`` for :class:`RateLimitError`, ``transient`` for
        :class:`ProviderUnavailable`, ``no`` for anything else.
    """
    if isinstance(error, RateLimitError):
        return RetryDecision.rate_limit(error.retry_after)
    if isinstance(error, ProviderUnavailable):
        return RetryDecision.transient(error.retry_after)
    return RetryDecision.no()


def retry_after_from_headers(
    headers: Mapping[str, str] | None, *, now: datetime | None = None
) -> float | None:
    """Read the wait a provider asked for from ``retry-after-ms`` or ``Retry-After``.

    Args:
        headers: response headers (case-insensitive mappings such as httpx's work as is).
        now: the current time, for HTTP-date values; defaults to the clock.

    Returns:
        Seconds to wait (>= 0), or None when no usable header is present.
    """
    if not headers:
        return None
    lowered = {k.lower(): v for k, v in headers.items()}
    ms = _as_float(lowered.get("retry-after-ms"))
    if ms is not None:
        return max(ms / 1000.0, 0.0)
    raw = lowered.get("retry-after")
    if raw is None:
        return None
    seconds = _as_float(raw)
    if seconds is not None:
        return max(seconds, 0.0)
    try:
        when = parsedate_to_datetime(raw)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return max((when - (now or datetime.now(UTC))).total_seconds(), 0.0)


def _as_float(value: str | None) -> float | None:
    if value is None:
        return None
    try:
        number = float(value)
    except ValueError:
        return None
    return number if math.isfinite(number) else None


def error_for_status(
    status: int,
    message: str,
    *,
    provider: str,
    headers: Mapping[str, str] | None = None,
    key_env: str | None = None,
) -> ProviderError:
    """Translate an HTTP error status into the matching legal_judge error.

    Args:
        status: the HTTP status code.
        message: the provider's message, already redacted of secrets.
        provider: the spec prefix or raw spec, used as the error's provider name.
        headers: response headers, for Retry-After.
        key_env: the environment variable holding the key, named in an auth error's fix.

    Returns:
        :class:`AuthError` (401/403), :class:`RateLimitError` (429), :class:`ProviderUnavailable`
        (408/409/5xx) or :class:`BadRequestError` (anything else).
    """
    text = f"HTTP {status}: {message}"
    if status in (401, 403):
        where = f"the key in {key_env}" if key_env else "the endpoint's credentials"
        return AuthError(
            text,
            provider=provider,
            status=status,
            fix=f"check {where} (keys are read from the environment only) and its permissions",
        )
    after = retry_after_from_headers(headers)
    if status == 429:
        return RateLimitError(text, provider=provider, retry_after=after)
    if status >= 500 or status in _TRANSIENT_STATUSES:
        return ProviderUnavailable(text, provider=provider, status=status, retry_after=after)
    fix = "check the model name and the endpoint URL" if status == 404 else None
    return BadRequestError(text, provider=provider, status=status, fix=fix)


@dataclass(frozen=True)
class RetryPolicy:
    """Exponential backoff with full jitter, honouring the provider's Retry-After.

    Attributes:
        max_retries: retries after the first attempt (0 disables retrying).
        base_s: first backoff ceiling in seconds.
        cap_s: largest backoff ceiling in seconds.
        sleep: awaited between attempts; tests inject a recorder.
        random: returns a float in [0, 1); tests inject a constant.
    """

    max_retries: int = 6
    base_s: float = 0.5
    cap_s: float = 30.0
    sleep: Sleep = asyncio.sleep
    random: Callable[[], float] = field(default=random.random)

    def wait_for(self, decision: RetryDecision, retry_number: int) -> float:
        """Seconds to wait before retry ``retry_number`` (0-based)."""
        if decision.after is not None:
            return min(decision.after, MAX_RETRY_AFTER_S)
        ceiling = min(self.cap_s, self.base_s * (2**retry_number))
        return ceiling * self.random()

    async def run(self, attempt: Callable[[], Awaitable[T]]) -> tuple[T, int]:
        """Await ``attempt()`` until it succeeds, fails for good, or retries run out.

        Args:
            attempt: makes one call; raises a translated :class:`ProviderError` on failure.

        Returns:
            The result and the number of retries it took.

        Raises:
            ProviderError: the last error, when it is not retryable or retries are exhausted.
        """
        retries = 0
        while True:
            try:
                return await attempt(), retries
            except ProviderError as exc:
                decision = classify(exc)
                if not decision.should_retry or retries >= self.max_retries:
                    # The call log records how many retries a failed call used, too.
                    setattr(exc, "retries", retries)  # noqa: B010 - ProviderError has no field yet
                    raise
                wait = self.wait_for(decision, retries)
                _MADE.total += 1
                # INFO, not WARNING: a flaky endpoint printed one line per retry (35 for 15
                # items); the progress line counts them and the summary says them once.
                logger.info(
                    "%s (%s); retry %d/%d in %.2fs",
                    exc.message,
                    decision.kind,
                    retries + 1,
                    self.max_retries,
                    wait,
                )
                await self.sleep(wait)
                retries += 1


class RequestRateLimiter:
    """Spaces request starts evenly to stay under a requests-per-minute budget."""

    def __init__(
        self,
        requests_per_minute: float,
        *,
        sleep: Sleep = asyncio.sleep,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if requests_per_minute <= 0:
            raise ValueError("requests_per_minute must be positive")
        self.interval_s = 60.0 / requests_per_minute
        self._sleep = sleep
        self._clock = clock
        self._next_start: float | None = None
        self._lock = asyncio.Lock()

    async def acquire(self) -> None:
        """Wait until the next request may start."""
        async with self._lock:
            now = self._clock()
            start = now if self._next_start is None else max(now, self._next_start)
            if start > now:
                await self._sleep(start - now)
            self._next_start = start + self.interval_s
