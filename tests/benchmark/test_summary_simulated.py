"""A run is "scored by SIMULATED judges" when its ensemble has a simulated judge (its spec says
so), whatever the judges are named and whatever their verdicts say."""

from __future__ import annotations

import asyncio
import json
from typing import Any

from legal_judge.benchmark.ensemble_config import EnsembleConfig, load_ensemble_config
from legal_judge.benchmark.runner import run_benchmark
from legal_judge.dataset import load_dataset, sample_dataset_path
from legal_judge.models import CompletionRequest, CompletionResponse, Usage
from legal_judge.providers.base import parse_spec
from legal_judge.providers.registry import register_provider, unregister_provider
from legal_judge.store import Store


class _Quoting:
    """A real (non-simulated) judge whose rationale quotes an answer about simulated trading."""

    def __init__(self, spec: Any, options: Any, client: Any) -> None:
        self.spec, self.name = parse_spec(f"quoting:{spec.model}"), f"quoting:{spec.model}"

    async def complete(self, request: CompletionRequest) -> CompletionResponse:
        note = "the answer explains simulated trading (spoofing) under 7 U.S.C. § 6c(a)(5)(C)"
        rubrics = {r: {"score": 4, "rationale": note} for r in (
            "legal_soundness", "citation_quality", "jurisdiction_awareness", "completeness")}
        text = json.dumps({"rubrics": {**rubrics, "hallucination": {"result": "clean",
                                                                     "notes": note}},
                           "overall": "pass", "summary": f"simulated trading: {note}"})
        return CompletionResponse(text=text, model=self.spec.model, finish_reason="stop",
                                  usage=Usage(input_tokens=10, output_tokens=10))

    async def aclose(self) -> None:
        return None


def test_real_judges_quoting_the_word_are_not_simulated() -> None:
    register_provider("quoting", _Quoting)
    try:
        config = EnsembleConfig.model_validate({"name": "real", "run_checks": False, "judges": [
            {"name": n, "spec": f"quoting:{m}", "family": f}
            for n, m, f in (("a", "m-1", "openai"), ("b", "m-2", "google"),
                            ("c", "m-3", "mistral"))]})
        store = Store()
        items = load_dataset(sample_dataset_path())[:3]
        out = asyncio.run(run_benchmark(items, config, store=store, run_id="real"))
        assert out.status == "completed"
        assert any("simulated" in v["raw"] for v in store.load_verdicts("real").values())
        assert store.get_run("real")["summary"]["simulated"] is False
    finally:
        unregister_provider("quoting")


def test_renamed_simulated_judges_are_still_simulated() -> None:
    demo = load_ensemble_config("demo")
    renamed = demo.model_copy(update={"judges": [
        j.model_copy(update={"name": f"judge-{k}"}) for k, j in enumerate(demo.judges)]})
    store = Store()
    items = load_dataset(sample_dataset_path())[:3]
    asyncio.run(run_benchmark(items, renamed, store=store, run_id="renamed"))
    summary = store.get_run("renamed")["summary"]
    assert summary["simulated"] is True and set(summary["judges"]) == {
        "judge-0", "judge-1", "judge-2"}


def test_one_rule_names_a_simulated_spec() -> None:
    from legal_judge.providers.base import is_simulated_spec, parse_spec, spec_prefix

    for spec in ("simulated:demo-openai", " Simulated : demo-google?noise_sd=1", "SIMULATED:x"):
        assert is_simulated_spec(spec) and parse_spec(spec).prefix == spec_prefix(spec)
    for spec in ("openai-compatible:simulated-review@http://127.0.0.1:9/v1", "openai:gpt-4o", ""):
        assert not is_simulated_spec(spec)
