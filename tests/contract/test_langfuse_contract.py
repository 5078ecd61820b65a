"""Contract tests: the real langfuse SDK against the stand-in, driven through the sink."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
from lf_fixtures import CLIENT, JUDGES, RUBRICS, make_run
from standin import LangfuseStandin

from legal_judge.store import Store
from legal_judge.sync.langfuse_prompts import push_prompts
from legal_judge.sync.plan import det_id, item_trace_id, span_id
from legal_judge.sync.sink import OutboxSink, get_sink


def _gens(standin: LangfuseStandin, trace_id: str) -> list[dict]:
    return [o for o in standin.state.observations.values() if o["trace_id"] == trace_id
            and o["attributes"].get("langfuse.observation.type") == "generation"]


def test_run_sync_creates_traces_generations_and_scores(standin: LangfuseStandin,
                                                        store: Store) -> None:
    push_prompts(label="production")
    items = make_run(store, judge_prompt_version=1)
    sink = get_sink()
    sink.enqueue_run(store, "run-1")
    report = sink.flush(store, timeout_s=20)
    assert report.configured and report.delivered == 1 and report.failed == 0, report
    assert store.outbox_status() == {"pending": 0, "delivered": 1}

    st = standin.state
    assert st.traces == {item_trace_id("run-1", i) for i in items}
    tid = item_trace_id("run-1", "q0")
    gens = _gens(standin, tid)
    # 3 judges' verdict calls + mistral's failed first attempt + gpt's self-debias pass
    assert sorted(g["name"] for g in gens) == sorted(
        ["verdict.gpt", "verdict.gemini", "verdict.mistral", "verdict.mistral", "self_debias.gpt"])
    first = next(g for g in gens if g["name"] == "verdict.gpt")
    a = first["attributes"]
    assert a["langfuse.observation.model.name"] == "gpt-4o"
    assert a["langfuse.observation.model.parameters"]["temperature"] in (0, 0.0, "0.0")
    assert a["langfuse.observation.usage_details"] == {"input": 1200, "output": 300}
    assert a["langfuse.observation.cost_details"]["total"] > 0
    assert a["langfuse.observation.prompt.name"] == "llm-judge-v2"
    assert a["langfuse.observation.prompt.version"] == 1
    assert first["end_ns"] - first["start_ns"] == 1_500_000_000  # latency from the call log
    kinds = {o["name"]: o["attributes"].get("langfuse.observation.type")
             for o in st.observations.values() if o["trace_id"] == tid}
    assert kinds["ensemble"] == "evaluator" and kinds["judge_item"] == "chain"
    assert kinds["check.citations"] == "guardrail" and kinds["self_debias.gpt.outcome"] == "span"
    root = next(o for o in st.observations.values()
                if o["trace_id"] == tid and o["name"] == "judge_item")
    assert root["attributes"]["langfuse.internal.as_root"] is True
    assert root["attributes"]["session.id"] == "run-1"

    scores = [s for s in st.scores.values() if s["traceId"] == tid]
    cfg = {c["name"]: c for c in st.score_configs.values()}
    trace_level = {s["name"]: s for s in scores if not s.get("observationId")}
    assert set(trace_level) == {*RUBRICS, "hallucination", "overall"}
    assert trace_level["legal_soundness"]["value"] == 4.0
    assert trace_level["legal_soundness"]["configId"] == cfg["legal_soundness"]["id"]
    assert trace_level["hallucination"] == {**trace_level["hallucination"], "value": "clean",
                                            "dataType": "CATEGORICAL"}
    assert trace_level["overall"]["dataType"] == "BOOLEAN" and trace_level["overall"]["value"] == 1
    judge_scores = [s for s in scores if s.get("observationId")]
    assert len(judge_scores) == len(JUDGES) * (len(RUBRICS) + 2)
    gpt_gen = span_id(tid, next(k for k in [f"call:{i}" for i in range(1, 100)]
                                if span_id(tid, k) == first["span_id"]))
    assert {s["observationId"] for s in judge_scores if s["metadata"]["judge"] == "gpt"} == {gpt_gen}
    assert cfg["legal_soundness"]["dataType"] == "NUMERIC"
    assert (cfg["legal_soundness"]["minValue"], cfg["legal_soundness"]["maxValue"]) == (0, 5)
    assert [c["label"] for c in cfg["hallucination"]["categories"]] == [
        "clean", "uncertain", "hallucinated"]
    assert not st.rejected


def test_resync_updates_never_duplicates(standin: LangfuseStandin, store: Store) -> None:
    make_run(store)
    sink = get_sink()
    sink.enqueue_run(store, "run-1")
    assert sink.flush(store, timeout_s=20).delivered == 1
    obs_ids, score_ids = set(standin.state.observations), set(standin.state.scores)
    n_spans, n_configs = len(standin.state.spans), len(standin.state.score_configs)
    sink.enqueue_run(store, "run-1")  # the run is queued again (e.g. resumed): sent again
    assert store.outbox_status()["pending"] == 1
    assert sink.flush(store, timeout_s=20).delivered == 1
    assert len(standin.state.spans) == 2 * n_spans  # really sent twice ...
    assert set(standin.state.observations) == obs_ids  # ... onto the same ids
    assert set(standin.state.scores) == score_ids
    assert len(standin.state.score_configs) == n_configs  # configs created once
    sent = [s for post in standin.state.requests if post["path"] == "/api/public/scores"
            for s in post["body"]]
    by_id: dict[str, set[str]] = {}
    for s in sent:
        by_id.setdefault(s["id"], set()).add(s["timestamp"])
    assert all(len(stamps) == 1 for stamps in by_id.values())  # stable timestamps


def test_outage_keeps_outbox_then_sync_delivers_once(standin: LangfuseStandin,
                                                     store: Store) -> None:
    standin.stop()
    make_run(store)
    sink = get_sink()
    sink.enqueue_run(store, "run-1")
    report = sink.flush(store, timeout_s=3)
    assert report.delivered == 0 and report.failed == 1 and report.pending == 1
    row = store.outbox_pending()[0]
    assert row["attempts"] == 1 and row["last_error"]
    standin.start()
    report = sink.flush(store, timeout_s=20)
    assert report.delivered == 1 and report.pending == 0
    assert len(standin.state.traces) == 2
    n = len(standin.state.scores)
    assert get_sink().flush(store, timeout_s=20).delivered == 0  # nothing left: delivered once
    assert len(standin.state.scores) == n


def test_slow_langfuse_flush_is_bounded(standin: LangfuseStandin, store: Store) -> None:
    make_run(store, n_items=1)
    standin.delay_s = 5.0
    sink = get_sink()
    sink.enqueue_run(store, "run-1")
    t0 = time.monotonic()
    report = sink.flush(store, timeout_s=1.0)
    elapsed = time.monotonic() - t0
    assert report.delivered == 0 and report.pending == 1 and report.timed_out
    assert elapsed < 4.0  # bounded well below one slow request (5 s); not a wall-time benchmark


def test_unconfigured_sink_only_queues(store: Store, monkeypatch: pytest.MonkeyPatch) -> None:
    for var in ("LANGFUSE_PUBLIC_KEY", "LANGFUSE_SECRET_KEY", "LANGFUSE_BASE_URL"):
        monkeypatch.delenv(var, raising=False)
    make_run(store)
    sink = get_sink()
    assert isinstance(sink, OutboxSink) and not sink.deliver
    sink.enqueue_run(store, "run-1")
    report = sink.flush(store, timeout_s=1)
    assert not report.configured and report.pending == 1


def test_masked_names_never_reach_langfuse(standin: LangfuseStandin, store: Store,
                                           tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    mask = tmp_path / "mask.yaml"
    mask.write_text(f"patterns: ['s\\.146']\nnames: ['{CLIENT}']\n", encoding="utf-8")
    monkeypatch.setenv("LEGAL_JUDGE_MASK_FILE", str(mask))
    make_run(store)
    sink = get_sink()
    sink.enqueue_run(store, "run-1")
    assert sink.flush(store, timeout_s=20).delivered == 1
    received = standin.received_text()
    assert "[REDACTED]" in received
    assert CLIENT.lower() not in received.lower() and "s.146" not in received
    assert CLIENT in json.dumps(store.load_items("run-1"))  # the store keeps the original
    assert det_id("x") != det_id("y")
