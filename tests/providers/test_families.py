"""Model family rules."""

from __future__ import annotations

import pytest

from legal_judge.providers.families import family_of, normalize_model_name


@pytest.mark.parametrize(
    ("model", "family"),
    [
        ("gpt-4o", "openai"),
        ("gpt-4o-mini-2024-07-18", "openai"),
        ("o1-preview", "openai"),
        ("o3", "openai"),
        ("o4-mini", "openai"),
        ("chatgpt-4o-latest", "openai"),
        ("text-davinci-003", "openai"),
        ("ft:gpt-4o-mini-2024-07-18:acme::abc123", "openai"),
        ("claude-sonnet-4-5", "anthropic"),
        ("claude-3-5-sonnet@20240620", "anthropic"),
        ("gemini-2.5-pro", "google"),
        ("models/gemini-2.5-flash", "google"),
        ("gemma2:9b", "google"),
        ("meta-llama/Llama-3.1-70B-Instruct-Turbo", "meta"),
        ("meta-llama/Meta-Llama-3.1-70B-Instruct-Turbo", "meta"),
        ("llama3.1:70b", "meta"),
        ("llama-3.1-70b-versatile", "meta"),
        ("codellama:13b", "meta"),
        ("mistral-large-latest", "mistral"),
        ("mistralai/Mixtral-8x7B-Instruct-v0.1", "mistral"),
        ("codestral-latest", "mistral"),
        ("ministral-8b-latest", "mistral"),
        ("command-r-plus", "cohere"),
        ("Qwen/Qwen2.5-72B-Instruct", "alibaba"),
        ("qwen2.5:7b", "alibaba"),
        ("deepseek-chat", "deepseek"),
        ("deepseek-r1-distill-llama-70b", "deepseek"),  # lineage named first wins
        ("grok-4", "xai"),
        ("phi-3-mini-4k-instruct", "microsoft"),
        ("microsoft/Phi-4", "microsoft"),
        ("dolphin-2.9", "unknown"),  # contains "phi" mid-word: not Microsoft
        ("smollm2", "huggingface"),
        ("/models/SmolLM2-135M-Instruct.Q4_1.gguf", "huggingface"),
        ("totally-new-model", "unknown"),
    ],
)
def test_family_rules(model, family):
    assert family_of(model) == family


def test_overrides_exact_and_glob():
    overrides = {"my-finetune-v2": "openai", "acme-*": "anthropic"}
    assert family_of("my-finetune-v2", overrides=overrides) == "openai"
    assert family_of("ACME-judge-1", overrides=overrides) == "anthropic"
    # overrides beat the built-in rules
    assert family_of("gpt-4o", overrides={"gpt-4o": "azure"}) == "azure"
    assert family_of("gpt-4o", overrides={}) == "openai"


@pytest.mark.parametrize(
    ("raw", "normalized"),
    [
        ("meta-llama/Llama-3.1-70B", "llama-3.1-70b"),
        ("llama3.1:70b", "llama3.1"),
        ("ft:gpt-4o-mini:org::id", "gpt-4o-mini"),
        ("/m/SmolLM2-135M.gguf", "smollm2-135m"),
    ],
)
def test_normalize_model_name(raw, normalized):
    assert normalize_model_name(raw) == normalized
