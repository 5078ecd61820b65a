"""A batch run (``run --batch``) lands in Langfuse at its end exactly as an online run does."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from standin import LangfuseStandin

from legal_judge.batch import run_benchmark_batch
from legal_judge.batch.emulator import ProviderEmulator
from legal_judge.benchmark.ensemble_config import EnsembleConfig
from legal_judge.benchmark.runner import run_benchmark
from legal_judge.dataset import load_dataset, sample_dataset_path
from legal_judge.judge.judge import JudgeConfig
from legal_judge.providers.openai import forget_negotiated_modes
from legal_judge.store import Store
from legal_judge.sync.langfuse_prompts import push_prompts
from legal_judge.sync.plan import item_trace_id

SPECS = ("openai:gpt-4o", "simulated:demo-google", "simulated:demo-mistral")


@pytest.fixture
def openai_key(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-batch-0000")
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    forget_negotiated_modes()
    yield
    forget_negotiated_modes()


async def _batch(items: list[Any], config: EnsembleConfig, store: Store) -> str:
    emu = ProviderEmulator(polls_to_end=1)

    async def no_wait(_: float) -> None:
        return None

    async with emu.client() as client:
        out = await run_benchmark_batch(items, config, store=store, http_client=client,
                                        sleep=no_wait, online_threshold=0, use_cache=False)
    assert out.status == "completed" and out.batches_submitted == 1
    assert emu.calls["POST /v1/chat/completions"] == 0  # every openai call went by batch
    return out.run_id


async def _online(items: list[Any], config: EnsembleConfig, store: Store) -> str:
    emu = ProviderEmulator()
    async with emu.client() as client:
        out = await run_benchmark(items, config, store=store, http_client=client,
                                  use_cache=False)
    assert out.status == "completed" and emu.calls["POST /v1/chat/completions"] == len(items)
    return out.run_id


def _landed(standin: LangfuseStandin, run_id: str, item_id: str) -> dict[str, Any]:
    tid = item_trace_id(run_id, item_id)
    st = standin.state
    observations = [o for o in st.observations.values() if o["trace_id"] == tid]
    gens = [o for o in observations
            if o["attributes"].get("langfuse.observation.type") == "generation"]
    return {
        "trace": tid in st.traces,
        "observations": sorted(o["name"] for o in observations),
        "generations": sorted((g["name"], g["attributes"].get("langfuse.observation.model.name"),
                               g["attributes"].get("langfuse.observation.prompt.name"))
                              for g in gens),
        "scores": sorted(s["name"] for s in st.scores.values() if s["traceId"] == tid),
    }


async def test_batch_run_syncs_at_its_end_like_an_online_run(standin: LangfuseStandin,
                                                            openai_key: None) -> None:
    push_prompts(label="production")
    items = load_dataset(sample_dataset_path())[:4]
    config = EnsembleConfig(judges=[JudgeConfig(spec=s) for s in SPECS], run_checks=False)
    store = Store()
    # No cache: the batch run must send its own requests, not reuse the online run's answers.
    online = await _online(items, config, store)
    batch = await _batch(items, config, store)
    # Both ran their sync at the end: nothing left in the outbox, nothing rejected.
    assert store.outbox_status() == {"pending": 0, "delivered": 2}
    assert not standin.state.rejected
    for run_id in (online, batch):
        run = store.get_run(run_id)
        assert run["config"]["langfuse_prompts"]["llm-judge-v2"] >= 1
        assert not run["summary"]["warnings"]
    for item in items:
        want, got = _landed(standin, online, item.id), _landed(standin, batch, item.id)
        assert got["trace"] and got["generations"] and got["scores"]
        assert got == want
        assert {p for _, _, p in got["generations"]} == {"llm-judge-v2"}
        assert {"legal_soundness", "citation_quality", "overall"} <= set(got["scores"])
