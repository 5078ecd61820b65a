"""What the hot-path work must not change: the call log's digests, cache keys, prices, warnings.

The judge memoises its schema's digest and builds its requests without validating them again;
prices are looked up once per model; the language warning no longer keeps every item id. Each test
pins what the store or the user sees to what the unoptimised computation gives.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import sqlite3
from pathlib import Path

import pytest

from legal_judge.benchmark.ensemble_config import EnsembleConfig
from legal_judge.benchmark.runner import run_benchmark
from legal_judge.dataset import load_dataset, sample_dataset_path
from legal_judge.judge.config import JudgeConfig
from legal_judge.judge.judge import Judge
from legal_judge.judge.parse import verdict_schema
from legal_judge.models import CompletionRequest
from legal_judge.providers.pricing import PRICES_ENV, cost_usd
from legal_judge.providers.registry import register_provider, unregister_provider
from legal_judge.store import Store, canonical_json

from .fakes import ScriptedProvider, verdict_json


def test_call_log_and_cache_key_carry_the_schemas_own_digest() -> None:
    store = Store()
    provider = ScriptedProvider("scripted:model-x", outputs=["not json", verdict_json()])
    judge = Judge(JudgeConfig(spec="scripted:model-x"), provider, store=store)
    item = load_dataset(sample_dataset_path())[0]
    verdict = asyncio.run(judge.judge(item, run_id="R"))
    assert verdict.status == "ok" and verdict.attempts == 2
    schema = verdict_schema(judge.active_rubrics(item))
    digest = hashlib.sha256(canonical_json(schema).encode()).hexdigest()
    db = sqlite3.connect(store.path)
    logged = [json.loads(r[0]) for r in db.execute(
        "SELECT request_json FROM judge_calls ORDER BY id")]
    keys = {r[0] for r in db.execute("SELECT key FROM provider_cache")}
    assert [c["json_schema_sha256"] for c in logged] == [digest[:16]] * 2
    assert [c["temperature"] for c in logged] == [0.0, 0.2]
    for sent in provider.requests:
        # The key of the request the judge sent equals the key of the same request validated
        # from scratch (a copied schema, so no memoised digest): nothing about the key changed.
        fresh = CompletionRequest.model_validate(sent.model_dump())
        assert fresh.json_schema is not sent.json_schema
        assert judge.cache_key(fresh) == judge.cache_key(sent) and judge.cache_key(sent) in keys


def test_another_schema_gets_its_own_key() -> None:
    provider = ScriptedProvider("scripted:model-x", outputs=[verdict_json()])
    judge = Judge(JudgeConfig(spec="scripted:model-x"), provider, store=Store())
    asyncio.run(judge.judge(load_dataset(sample_dataset_path())[0]))
    [sent] = provider.requests
    assert sent.json_schema is not None
    other = sent.model_copy(update={"json_schema": {**sent.json_schema, "title": "another"}})
    assert judge.cache_key(other) != judge.cache_key(sent)


def test_prices_follow_an_edited_price_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    prices = tmp_path / "prices.yaml"
    prices.write_text("providers:\n  openai:\n    models:\n      gpt-4o: {input: 1.0, output: 2.0}\n")
    monkeypatch.setenv(PRICES_ENV, str(prices))
    assert cost_usd("gpt-4o", 1_000_000, 1_000_000, provider="openai") == pytest.approx(3.0)
    prices.write_text("providers:\n  openai:\n    models:\n      gpt-4o: {input: 5.0, output: 5.0}\n")
    stat = prices.stat()
    os.utime(prices, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000_000))
    assert cost_usd("gpt-4o", 1_000_000, 1_000_000, provider="openai") == pytest.approx(10.0)
    monkeypatch.delenv(PRICES_ENV)
    assert cost_usd("gpt-4o", 1_000_000, 1_000_000, provider="openai") not in (3.0, 10.0)


def test_language_warning_counts_every_answer_and_names_the_first_six() -> None:
    register_provider("mono", lambda spec, o, c: ScriptedProvider(
        spec.raw, family="mistral", outputs=[verdict_json()] * 40))
    try:
        base = load_dataset(sample_dataset_path())[0]
        items = [base.model_copy(update={"id": f"fr-{k}", "prompt": f"{base.prompt} ({k})",
                                         "metadata": {"language": "fr"},
                                         "system_under_test": "gpt-4o"}) for k in range(9)]
        config = EnsembleConfig(judges=[JudgeConfig(spec="mono:mistral-large")], quorum=1)
        out = asyncio.run(run_benchmark(items, config, store=Store()))
    finally:
        unregister_provider("mono")
    [warning] = [w for w in out.warnings if "multilingual" in w]
    assert "scored 9 non-English answer(s): " in warning
    named = warning.split("answer(s): ")[1].split(" ...")[0].split(", ")
    assert named == [f"fr-{k} (fr)" for k in range(6)]
    assert warning.endswith(" ...; prefer a multilingual judge")


def test_the_judges_of_an_item_render_its_user_message_once(monkeypatch: pytest.MonkeyPatch) -> None:
    import legal_judge.assets.templates as templates
    from legal_judge.benchmark.ensemble_config import load_ensemble_config

    rendered: list[str] = []
    real = templates.render_string

    def counting(source: str, variables: dict, *, name: str = "<template>") -> str:  # type: ignore[type-arg]
        rendered.append(name)
        return real(source, variables, name=name)

    monkeypatch.setattr(templates, "render_string", counting)
    items = load_dataset(sample_dataset_path())[:5]
    items = [i.model_copy(update={"prompt": f"{i.prompt} (render-once)"}) for i in items]
    out = asyncio.run(run_benchmark(items, load_ensemble_config("demo"), store=Store()))
    assert out.status == "completed" and out.progress.cached == 0
    assert rendered.count("judge_user@1") == 5  # one per item, not one per judge


def test_schemas_equal_under_python_but_not_as_json_get_their_own_digests() -> None:
    provider = ScriptedProvider("scripted:model-x", outputs=[verdict_json()])
    judge = Judge(JudgeConfig(spec="scripted:model-x"), provider, store=Store())
    asyncio.run(judge.judge(load_dataset(sample_dataset_path())[0]))
    [sent] = provider.requests
    one, one_float = ({**(sent.json_schema or {}), "minimum": value} for value in (1, 1.0))
    assert one == one_float  # equal as Python values, but not the same JSON
    keys = {judge.cache_key(sent.model_copy(update={"json_schema": s})) for s in (one, one_float)}
    assert len(keys) == 2
