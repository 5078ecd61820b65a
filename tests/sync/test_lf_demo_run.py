"""A real (simulated-judge) run syncs itself at the end; an outage never fails the run."""

from __future__ import annotations

import asyncio

from standin import LangfuseStandin

from legal_judge.benchmark.ensemble_config import load_ensemble_config
from legal_judge.benchmark.runner import run_benchmark
from legal_judge.dataset import load_dataset, sample_dataset_path
from legal_judge.store import Store
from legal_judge.sync.langfuse_prompts import push_prompts
from legal_judge.sync.plan import item_trace_id
from legal_judge.sync.sink import get_sink


def _run(n: int = 5) -> tuple[Store, str, list[str]]:
    items = load_dataset(sample_dataset_path())[:n]
    store = Store()
    out = asyncio.run(run_benchmark(items, load_ensemble_config("demo"), store=store))
    assert out.status == "completed"
    return store, out.run_id, [i.id for i in items]


def test_demo_run_lands_in_langfuse_with_prompt_links(standin: LangfuseStandin) -> None:
    push_prompts(label="production")
    store, run_id, ids = _run()
    assert store.get_run(run_id)["config"]["langfuse_prompts"]["llm-judge-v2"] >= 1
    st = standin.state
    assert {item_trace_id(run_id, i) for i in ids} <= st.traces
    tid = item_trace_id(run_id, ids[0])
    gens = [o for o in st.observations.values() if o["trace_id"] == tid
            and o["attributes"].get("langfuse.observation.type") == "generation"]
    assert len(gens) == 3
    assert all(g["attributes"]["langfuse.observation.prompt.name"] == "llm-judge-v2" for g in gens)
    names = {s["name"] for s in st.scores.values() if s["traceId"] == tid}
    assert {"legal_soundness", "citation_quality", "overall", "hallucination"} <= names
    assert store.outbox_status()["pending"] == 0
    assert not st.rejected


def test_outage_during_run_then_sync_delivers_once(standin: LangfuseStandin) -> None:
    standin.stop()
    try:
        store, run_id, ids = _run(3)
        assert store.outbox_status()["pending"] == 1  # kept, not lost
        assert store.get_run(run_id)["status"] == "completed"
    finally:
        standin.start()
    report = get_sink().flush(store, timeout_s=20)
    assert report.delivered == 1 and store.outbox_status()["pending"] == 0
    assert {item_trace_id(run_id, i) for i in ids} <= standin.state.traces
    before = len(standin.state.scores)
    get_sink().flush(store, timeout_s=20)  # nothing pending: nothing sent again
    assert len(standin.state.scores) == before
