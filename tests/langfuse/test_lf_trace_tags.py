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
