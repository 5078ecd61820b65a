"""Contract tests: the real ``anthropic`` SDK over httpx.MockTransport with recorded-shape bodies.

The SDK only takes httpx2 clients; the provider bridges the httpx.AsyncClient used here.
"""

from __future__ import annotations

import json
import logging
from dataclasses import replace

import httpx2
import pytest

from legal_judge.errors import AuthError, ProviderUnavailable
from legal_judge.providers import anthropic as anthropic_provider
from legal_judge.providers import get_provider


@pytest.fixture
def anthropic_key(monkeypatch: pytest.MonkeyPatch, kit) -> str:
    monkeypatch.setenv("ANTHROPIC_API_KEY", kit.ANTHROPIC_KEY)
    anthropic_provider._NO_TEMPERATURE.clear()
    return kit.ANTHROPIC_KEY


def _sent_key(request) -> str:
    return request.headers.get("x-api-key") or request.headers.get("authorization", "")


async def test_forced_tool_use_request_and_response(kit, anthropic_key, caplog):
    caplog.set_level(logging.DEBUG)
    server = kit.Server("anthropic/message_tool_use.json")
    async with server.client() as client:
        provider = get_provider("anthropic:claude-haiku-4-5", http_client=client)
        response = await provider.complete(kit.request("claude-haiku-4-5"))
        await provider.aclose()
        assert not client.is_closed  # the caller owns the client

    (sent,) = server.requests
    assert str(sent.url) == "https://api.anthropic.com/v1/messages"
    assert anthropic_key in _sent_key(sent)
    body = json.loads(sent.content)
    assert body["model"] == "claude-haiku-4-5"
    assert body["system"] == "You are a strict legal evaluator. Reply in JSON."
    assert body["messages"] == [
        {"role": "user", "content": "Evaluate the answer between the fences."}
    ]
    assert body["max_tokens"] == 800
    assert body["temperature"] == 0.0
    assert body["tools"][0]["name"] == "verdict"
    assert body["tools"][0]["input_schema"] == kit.VERDICT_SCHEMA
    assert body["tool_choice"] == {"type": "tool", "name": "verdict"}

    assert json.loads(response.text)["rubrics"]["legal_soundness"]["score"] == 4
    assert response.structured_mode == "tool_use"
    assert response.finish_reason == "stop"
    assert (response.usage.input_tokens, response.usage.output_tokens) == (1024, 187)
    assert response.model == "claude-haiku-4-5-20251001"
    assert provider.family == "anthropic"
    assert anthropic_key not in caplog.text


async def test_429_retry_after_then_success(kit, anthropic_key):
    server = kit.Server("anthropic/error_429.json", "anthropic/message_tool_use.json")
    async with server.client() as client:
        provider = get_provider("anthropic:claude-haiku-4-5", http_client=client)
        sleeps = kit.no_wait(provider)
        response = await provider.complete(kit.request("claude-haiku-4-5"))
    assert sleeps.waits == [12.0]
    assert response.retries == 1
    assert len(server.requests) == 2


async def test_overloaded_529_twice_then_success(kit, anthropic_key):
    server = kit.Server(
        "anthropic/error_529.json", "anthropic/error_529.json", "anthropic/message_tool_use.json"
    )
    async with server.client() as client:
        provider = get_provider("anthropic:claude-haiku-4-5", http_client=client)
        sleeps = kit.no_wait(provider)
        response = await provider.complete(kit.request("claude-haiku-4-5"))
    assert sleeps.waits == [0.25, 0.5]
    assert response.retries == 2


async def test_401_not_retried_names_the_key_variable(kit, anthropic_key, caplog):
    caplog.set_level(logging.DEBUG)
    server = kit.Server("anthropic/error_401.json")
    async with server.client() as client:
        provider = get_provider("anthropic:claude-haiku-4-5", http_client=client)
        sleeps = kit.no_wait(provider)
        with pytest.raises(AuthError) as info:
            await provider.complete(kit.request("claude-haiku-4-5"))
    assert "ANTHROPIC_API_KEY" in str(info.value)
    assert anthropic_key not in str(info.value)
    assert anthropic_key not in caplog.text
    assert sleeps.waits == [] and len(server.requests) == 1


async def test_max_tokens_maps_to_length(kit, anthropic_key):
    server = kit.Server("anthropic/message_max_tokens.json")
    async with server.client() as client:
        provider = get_provider("anthropic:claude-haiku-4-5", http_client=client)
        response = await provider.complete(kit.request("claude-haiku-4-5", schema=False))
    assert response.finish_reason == "length"
    assert response.text.startswith("Let me assess")
    assert response.structured_mode is None
    assert "tools" not in server.bodies()[0]


async def test_refusal_stop_reason(kit, anthropic_key):
    server = kit.Server("anthropic/message_refusal.json")
    async with server.client() as client:
        provider = get_provider("anthropic:claude-haiku-4-5", http_client=client)
        response = await provider.complete(kit.request("claude-haiku-4-5"))
    assert response.refusal == "I can't help with that."
    assert response.finish_reason == "refusal"


async def test_temperature_rejection_is_negotiated_once(kit, anthropic_key):
    server = kit.Server(
        "anthropic/error_400_temperature.json",
        "anthropic/message_tool_use.json",
        "anthropic/message_tool_use.json",
    )
    async with server.client() as client:
        provider = get_provider("anthropic:claude-haiku-4-5", http_client=client)
        await provider.complete(kit.request("claude-haiku-4-5"))
        await provider.complete(kit.request("claude-haiku-4-5"))
    assert ["temperature" in b for b in server.bodies()] == [True, False, False]


async def test_httpx2_client_is_used_directly(kit, anthropic_key):
    fx = kit.load_fixture("anthropic/message_tool_use.json")
    seen: list[httpx2.Request] = []

    def handler(request: httpx2.Request) -> httpx2.Response:
        seen.append(request)
        return httpx2.Response(fx["status"], headers=fx["headers"], json=fx["body"])

    async with httpx2.AsyncClient(transport=httpx2.MockTransport(handler)) as client:
        provider = get_provider("anthropic:claude-haiku-4-5", http_client=client)
        response = await provider.complete(kit.request("claude-haiku-4-5"))
    assert len(seen) == 1
    assert response.structured_mode == "tool_use"


async def test_connection_error_is_transient(kit, anthropic_key):
    import httpx

    calls = 0

    def handler(request: httpx.Request) -> httpx.Response:
        nonlocal calls
        calls += 1
        raise httpx.ConnectError("connection refused", request=request)

    async with httpx.AsyncClient(transport=httpx.MockTransport(handler)) as client:
        provider = get_provider("anthropic:claude-haiku-4-5", http_client=client)
        kit.no_wait(provider)
        provider.gate.retry = replace(provider.gate.retry, max_retries=1)
        with pytest.raises(ProviderUnavailable):
            await provider.complete(kit.request("claude-haiku-4-5"))
    assert calls == 2
