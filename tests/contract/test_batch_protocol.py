"""The batch protocol of the openai and anthropic adapters: what a batch sends is what online sends.

A batch request body must equal the body the online call puts on the wire, a batch result must
become the response the online call returns, and an SDK error must read as the online one.
"""

from __future__ import annotations

import anthropic
import openai
import pytest

from legal_judge.errors import AuthError
from legal_judge.providers import anthropic as anthropic_provider
from legal_judge.providers import get_provider
from legal_judge.providers.batch_protocol import BatchProtocol


@pytest.fixture(autouse=True)
def _keys(monkeypatch: pytest.MonkeyPatch, kit) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", kit.OPENAI_KEY)
    monkeypatch.setenv("ANTHROPIC_API_KEY", kit.ANTHROPIC_KEY)
    anthropic_provider._NO_TEMPERATURE.clear()


@pytest.mark.parametrize(("spec", "fixture", "error_fixture"), [
    ("openai:gpt-4o", "openai/chat_completion.json", "openai/error_401.json"),
    ("anthropic:claude-haiku-4-5", "anthropic/message_tool_use.json", "anthropic/error_401.json"),
])
async def test_batch_side_matches_the_online_call(kit, spec, fixture, error_fixture):
    model = spec.split(":", 1)[1]
    server = kit.Server(fixture, error_fixture, error_fixture)
    async with server.client() as client:
        provider = get_provider(spec, http_client=client)
        assert isinstance(provider, BatchProtocol)
        request = kit.request(model)
        online = await provider.complete(request)
        with pytest.raises(AuthError) as online_error:
            await provider.complete(request)
        sent = server.bodies()[0]
        assert provider.batch_body(request) == sent
        payload = kit.load_fixture(fixture)["body"]
        from_batch = provider.batch_response(payload, request)
        assert from_batch.model_dump(exclude={"latency_ms", "retries"}) == online.model_dump(
            exclude={"latency_ms", "retries"})
        assert (from_batch.latency_ms, from_batch.retries) == (0.0, 0)
        # The batch calls share the online SDK client (key, base URL, transport).
        sdk = provider.sdk_client
        assert isinstance(sdk, openai.AsyncOpenAI | anthropic.AsyncAnthropic)
        messages = [{"role": "user", "content": "hello"}]
        with pytest.raises((openai.APIError, anthropic.APIError)) as raw:
            if isinstance(sdk, openai.AsyncOpenAI):
                await sdk.chat.completions.create(model=model, messages=messages)  # type: ignore[arg-type]
            else:
                await sdk.messages.create(model=model, max_tokens=10, messages=messages)  # type: ignore[arg-type]
        translated = provider.translate_error(raw.value)
        assert type(translated) is type(online_error.value)
        assert translated.message == online_error.value.message
        assert kit.OPENAI_KEY not in translated.message and kit.ANTHROPIC_KEY not in translated.message
        await provider.aclose()
