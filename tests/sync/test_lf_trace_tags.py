"""Langfuse filters: a simulated run's traces say so, with the system under test and release."""

from __future__ import annotations

import asyncio
import json
from typing import Any

from standin import LangfuseStandin

from legal_judge.benchmark.ensemble_config import load_ensemble_config
from legal_judge.benchmark.runner import run_benchmark
from legal_judge.dataset import load_dataset, sample_dataset_path
from legal_judge.store import Store
from legal_judge.sync.plan import item_trace_id

TAGS = "langfuse.trace.tags"
META = "langfuse.trace.metadata."


def _trace_attrs(st: Any, tid: str) -> dict[str, Any]:
    """The trace-level attributes the SDK put on the spans of trace ``tid``."""
    roots = [o for o in st.observations.values() if o["trace_id"] == tid
             and o["attributes"].get(TAGS) is not None]
    assert roots, f"no span with trace tags in trace {tid}"
    return roots[0]["attributes"]


def test_simulated_run_traces_carry_simulated_sut_and_release(standin: LangfuseStandin) -> None:
    items = load_dataset(sample_dataset_path())[:3]
    store = Store()
    out = asyncio.run(run_benchmark(items, load_ensemble_config("demo"), store=store,
                                    extra_config={"release": "v2.3.1"}))
    assert out.status == "completed" and store.outbox_status()["pending"] == 0
    st = standin.state
    assert not st.rejected
    for item in items:
        attrs = _trace_attrs(st, item_trace_id(out.run_id, item.id))
        tags = attrs[TAGS]
        tags = json.loads(tags) if isinstance(tags, str) else list(tags)
        assert {"simulated", f"sut:{item.system_under_test}", "release:v2.3.1"} <= set(tags)
        # the SDK sends each metadata value as JSON text
        assert json.loads(attrs[META + "system_under_test"]) == item.system_under_test
        assert json.loads(attrs[META + "release"]) == "v2.3.1"
        assert json.loads(attrs[META + "simulated"]) == "true"


def _tags(st: Any, tid: str) -> set[str]:
    tags = _trace_attrs(st, tid)[TAGS]
    return set(json.loads(tags) if isinstance(tags, str) else tags)


def test_simulated_audit_and_debias_traces_are_tagged_simulated(standin: LangfuseStandin,
                                                                store: Store) -> None:
    from legal_judge.audit import AuditSettings, load_targets, run_audit
    from legal_judge.debias.experiment import run_experiment, save_experiment
    from legal_judge.debias.pairs import load_pairs
    from legal_judge.judge.config import JudgeConfig
    from legal_judge.providers.registry import get_provider
    from legal_judge.sync.plan import det_id
    from legal_judge.sync.sink import get_sink

    config = JudgeConfig(spec="simulated:demo-openai")
    provider = get_provider(config.spec)

    async def experiment() -> dict[str, Any]:
        try:
            return await run_experiment(config, [p for p in load_pairs() if p.bias == "position"],
                                        provider=provider, modes=["plain", "aware"], repeats=1,
                                        store=store)
        finally:
            await provider.aclose()

    report = asyncio.run(experiment())
    save_experiment(store, report)
    target = load_targets("simulated:demo-openai", store=store)[0]
    settings = AuditSettings(pairs=6, min_sample=5, noise_pairs=2, min_complete_pairs=5, seed=0,
                             dimensions=["verbosity"], probe_pairs=6)
    audit = asyncio.run(run_audit(target, load_dataset(sample_dataset_path()), settings,
                                  store=store))
    get_sink().flush(store, timeout_s=20)
    st = standin.state
    assert not st.rejected
    assert {"debias", "simulated"} <= _tags(st, det_id(f"debias_experiment:{report['id']}"))
    assert {"audit", "simulated"} <= _tags(st, det_id(f"audit:{audit.audit_id}"))
