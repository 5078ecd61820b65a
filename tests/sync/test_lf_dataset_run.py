"""Langfuse experiments: a run over ``langfuse:DATASET`` is a dataset run; judge scores have their
own names. The real SDK against the stand-in, which checks every link and builds every answer
through the SDK's own models."""

from __future__ import annotations

import asyncio
import json
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from langfuse import Langfuse
from lf_fixtures import CLIENT, JUDGES, RUBRICS, make_run
from standin import PROJECT_ID, LangfuseStandin, experiment_id_for

from legal_judge.benchmark.inputs import resolve_inputs
from legal_judge.benchmark.runner import run_benchmark
from legal_judge.store import Store
from legal_judge.sync.langfuse_client import Deadline, client_for
from legal_judge.sync.langfuse_datasets import link_dataset_run, push_dataset
from legal_judge.sync.langfuse_traces import emit_trace, flush_spans
from legal_judge.sync.mask import Masker
from legal_judge.sync.plan import item_trace_id, run_plans, span_id
from legal_judge.sync.plan_dataset import DATASET_ITEM_KEY, experiment_id
from legal_judge.sync.settings import require_settings
from legal_judge.sync.sink import get_sink


def _bench(tmp_path: Path) -> Path:
    path = tmp_path / "bench.jsonl"
    rows = [{"id": f"b{i}", "prompt": f"Question {i} for {CLIENT}: can a verbal lease be valid?",
             "response": f"Answer {i}: yes, for a term of up to three years (s. 54(2) LPA 1925).",
             "jurisdiction": "GB-EAW", "expected_signals": ["s. 54(2)"]} for i in range(3)]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def _run(dataset: str) -> tuple[Store, str]:
    store = Store()
    inputs = resolve_inputs(store, dataset, "demo", resume=None)
    out = asyncio.run(run_benchmark(inputs.items, inputs.config, store=store,
                                    extra_config={"dataset": dataset}))
    assert out.status == "completed"
    return store, out.run_id


def _since() -> datetime:
    return datetime.now(UTC) - timedelta(days=1)


def test_per_judge_scores_have_their_own_names_and_configs(standin: LangfuseStandin,
                                                           store: Store) -> None:
    make_run(store)
    sink = get_sink()
    sink.enqueue_run(store, "run-1")
    assert sink.flush(store, timeout_s=20).delivered == 1
    st = standin.state
    tid = item_trace_id("run-1", "q0")
    scores = [s for s in st.scores.values() if s["traceId"] == tid]
    ensemble = {s["name"] for s in scores if not s.get("observationId")}
    judges = [s for s in scores if s.get("observationId")]
    # A rubric's name is the ensemble's figure only; each judge's is judge.<rubric>.
    assert ensemble == {*RUBRICS, "hallucination", "overall"}
    assert {s["name"] for s in judges} == {f"judge.{n}" for n in ensemble}
    assert len(judges) == len(JUDGES) * len(ensemble)
    cfg = {c["name"]: c for c in st.score_configs.values()}
    for s in judges:
        assert s["configId"] == cfg[s["name"]]["id"]
        assert s["metadata"]["level"] == "judge" and s["metadata"]["rubric"] == s["name"][6:]
    assert cfg["judge.legal_soundness"]["dataType"] == "NUMERIC"
    assert (cfg["judge.legal_soundness"]["minValue"], cfg["judge.legal_soundness"]["maxValue"]) \
        == (0, 5)
    assert cfg["judge.hallucination"]["dataType"] == "CATEGORICAL"
    assert cfg["judge.overall"]["dataType"] == "BOOLEAN"
    assert cfg["legal_soundness"]["id"] != cfg["judge.legal_soundness"]["id"]
    by_judge = {s["metadata"]["judge"] for s in judges if s["name"] == "judge.legal_soundness"}
    assert by_judge == {j[0] for j in JUDGES}
    assert not st.rejected


def test_a_run_over_a_langfuse_dataset_is_a_dataset_run(standin: LangfuseStandin,
                                                        tmp_path: Path) -> None:
    push_dataset(_bench(tmp_path), name="gold-gb")
    dataset = standin.state.datasets["gold-gb"]
    store, run_1 = _run("langfuse:gold-gb")
    _, run_2 = _run("langfuse:gold-gb")  # the next release, same dataset
    assert not standin.state.rejected, standin.state.rejected
    items = store.load_items(run_1)
    assert items[0]["metadata"][DATASET_ITEM_KEY]["dataset_id"] == dataset["id"]

    # Read back with the SDK, as Langfuse's experiment comparison would.
    api = client_for(require_settings()).lf.api
    runs = api.experiments.list(from_start_time=_since(), dataset_id=dataset["id"]).data
    assert sorted(e.name for e in runs) == sorted([run_1, run_2])
    assert all(e.item_count == 3 and e.dataset_id == dataset["id"] for e in runs)
    assert {e.id for e in runs} == {experiment_id_for(PROJECT_ID, dataset["id"], r)
                                    for r in (run_1, run_2)}
    dataset_items = {i["metadata"]["item_id"]: i["id"]
                     for i in standin.state.dataset_items.values()}
    for run_id in (run_1, run_2):
        got = api.experiments.list_items(from_start_time=_since(), experiment_name=run_id).data
        linked = {i.experiment_item_id: i.trace_id for i in got}
        assert linked == {dataset_items[i]: item_trace_id(run_id, i) for i in dataset_items}
        root = got[0]
        assert root.id == span_id(root.trace_id, "root") and root.environment == "sdk-experiment"
        assert root.expected_output == {"expected_signals": ["s. 54(2)"]}
        assert root.experiment_metadata and root.experiment_metadata["run_id"] == run_id
    # Every span of an item's trace carries the link (the SDK propagates it the same way).
    tid = item_trace_id(run_1, "b0")
    spans = [o for o in standin.state.observations.values() if o["trace_id"] == tid]
    assert len(spans) > 3 and all(o["attributes"]["langfuse.experiment.name"] == run_1
                                  for o in spans)
    # The item's scores stay on the trace the experiment item points at.
    names = {s["name"] for s in standin.state.scores.values() if s["traceId"] == tid}
    assert {"legal_soundness", "judge.legal_soundness"} <= names


def test_a_resync_keeps_one_dataset_run(standin: LangfuseStandin, tmp_path: Path) -> None:
    push_dataset(_bench(tmp_path), name="gold-gb")
    store, run_id = _run("langfuse:gold-gb")
    before = dict(standin.state.experiment_items)
    sink = get_sink()
    sink.enqueue_run(store, run_id)
    assert sink.flush(store, timeout_s=20).delivered == 1
    assert list(standin.state.experiments) == [next(iter(before))[0]]
    assert set(standin.state.experiment_items) == set(before)
    assert not standin.state.rejected


def test_a_run_over_a_file_is_not_a_dataset_run(standin: LangfuseStandin,
                                                tmp_path: Path) -> None:
    store, run_id = _run(str(_bench(tmp_path)))
    assert standin.state.traces >= {item_trace_id(run_id, f"b{i}") for i in range(3)}
    assert not any("langfuse.experiment.id" in o["attributes"]
                   for o in standin.state.observations.values())
    assert not any(r["path"] == "/api/public/projects" for r in standin.state.requests)
    assert DATASET_ITEM_KEY not in store.load_items(run_id)[0]["metadata"]


def test_the_stand_in_refuses_a_link_to_an_item_of_no_dataset(standin: LangfuseStandin,
                                                              tmp_path: Path) -> None:
    push_dataset(_bench(tmp_path), name="gold-gb")
    store, run_id = _run("langfuse:gold-gb")
    standin.reset()  # the datasets are gone: the same links now point nowhere
    plans = link_dataset_run(store, run_id, run_plans(
        store, run_id, masker=Masker(), configs=set(), judge_name="llm-judge-v2"),
        masker=Masker())
    c = client_for(require_settings())
    emit_trace(c, plans[0])
    flush_spans(c, Deadline(10))
    assert any("unknown dataset" in r for r in standin.state.rejected), standin.state.rejected
    assert not standin.state.experiment_items


def test_experiment_ids_match_the_sdk_derivation() -> None:
    sdk: Any = Langfuse._create_experiment_id  # the SDK's copy of the server's rule
    for project, dataset, run in (("p", "d", "run-1"), (PROJECT_ID, "ds-é", "run-20261201")):
        assert experiment_id(project, dataset, run) == sdk(
            None, project_id=project, dataset_id=dataset, run_name=run)
