"""``doctor --ping``'s request (providers/ping.py) and the connection failure's words.

Over real HTTP on 127.0.0.1: the project's OpenAI-compatible stub for a reachable endpoint, a
closed port for an unreachable one, through the judge's own adapter and retry policy.
"""

from __future__ import annotations

import asyncio
import socket
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import pytest

from legal_judge.devtools.openai_stub import StubServer
from legal_judge.providers.base import ProviderOptions
from legal_judge.providers.ping import PING_MAX_RETRIES, bounded_options, ping, ping_all
from legal_judge.providers.registry import get_provider
from legal_judge.providers.sdk import connection_failure


@asynccontextmanager
async def stub() -> AsyncIterator[tuple[StubServer, str]]:
    server_state = StubServer(latency_ms=1)
    server = await asyncio.start_server(server_state.handle, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    try:
        yield server_state, f"http://127.0.0.1:{port}/v1"
    finally:
        server.close()
        await server.wait_closed()


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


async def test_a_served_endpoint_is_reachable_with_one_request() -> None:
    async with stub() as (state, url):
        provider = get_provider(f"openai-compatible:qwen2.5@{url}")
        got = await ping_all([("q", provider)])
    assert got[0].reach == "reachable" and got[0].ok
    assert got[0].endpoint == url and "model qwen2.5" in got[0].detail
    assert state.requests == 1  # one cheap request, no negotiation, no retry


async def test_a_closed_port_is_unreachable_with_its_url_and_cause() -> None:
    url = f"http://127.0.0.1:{_closed_port()}/v1"
    sleeps: list[float] = []

    async def no_wait(s: float) -> None:
        sleeps.append(s)

    from legal_judge.providers.openai import OpenAIProvider
    from legal_judge.providers.retry import RetryPolicy

    spec = f"openai-compatible:m@{url}"
    options = ProviderOptions(**bounded_options({"max_retries": 6}, timeout_s=2.0))
    provider = OpenAIProvider(get_provider(spec).spec, options,
                              retry=RetryPolicy(max_retries=options.max_retries, sleep=no_wait))
    got = await ping("m", provider)
    await provider.aclose()
    assert got.reach == "unreachable" and not got.ok
    assert got.endpoint == url
    assert got.detail == f"connection refused at {url}"
    assert len(sleeps) == PING_MAX_RETRIES  # bounded: the judge's six retries became one


async def test_a_simulated_judge_is_reachable_without_a_request() -> None:
    got = await ping("s", get_provider("simulated:fair"))
    assert (got.reach, got.endpoint, got.detail) == ("reachable", None, "reachable (simulated)")


def test_bounded_options_cap_timeout_and_retries_but_never_raise_them() -> None:
    assert bounded_options({}, timeout_s=5) == {"timeout_s": 5.0, "max_retries": 1}
    assert bounded_options({"timeout_s": 60, "max_retries": 6, "family": "x"}, timeout_s=5) == \
        {"timeout_s": 5.0, "max_retries": 1, "family": "x"}
    assert bounded_options({"timeout_s": 2, "max_retries": 0}, timeout_s=5) == \
        {"timeout_s": 2.0, "max_retries": 0}


def _chain(*links: BaseException) -> BaseException:
    for outer, inner in zip(links, links[1:], strict=False):
        outer.__cause__ = inner
    return links[0]


@pytest.mark.parametrize(("chain", "expected"), [
    (lambda: _chain(RuntimeError("All connection attempts failed"),
                    OSError("All connection attempts failed"),
                    ConnectionRefusedError(111, "Connect call failed")),
     "connection refused at http://h:1/v1"),
    (lambda: _chain(RuntimeError("x"), socket.gaierror(-2, "Name or service not known")),
     "host not found at http://h:1/v1 (name resolution failed)"),
    (lambda: _chain(RuntimeError("outer"), OSError("Network is unreachable")),
     "connection failed at http://h:1/v1: Network is unreachable"),
])
def test_connection_failure_names_the_cause_a_user_acts_on(chain: object, expected: str) -> None:
    assert connection_failure(chain(), endpoint="http://h:1/v1") == expected  # type: ignore[operator]
