"""Spec grammar, the registry, endpoint/key resolution and missing keys."""

from __future__ import annotations

import pytest

from legal_judge.errors import ConfigError, MissingKeyError
from legal_judge.models import CompletionRequest, CompletionResponse
from legal_judge.providers import (
    Provider,
    ProviderOptions,
    ProviderSpec,
    get_provider,
    known_prefixes,
    parse_spec,
    register_provider,
    unregister_provider,
)


@pytest.mark.parametrize(
    ("spec", "prefix", "model", "base_url"),
    [
        ("openai:gpt-4o", "openai", "gpt-4o", None),
        ("anthropic:claude-sonnet-4-5", "anthropic", "claude-sonnet-4-5", None),
        ("gemini:gemini-2.5-pro", "gemini", "gemini-2.5-pro", None),
        (
            "together:meta-llama/Llama-3.1-70B-Instruct-Turbo",
            "together",
            "meta-llama/Llama-3.1-70B-Instruct-Turbo",
            None,
        ),
        (
            "openai-compatible:llama3.1:70b@http://localhost:11434/v1",
            "openai-compatible",
            "llama3.1:70b",
            "http://localhost:11434/v1",
        ),
        ("openai-compatible:a@b@https://h/v1", "openai-compatible", "a@b", "https://h/v1"),
        # '@' not followed by a URL belongs to the model (Vertex-style ids)
        ("anthropic:claude-3-5-sonnet@20240620", "anthropic", "claude-3-5-sonnet@20240620", None),
        ("local:smollm2", "local", "smollm2", None),
        ("local:/models/x.gguf", "local", "/models/x.gguf", None),
        ("simulated:fair", "simulated", "fair", None),
        ("  OpenAI:gpt-4o ", "openai", "gpt-4o", None),
    ],
)
def test_parse_spec(spec, prefix, model, base_url):
    parsed = parse_spec(spec)
    assert (parsed.prefix, parsed.model, parsed.base_url) == (prefix, model, base_url)
    assert parsed.raw == spec.strip()


@pytest.mark.parametrize("spec", ["gpt-4o", "openai:", ":gpt-4o", "openai:@http://x/v1", ""])
def test_parse_spec_rejects(spec):
    with pytest.raises(ConfigError) as info:
        parse_spec(spec)
    assert info.value.code == "provider-spec-invalid"
    assert info.value.fix


def test_unknown_prefix_lists_known_ones():
    with pytest.raises(ConfigError) as info:
        get_provider("bedrock:claude")
    assert info.value.code == "provider-unknown"
    assert "openai-compatible" in str(info.value)
    assert {"openai", "anthropic", "gemini", "local", "simulated"} <= set(known_prefixes())


@pytest.mark.parametrize(
    ("spec", "env_var", "base_url"),
    [
        ("openai:gpt-4o", "OPENAI_API_KEY", "https://api.openai.com/v1"),
        (
            "gemini:gemini-2.5-pro",
            "GEMINI_API_KEY",
            "https://generativelanguage.googleapis.com/v1beta/openai/",
        ),
        ("mistral:mistral-large-latest", "MISTRAL_API_KEY", "https://api.mistral.ai/v1"),
        (
            "together:meta-llama/Llama-3.1-70B-Instruct-Turbo",
            "TOGETHER_API_KEY",
            "https://api.together.xyz/v1",
        ),
        ("groq:llama-3.1-70b-versatile", "GROQ_API_KEY", "https://api.groq.com/openai/v1"),
    ],
)
def test_service_endpoints_and_missing_keys(monkeypatch, spec, env_var, base_url):
    with pytest.raises(MissingKeyError) as info:
        get_provider(spec)
    assert info.value.env_var == env_var
    assert env_var in str(info.value)

    monkeypatch.setenv(env_var, "secret-value-xyz")
    provider = get_provider(spec)
    assert provider.base_url == base_url
    assert provider.key_env == env_var
    assert "secret-value-xyz" not in repr(provider)
    assert isinstance(provider, Provider)


async def test_gemini_request_goes_to_its_base_url(monkeypatch, kit):
    monkeypatch.setenv("GEMINI_API_KEY", "gm-secret")
    server = kit.Server("openai/chat_completion.json")
    async with server.client() as client:
        provider = get_provider("gemini:gemini-2.5-pro", http_client=client)
        await provider.complete(kit.request("gemini-2.5-pro"))
    sent = server.requests[0]
    assert (
        str(sent.url) == "https://generativelanguage.googleapis.com/v1beta/openai/chat/completions"
    )
    assert sent.headers["authorization"] == "Bearer gm-secret"
    assert provider.family == "google"
    body = server.bodies()[0]
    assert body["max_tokens"] == 800 and "max_completion_tokens" not in body


def test_missing_anthropic_key():
    with pytest.raises(MissingKeyError) as info:
        get_provider("anthropic:claude-haiku-4-5")
    assert info.value.env_var == "ANTHROPIC_API_KEY"


def test_openai_compatible_needs_a_url():
    with pytest.raises(ConfigError) as info:
        get_provider("openai-compatible:llama3")
    assert info.value.code == "provider-base-url-missing"


def test_openai_compatible_key_is_optional_unless_named(monkeypatch):
    provider = get_provider("openai-compatible:m@http://127.0.0.1:1/v1")
    assert provider.key_env == "OPENAI_COMPATIBLE_API_KEY"
    with pytest.raises(MissingKeyError) as info:
        get_provider(
            "openai-compatible:m@http://127.0.0.1:1/v1",
            options=ProviderOptions(api_key_env="MY_VLLM_KEY"),
        )
    assert info.value.env_var == "MY_VLLM_KEY"


def test_options_override_base_url_key_env_and_family(monkeypatch):
    monkeypatch.setenv("CORP_KEY", "k-123456")
    provider = get_provider(
        "openai:gpt-4o",
        options=ProviderOptions(
            base_url="https://proxy.example/v1", api_key_env="CORP_KEY", family="corp"
        ),
    )
    assert (provider.base_url, provider.key_env, provider.family) == (
        "https://proxy.example/v1",
        "CORP_KEY",
        "corp",
    )


def test_options_forbid_unknown_fields():
    with pytest.raises(ValueError):
        ProviderOptions(timeout=5)  # type: ignore[call-arg]


async def test_register_provider_custom_factory():
    class Echo:
        family = "test"

        def __init__(self, spec: ProviderSpec) -> None:
            self.spec = spec

        async def complete(self, request: CompletionRequest) -> CompletionResponse:
            return CompletionResponse(text=request.messages[-1].content, model=self.spec.model)

        async def aclose(self) -> None:
            return None

    seen: list[tuple[ProviderSpec, ProviderOptions, object]] = []

    def factory(spec, options, http_client):
        seen.append((spec, options, http_client))
        return Echo(spec)

    register_provider("echo", factory)
    try:
        provider = get_provider("echo:model-1", options=ProviderOptions(timeout_s=5))
        assert provider.spec.model == "model-1"
        assert seen[0][1].timeout_s == 5
        assert "echo" in known_prefixes()
    finally:
        unregister_provider("echo")
    with pytest.raises(ConfigError):
        get_provider("echo:model-1")
