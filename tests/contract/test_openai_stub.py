"""The OpenAI-compatible stub (``legal_judge.devtools.openai_stub``) through the real ``openai`` SDK.

The benchmark measures the runner against it both as a keep-alive HTTP/1.1 server and as an
HTTP/1.0 server that closes every connection (a TCP connection per call); both must be answers the
SDK and the product's provider accept, and the close mode must really close.
"""

from __future__ import annotations

import asyncio
import shutil
import subprocess
import sys
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any

import httpx
import openai
import pytest

from legal_judge.devtools.openai_stub import HttpVersion, StubServer
from legal_judge.models import CompletionRequest, Message
from legal_judge.providers.base import parse_spec
from legal_judge.providers.openai import OpenAIProvider

_RUBRIC = {"type": "object", "properties": {"score": {"type": "integer"},
                                            "rationale": {"type": "string"}}}
SCHEMA: dict[str, Any] = {"type": "object", "properties": {
    "rubrics": {"type": "object", "properties": {"legal_accuracy": _RUBRIC}}}}


@asynccontextmanager
async def running(http_version: HttpVersion, *, backlog: int = 128) -> AsyncIterator[
        tuple[StubServer, str]]:
    """The stub served in this event loop on a free loopback port."""
    stub = StubServer(latency_ms=1, http_version=http_version)
    server = await asyncio.start_server(stub.handle, "127.0.0.1", 0, backlog=backlog)
    port = server.sockets[0].getsockname()[1]
    try:
        yield stub, f"http://127.0.0.1:{port}/v1"
    finally:
        server.close()
        await server.wait_closed()


async def _ask(client: openai.AsyncOpenAI, n: int) -> Any:
    return await client.chat.completions.create(
        model="gpt-4o", temperature=0, max_tokens=100,
        messages=[{"role": "user", "content": f"question {n}"}],
        response_format={"type": "json_schema", "json_schema": {"name": "v", "schema": SCHEMA}})


async def test_http10_answers_every_request_on_its_own_connection() -> None:
    async with running("1.0") as (stub, url):
        client = openai.AsyncOpenAI(base_url=url, api_key="not-needed", max_retries=0)
        try:
            sequential = [await _ask(client, n) for n in range(3)]
            concurrent = await asyncio.gather(*(_ask(client, n) for n in range(3, 11)))
            raw = await client.chat.completions.with_raw_response.create(
                model="gpt-4o", messages=[{"role": "user", "content": "raw"}])
        finally:
            await client.close()
    for completion in [*sequential, *concurrent]:
        assert completion.choices[0].finish_reason == "stop"
        assert '"legal_accuracy"' in (completion.choices[0].message.content or "")
    assert raw.http_response.http_version == "HTTP/1.0"
    assert raw.headers["connection"] == "close"
    # The SDK had to open a new connection for every call: none was reused.
    assert stub.requests == 12
    assert stub.connections == 12


async def test_keep_alive_stays_the_default_and_reuses_the_connection() -> None:
    async with running("1.1") as (stub, url):
        client = openai.AsyncOpenAI(base_url=url, api_key="not-needed", max_retries=0)
        try:
            for n in range(5):
                await _ask(client, n)
            raw = await client.chat.completions.with_raw_response.create(
                model="gpt-4o", messages=[{"role": "user", "content": "raw"}])
        finally:
            await client.close()
    assert raw.http_response.http_version == "HTTP/1.1"
    assert "connection" not in raw.headers
    assert stub.requests == 6
    assert stub.connections == 1
    assert StubServer(latency_ms=1).http_version == "1.1"


async def test_http10_through_the_products_provider() -> None:
    async with running("1.0") as (stub, url):
        provider = OpenAIProvider(parse_spec(f"openai-compatible:gpt-4o@{url}"))
        request = CompletionRequest(model="gpt-4o", temperature=0, max_tokens=200, json_schema=SCHEMA,
                                    messages=[Message(role="user", content="judge this")])
        try:
            answers = await asyncio.gather(*(provider.complete(request) for _ in range(4)))
        finally:
            await provider.aclose()
    assert {a.finish_reason for a in answers} == {"stop"}
    assert all(a.retries == 0 and a.usage.input_tokens == 900 for a in answers)
    assert stub.connections == stub.requests == 4


def test_unknown_http_version_is_refused() -> None:
    with pytest.raises(ValueError, match="http_version"):
        StubServer(latency_ms=1, http_version="2")  # type: ignore[arg-type]


def _listen_backlog(port: int) -> int:
    """The accept-queue limit the kernel reports for a listening loopback socket (``ss``'s
    Send-Q column of a listener)."""
    out = subprocess.run(["ss", "-ltnH", f"sport = :{port}"], capture_output=True, text=True,
                         check=True).stdout.split()
    return int(out[2])


@pytest.mark.skipif(shutil.which("ss") is None, reason="needs ss (iproute2) to read the backlog")
def test_command_line_flags_set_version_and_backlog() -> None:
    proc = subprocess.Popen([sys.executable, "-m", "legal_judge.devtools.openai_stub", "--port", "0",
                             "--latency-ms", "1", "--http-version", "1.0", "--backlog", "128"],
                            stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        port = int(proc.stdout.readline().split()[1])
        ask: Callable[[], httpx.Response] = lambda: httpx.post(  # noqa: E731
            f"http://127.0.0.1:{port}/v1/chat/completions", json={"model": "m", "messages": []})
        first, second = ask(), ask()
        stats = httpx.get(f"http://127.0.0.1:{port}/stats").json()
        assert first.http_version == second.http_version == "HTTP/1.0"
        assert stats["http_version"] == "1.0" and stats["requests"] == 2
        assert stats["connections"] == 3  # two calls and this /stats read, each on its own
        assert _listen_backlog(port) == 128
    finally:
        proc.terminate()
        proc.wait(10)
