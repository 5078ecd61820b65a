"""Retry decisions, Retry-After parsing, backoff and the request-rate limiter."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from legal_judge.errors import (
    AuthError,
    BadRequestError,
    ProviderError,
    ProviderUnavailable,
    RateLimitError,
)
from legal_judge.providers.retry import (
    RequestRateLimiter,
    RetryDecision,
    RetryPolicy,
    classify,
    error_for_status,
    retry_after_from_headers,
)


@pytest.mark.parametrize(
    ("status", "cls", "kind"),
    [
        (401, AuthError, "no"),
        (403, AuthError, "no"),
        (400, BadRequestError, "no"),
        (404, BadRequestError, "no"),
        (422, BadRequestError, "no"),
        (429, RateLimitError, "rate_limit"),
        (408, ProviderUnavailable, "transient"),
        (500, ProviderUnavailable, "transient"),
        (503, ProviderUnavailable, "transient"),
        (529, ProviderUnavailable, "transient"),
    ],
)
def test_status_translation_and_decision(status, cls, kind):
    error = error_for_status(status, "boom", provider="openai:gpt-4o", key_env="OPENAI_API_KEY")
    assert type(error) is cls
    assert error.status == status
    assert classify(error).kind == kind


def test_auth_error_fix_names_variable():
    error = error_for_status(401, "bad key", provider="x:y", key_env="GROQ_API_KEY")
    assert "GROQ_API_KEY" in (error.fix or "")


def test_retry_after_reaches_the_decision():
    error = error_for_status(429, "slow down", provider="p", headers={"Retry-After": "3"})
    assert classify(error) == RetryDecision.rate_limit(3.0)
    error = error_for_status(503, "busy", provider="p", headers={"retry-after-ms": "1500"})
    assert classify(error) == RetryDecision.transient(1.5)


def test_retry_decision_is_frozen():
    decision = RetryDecision.transient(1.0)
    with pytest.raises(AttributeError):
        decision.after = 2.0  # type: ignore[misc]
    assert decision.should_retry and not RetryDecision.no().should_retry


@pytest.mark.parametrize(
    ("headers", "expected"),
    [
        ({"retry-after": "7"}, 7.0),
        ({"Retry-After": "0.5"}, 0.5),
        ({"retry-after-ms": "250", "retry-after": "9"}, 0.25),  # ms wins
        ({"retry-after": "Wed, 15 Oct 2025 12:00:30 GMT"}, 30.0),
        ({"retry-after": "soon"}, None),
        ({"retry-after": "-3"}, 0.0),
        ({}, None),
        (None, None),
    ],
)
def test_retry_after_from_headers(headers, expected):
    now = datetime(2025, 10, 15, 12, 0, 0, tzinfo=UTC)
    assert retry_after_from_headers(headers, now=now) == expected


def test_full_jitter_bounds_and_cap():
    top = RetryPolicy(random=lambda: 0.999999)
    ceilings = [top.wait_for(RetryDecision.transient(), n) for n in range(10)]
    assert ceilings[0] == pytest.approx(0.5, rel=1e-5)
    assert ceilings[3] == pytest.approx(4.0, rel=1e-5)
    assert max(ceilings) == pytest.approx(30.0, rel=1e-5)  # capped
    assert RetryPolicy(random=lambda: 0.0).wait_for(RetryDecision.transient(), 5) == 0.0
    # Retry-After beats backoff, but an absurd one is capped
    assert top.wait_for(RetryDecision.rate_limit(12.0), 0) == 12.0
    assert top.wait_for(RetryDecision.rate_limit(9999.0), 0) == 300.0


async def test_policy_stops_on_non_retryable_and_counts_retries():
    waits: list[float] = []

    async def sleep(s: float) -> None:
        waits.append(s)

    outcomes: list[BaseException | str] = [
        ProviderUnavailable("503", provider="p", status=503),
        RateLimitError("429", provider="p", retry_after=2.0),
        "ok",
    ]

    async def attempt() -> str:
        item = outcomes.pop(0)
        if isinstance(item, BaseException):
            raise item
        return item

    result, retries = await RetryPolicy(sleep=sleep, random=lambda: 1.0).run(attempt)
    assert (result, retries) == ("ok", 2)
    assert waits == [0.5, 2.0]

    async def auth() -> str:
        raise AuthError("401", provider="p", status=401)

    with pytest.raises(AuthError):
        await RetryPolicy(sleep=sleep).run(auth)
    assert len(waits) == 2

    async def plain() -> str:
        raise ProviderError("weird", provider="p")

    with pytest.raises(ProviderError):
        await RetryPolicy(sleep=sleep).run(plain)
    assert len(waits) == 2


async def test_rate_limiter_spaces_request_starts():
    clock = [100.0]
    waits: list[float] = []

    async def sleep(s: float) -> None:
        waits.append(s)
        clock[0] += s

    limiter = RequestRateLimiter(120, sleep=sleep, clock=lambda: clock[0])  # one per 0.5 s
    for _ in range(4):
        await limiter.acquire()
    assert waits == [0.5, 0.5, 0.5]
    clock[0] += 10  # idle time is not banked as burst credit beyond one request
    await limiter.acquire()
    assert waits == [0.5, 0.5, 0.5]
    with pytest.raises(ValueError):
        RequestRateLimiter(0)
