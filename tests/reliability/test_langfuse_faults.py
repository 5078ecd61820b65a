"""Item 3: Langfuse down, slow (5 s per request), answering 500, or 207 with rejections.

The run must complete in a bounded extra time (the end-of-run flush has a 10 s budget and the
prompt-version lookup a 2 s request timeout, instead of 5 s per request for every item), the outbox
must keep the run, and a later ``sync`` must deliver everything exactly once: the same traces,
observations and scores as a run synced to a healthy Langfuse, and nothing sent on the next sync.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator
from typing import Any

import pytest
from standin import PUBLIC_KEY, SECRET_KEY, LangfuseStandin

from legal_judge.benchmark.ensemble_config import load_ensemble_config
from legal_judge.benchmark.runner import run_benchmark
from legal_judge.store import Store
from legal_judge.sync.plan import item_trace_id
from legal_judge.sync.sink import sync_now

from .conftest import bench_items
from .invariants import dump

N_ITEMS = 8
FLUSH_BUDGET_S = 10.0  # the runner's end-of-run flush timeout
REQUEST_TIMEOUT_S = 2.0
SLOW_S = 5.0


@pytest.fixture(scope="module")
def server() -> Iterator[LangfuseStandin]:
    s = LangfuseStandin().start()
    yield s
    s.stop()


@pytest.fixture
def standin(server: LangfuseStandin, monkeypatch: pytest.MonkeyPatch) -> LangfuseStandin:
    if server._server is None:
        server.start()
    server.reset()
    monkeypatch.setenv("LANGFUSE_PUBLIC_KEY", PUBLIC_KEY)
    monkeypatch.setenv("LANGFUSE_SECRET_KEY", SECRET_KEY)
    monkeypatch.setenv("LANGFUSE_BASE_URL", server.base_url)
    monkeypatch.setenv("LANGFUSE_TIMEOUT", str(REQUEST_TIMEOUT_S))
    return server


def _run(store: Store) -> tuple[str, float]:
    config = load_ensemble_config("demo").model_copy(update={"run_checks": False})
    t0 = time.monotonic()
    out = asyncio.run(run_benchmark(bench_items(N_ITEMS), config, store=store))
    assert out.status == "completed" and len(out.results) == N_ITEMS
    return out.run_id, time.monotonic() - t0


def _delivered(standin: LangfuseStandin, run_id: str) -> dict[str, int]:
    traces = {item_trace_id(run_id, i.id) for i in bench_items(N_ITEMS)}
    st = standin.state
    return {"traces": len(traces & st.traces),
            "observations": sum(o["trace_id"] in traces for o in st.observations.values()),
            "scores": sum(s.get("traceId") in traces for s in st.scores.values())}


def _break(mode: str, standin: LangfuseStandin, monkeypatch: pytest.MonkeyPatch) -> None:
    if mode == "down":
        standin.stop()
    elif mode == "slow":
        standin.delay_s = SLOW_S
    elif mode == "500":
        monkeypatch.setattr(standin, "handle", lambda *a: (500, {"message": "boom"}, "json"))
    elif mode == "207":
        original = standin._score_problem

        def reject_some(s: dict[str, Any]) -> str | None:  # every other score refused
            return "rejected by the test" if hash(s.get("id")) % 2 else original(s)

        monkeypatch.setattr(standin, "_score_problem", reject_some)


def _heal(mode: str, standin: LangfuseStandin, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.undo()  # restores handle/_score_problem (and the env, set again below)
    standin.delay_s = 0.0
    if standin._server is None:
        standin.start()


@pytest.fixture(scope="module")
def control(server: LangfuseStandin, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """What a healthy Langfuse receives for the run, and how long the run takes without Langfuse."""
    with pytest.MonkeyPatch.context() as mp:
        home = tmp_path_factory.mktemp("control")
        mp.setenv("LEGAL_JUDGE_HOME", str(home))
        for var in ("LANGFUSE_PUBLIC_KEY", "LANGFUSE_SECRET_KEY", "LANGFUSE_BASE_URL"):
            mp.delenv(var, raising=False)
        _, offline_s = _run(Store(home / "offline.sqlite3"))
        server.reset()
        mp.setenv("LANGFUSE_PUBLIC_KEY", PUBLIC_KEY)
        mp.setenv("LANGFUSE_SECRET_KEY", SECRET_KEY)
        mp.setenv("LANGFUSE_BASE_URL", server.base_url)
        store = Store(home / "store.sqlite3")
        run_id, healthy_s = _run(store)
        assert store.outbox_status()["pending"] == 0
        return {"delivered": _delivered(server, run_id), "offline_s": offline_s,
                "healthy_s": healthy_s}


@pytest.mark.parametrize("mode", ["down", "slow", "500", "207"])
def test_langfuse_fault_keeps_the_outbox_and_a_later_sync_delivers_once(
        mode: str, standin: LangfuseStandin, control: dict[str, Any],
        monkeypatch: pytest.MonkeyPatch, tmp_path: Any) -> None:
    assert control["delivered"]["scores"] > 0
    _break(mode, standin, monkeypatch)
    store = Store(tmp_path / "store.sqlite3")
    run_id, took = _run(store)
    extra = took - control["offline_s"]
    # Bounded: the flush budget, the prompt lookup's request timeout and one slow request still
    # in flight, plus slack for a loaded machine; unbounded would be 5 s per request per item.
    assert extra < FLUSH_BUDGET_S + REQUEST_TIMEOUT_S + SLOW_S + 10.0
    assert store.get_run(run_id)["status"] == "completed"
    # Rejected scores (207) are content Langfuse refuses: the run is parked (kept, retried by
    # every sync, never failing the others); an outage leaves it pending.
    pending = store.outbox_parked() if mode == "207" else store.outbox_pending()
    assert [(r["entity_kind"], r["entity_id"]) for r in pending] == [("run", run_id)]
    assert pending[0]["attempts"] >= 1 and pending[0]["last_error"]
    assert len(store.load_results(run_id)) == N_ITEMS  # the store kept everything
    _heal(mode, standin, monkeypatch)
    monkeypatch.setenv("LANGFUSE_PUBLIC_KEY", PUBLIC_KEY)
    monkeypatch.setenv("LANGFUSE_SECRET_KEY", SECRET_KEY)
    monkeypatch.setenv("LANGFUSE_BASE_URL", standin.base_url)
    report = sync_now(store, timeout_s=30)
    assert report.delivered == 1 and report.pending == 0, report
    assert _delivered(standin, run_id) == control["delivered"]
    posts = len(standin.state.score_posts)
    again = sync_now(store, timeout_s=30)
    assert again.delivered == 0 and len(standin.state.score_posts) == posts  # delivered once
    print(dump({"langfuse": {"mode": mode, "run_s": round(took, 2),
                             "offline_s": round(control["offline_s"], 2),
                             "extra_s": round(extra, 2), "delivered": control["delivered"],
                             "first_error": pending[0]["last_error"][:120]}}))
