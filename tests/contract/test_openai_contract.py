"""Contract tests: the real ``openai`` SDK over httpx.MockTransport with recorded-shape bodies."""

from __future__ import annotations

import asyncio
import json
import logging

import httpx
import pytest

from legal_judge.errors import AuthError, BadRequestError, ProviderUnavailable, RateLimitError
from legal_judge.providers import ProviderOptions, get_provider
from legal_judge.providers.openai import negotiated_mode


@pytest.fixture
def openai_key(monkeypatch: pytest.MonkeyPatch, kit) -> str:
    monkeypatch.setenv("OPENAI_API_KEY", kit.OPENAI_KEY)
    return kit.OPENAI_KEY


async def test_success_request_and_response(kit, openai_key, caplog):
    caplog.set_level(logging.DEBUG)
    server = kit.Server("openai/chat_completion.json")
    async with server.client() as client:
        provider = get_provider("openai:gpt-4o", http_client=client)
        response = await provider.complete(kit.request("gpt-4o"))

    (sent,) = server.requests
    assert str(sent.url) == "https://api.openai.com/v1/chat/completions"
    assert sent.headers["authorization"] == f"Bearer {openai_key}"
    body = json.loads(sent.content)
    assert body["model"] == "gpt-4o"
    assert body["temperature"] == 0.0
    assert body["max_completion_tokens"] == 800
    assert body["messages"][0] == {
        "role": "system",
        "content": "You are a strict legal evaluator. Reply in JSON.",
    }
    assert body["response_format"] == {
        "type": "json_schema",
        "json_schema": {"name": "verdict", "schema": kit.VERDICT_SCHEMA, "strict": False},
    }
    assert json.loads(response.text)["overall"] == "pass"
    assert response.model == "gpt-4o-2024-08-06"
    assert (response.usage.input_tokens, response.usage.output_tokens) == (412, 58)
    assert response.finish_reason == "stop"
    assert response.refusal is None
    assert response.retries == 0
    assert response.structured_mode == "json_schema"
    assert response.latency_ms > 0
    assert provider.family == "openai"
    assert openai_key not in caplog.text
    assert openai_key not in repr(provider)


async def test_429_retry_after_is_honoured(kit, openai_key):
    server = kit.Server("openai/error_429.json", "openai/chat_completion.json")
    async with server.client() as client:
        provider = get_provider("openai:gpt-4o", http_client=client)
        sleeps = kit.no_wait(provider)
        response = await provider.complete(kit.request("gpt-4o"))
    assert sleeps.waits == [7.0]  # the fixture's Retry-After
    assert response.retries == 1
    assert len(server.requests) == 2
    assert all("authorization" in r.headers for r in server.requests)


async def test_500_twice_then_success_uses_jittered_backoff(kit, openai_key):
    server = kit.Server(
        "openai/error_500.json", "openai/error_500.json", "openai/chat_completion.json"
    )
    async with server.client() as client:
        provider = get_provider("openai:gpt-4o", http_client=client)
        sleeps = kit.no_wait(provider)  # jitter draw fixed at 0.5
        response = await provider.complete(kit.request("gpt-4o"))
    # full jitter: uniform(0, min(30, 0.5 * 2**n)) -> 0.5 * 0.5, then 1.0 * 0.5
    assert sleeps.waits == [0.25, 0.5]
    assert response.retries == 2
    assert len(server.requests) == 3


async def test_retries_exhausted_raises_last_error(kit, openai_key):
    server = kit.Server(*["openai/error_500.json"] * 3)
    options = ProviderOptions(max_retries=2)
    async with server.client() as client:
        provider = get_provider("openai:gpt-4o", options=options, http_client=client)
        sleeps = kit.no_wait(provider)
        with pytest.raises(ProviderUnavailable) as info:
            await provider.complete(kit.request("gpt-4o"))
    assert info.value.status == 500
    assert len(sleeps.waits) == 2
    assert len(server.requests) == 3


async def test_401_is_not_retried_and_names_the_key_variable(kit, openai_key, caplog):
    caplog.set_level(logging.DEBUG)
    server = kit.Server("openai/error_401.json")
    async with server.client() as client:
        provider = get_provider("openai:gpt-4o", http_client=client)
        sleeps = kit.no_wait(provider)
        with pytest.raises(AuthError) as info:
            await provider.complete(kit.request("gpt-4o"))
    message = str(info.value)
    assert "OPENAI_API_KEY" in message
    assert "HTTP 401" in message
    assert openai_key not in message
    assert "sk-test-" not in message  # the masked key the server echoed is redacted too
    assert sleeps.waits == []
    assert len(server.requests) == 1
    assert openai_key not in caplog.text
    assert info.value.exit_code == 2


async def test_truncated_output_returns_text_with_length(kit, openai_key):
    server = kit.Server("openai/chat_completion_length.json")
    async with server.client() as client:
        provider = get_provider("openai:gpt-4o", http_client=client)
        response = await provider.complete(kit.request("gpt-4o"))
    assert response.finish_reason == "length"
    assert response.text.startswith('{"rubrics"')
    assert response.usage.output_tokens == 16


async def test_refusal_is_reported(kit, openai_key):
    server = kit.Server("openai/chat_completion_refusal.json")
    async with server.client() as client:
        provider = get_provider("openai:gpt-4o", http_client=client)
        response = await provider.complete(kit.request("gpt-4o"))
    assert response.refusal == "I'm sorry, but I can't help with that request."
    assert response.text == ""


async def test_bad_request_is_not_retried(kit, openai_key):
    server = kit.Server("openai/error_400_json_schema.json")
    async with server.client() as client:
        provider = get_provider("openai:gpt-4o", http_client=client)
        sleeps = kit.no_wait(provider)
        # Without a schema there is nothing to negotiate: the 400 surfaces as is.
        with pytest.raises(BadRequestError):
            await provider.complete(kit.request("gpt-4o", schema=False))
    assert sleeps.waits == []
    assert len(server.requests) == 1


async def test_llamacpp_server_fallback_is_negotiated_and_remembered(kit):
    url = "http://127.0.0.1:8765/v1"
    server = kit.Server(
        "llamacpp/error_500_response_format.json",
        "llamacpp/chat_completion.json",
        "llamacpp/chat_completion.json",
    )
    async with server.client() as client:
        provider = get_provider(f"openai-compatible:smollm2:135m@{url}", http_client=client)
        sleeps = kit.no_wait(provider)
        first = await provider.complete(kit.request("smollm2:135m"))
        second = await provider.complete(kit.request("smollm2:135m"))

    formats = [b["response_format"] for b in server.bodies()]
    assert formats[0]["type"] == "json_schema"
    assert formats[1] == {"type": "json_object", "schema": kit.VERDICT_SCHEMA}
    assert formats[2] == {"type": "json_object", "schema": kit.VERDICT_SCHEMA}  # remembered
    assert len(server.requests) == 3
    assert (first.structured_mode, second.structured_mode) == ("json_object+schema",) * 2
    assert first.retries == 0 and sleeps.waits == []  # a rejected format is not a retry
    assert negotiated_mode(url, "smollm2:135m") == "json_object+schema"
    assert str(server.requests[0].url) == f"{url}/chat/completions"
    assert server.bodies()[0]["max_tokens"] == 800
    assert server.requests[0].headers["authorization"] == "Bearer not-needed"


async def test_fallback_walks_down_to_no_response_format(kit):
    server = kit.Server(
        "openai/error_400_json_schema.json",
        "openai/error_400_json_schema.json",
        "openai/error_400_json_schema.json",
        "llamacpp/chat_completion.json",
    )
    async with server.client() as client:
        provider = get_provider("openai-compatible:m@http://127.0.0.1:9/v1", http_client=client)
        response = await provider.complete(kit.request("m"))
    types = [b.get("response_format", {}).get("type") for b in server.bodies()]
    assert types == ["json_schema", "json_object", "json_object", None]
    assert "schema" in server.bodies()[1]["response_format"]
    assert "schema" not in server.bodies()[2]["response_format"]
    assert response.structured_mode == "none"


async def test_openai_compatible_never_inherits_the_openai_key(kit, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", kit.OPENAI_KEY)
    server = kit.Server("llamacpp/chat_completion.json")
    async with server.client() as client:
        provider = get_provider("openai-compatible:m@http://127.0.0.1:9/v1", http_client=client)
        await provider.complete(kit.request("m", schema=False))
    assert kit.OPENAI_KEY not in server.requests[0].headers["authorization"]
    assert "response_format" not in server.bodies()[0]


async def test_reasoning_models_get_no_temperature(kit, openai_key):
    server = kit.Server("openai/chat_completion.json")
    async with server.client() as client:
        provider = get_provider("openai:o3", http_client=client)
        await provider.complete(kit.request("o3"))
    body = server.bodies()[0]
    assert "temperature" not in body
    assert body["max_completion_tokens"] == 800


async def test_rate_limit_error_when_retries_disabled(kit, openai_key):
    server = kit.Server("openai/error_429.json")
    async with server.client() as client:
        provider = get_provider(
            "openai:gpt-4o", options=ProviderOptions(max_retries=0), http_client=client
        )
        with pytest.raises(RateLimitError) as info:
            await provider.complete(kit.request("gpt-4o"))
    assert info.value.retry_after == 7.0


async def test_caller_owned_client_is_not_closed(kit, openai_key):
    server = kit.Server()
    client = server.client()
    provider = get_provider("openai:gpt-4o", http_client=client)
    await provider.aclose()
    assert not client.is_closed
    await client.aclose()


async def test_concurrency_is_limited_per_provider(kit, openai_key):
    body = kit.load_fixture("openai/chat_completion.json")
    in_flight = 0
    peak = 0
    two_in = asyncio.Event()
    release = asyncio.Event()

    async def handler(request: httpx.Request) -> httpx.Response:
        nonlocal in_flight, peak
        in_flight += 1
        peak = max(peak, in_flight)
        if in_flight == 2:
            two_in.set()
        await release.wait()
        in_flight -= 1
        return httpx.Response(200, headers=body["headers"], json=body["body"])

    options = ProviderOptions(max_concurrency=2)
    async with httpx.AsyncClient(transport=httpx.MockTransport(handler)) as client:
        provider = get_provider("openai:gpt-4o", options=options, http_client=client)
        tasks = [asyncio.create_task(provider.complete(kit.request("gpt-4o"))) for _ in range(5)]
        await asyncio.wait_for(two_in.wait(), timeout=30)
        # Give the other three every chance to get in (they would, without the semaphore).
        for _ in range(200):
            await asyncio.sleep(0)
        await asyncio.sleep(0.05)
        release.set()
        results = await asyncio.gather(*tasks)
    assert peak == 2
    assert len(results) == 5


async def test_requests_per_minute_spaces_calls(kit, openai_key):
    server = kit.Server(*["openai/chat_completion.json"] * 3)
    options = ProviderOptions(requests_per_minute=6)  # one request start every 10 s
    async with server.client() as client:
        provider = get_provider("openai:gpt-4o", options=options, http_client=client)
        sleeps = kit.no_wait(provider)
        for _ in range(3):
            await provider.complete(kit.request("gpt-4o"))
    # the recorded sleeps do not advance the real clock, so the slots stack up: ~10 s, ~20 s
    assert len(sleeps.waits) == 2
    assert 9.0 < sleeps.waits[0] <= 10.0
    assert 19.0 < sleeps.waits[1] <= 20.0


async def test_timeout_is_retried_then_reported(kit, openai_key):
    calls = 0

    def handler(request: httpx.Request) -> httpx.Response:
        nonlocal calls
        calls += 1
        raise httpx.ReadTimeout("read timed out", request=request)

    options = ProviderOptions(max_retries=2, timeout_s=12)
    async with httpx.AsyncClient(transport=httpx.MockTransport(handler)) as client:
        provider = get_provider("openai:gpt-4o", options=options, http_client=client)
        sleeps = kit.no_wait(provider)
        with pytest.raises(ProviderUnavailable) as info:
            await provider.complete(kit.request("gpt-4o"))
    assert calls == 3
    assert len(sleeps.waits) == 2
    assert "timed out after 12s" in str(info.value)


async def test_seed_is_sent_and_org_header_stays_with_openai(kit, monkeypatch):
    monkeypatch.setenv("OPENAI_ORG_ID", "org-private")
    monkeypatch.setenv("MISTRAL_API_KEY", "ms-secret")
    server = kit.Server("openai/chat_completion.json")
    request = kit.request("mistral-large-latest").model_copy(update={"seed": 42})
    async with server.client() as client:
        provider = get_provider("mistral:mistral-large-latest", http_client=client)
        await provider.complete(request)
    sent = server.requests[0]
    assert str(sent.url) == "https://api.mistral.ai/v1/chat/completions"
    assert server.bodies()[0]["seed"] == 42
    assert "openai-organization" not in sent.headers
    assert provider.family == "mistral"


async def test_an_unwrapped_http_stack_timeout_is_retried_not_a_crash(kit, openai_key):
    """Under CI load a raw ``httpcore2.ReadTimeout`` escaped the SDK and ended the whole run."""
    import httpcore2

    calls = 0

    def handler(request: httpx.Request) -> httpx.Response:
        nonlocal calls
        calls += 1
        if calls == 1:
            raise httpcore2.ReadTimeout("read timed out")
        fx = kit.load_fixture("openai/chat_completion.json")
        return httpx.Response(fx["status"], headers=fx["headers"], json=fx["body"])

    options = ProviderOptions(max_retries=2, timeout_s=12)
    async with httpx.AsyncClient(transport=httpx.MockTransport(handler)) as client:
        provider = get_provider("openai:gpt-4o", options=options, http_client=client)
        sleeps = kit.no_wait(provider)
        response = await provider.complete(kit.request("gpt-4o"))
    assert calls == 2 and len(sleeps.waits) == 1
    assert response.text


@pytest.mark.parametrize("spec, schema", [
    ("openai:gpt-4o", True),
    ("openai:o3-mini", True),  # a reasoning model: no temperature
    ("openai:gpt-4o", False),
    ("openai-compatible:qwen2.5@http://127.0.0.1:9/v1", True),
])
async def test_the_request_on_the_wire_is_the_one_chat_completions_create_sends(
        kit, openai_key, spec, schema):
    """The adapter posts its own body (no typed-parameter walk): the same parameters through
    ``chat.completions.create`` put the same body and the same headers on the wire."""
    import openai

    server = kit.Server("openai/chat_completion.json", "openai/chat_completion.json")
    async with server.client() as client:
        provider = get_provider(spec, http_client=client)
        request = kit.request("gpt-4o", schema=schema).model_copy(update={"seed": 11})
        await provider.complete(request)
        ours = server.requests[0]
        sdk = openai.AsyncOpenAI(api_key=openai_key if spec.startswith("openai:") else "not-needed",
                                 base_url=provider.base_url, max_retries=0, http_client=client,
                                 timeout=provider.timeout_s)
        if not spec.startswith("openai:"):
            sdk.organization = sdk.project = None
        await sdk.chat.completions.create(**json.loads(ours.content))
        theirs = server.requests[1]
    assert json.loads(ours.content) == json.loads(theirs.content)
    assert (ours.method, str(ours.url)) == (theirs.method, str(theirs.url))
    skip = {"content-length"}  # the same JSON, its keys in another order
    assert ({k: v for k, v in ours.headers.items() if k not in skip}
            == {k: v for k, v in theirs.headers.items() if k not in skip})


async def test_a_judge_call_skips_the_sdks_parameter_walk_and_reply_models(kit, openai_key,
                                                                          monkeypatch):
    """Per call, the SDK's TypedDict transform of the messages and schema and its construction
    of a ChatCompletion cost more CPU than the rest of a judged call (scripts/bench.py)."""
    import openai._models
    import openai.resources.chat.completions.completions as completions

    def forbidden(*args: object, **kwargs: object) -> None:
        raise AssertionError("the SDK's typed path was used")

    monkeypatch.setattr(completions, "async_maybe_transform", forbidden)
    monkeypatch.setattr(openai._models, "construct_type", forbidden)
    server = kit.Server("openai/chat_completion.json")
    async with server.client() as client:
        provider = get_provider("openai:gpt-4o", http_client=client)
        response = await provider.complete(kit.request("gpt-4o"))
    assert json.loads(response.text)["overall"] == "pass"
    assert (response.usage.input_tokens, response.usage.output_tokens) == (412, 58)
