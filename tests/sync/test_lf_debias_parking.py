"""Debias experiments reach Langfuse; an entity that cannot be delivered is parked, never blocking.

Issue 20 #7: a debias experiment in the outbox made every sync fail with "unknown outbox entity
kind 'debias_experiment'" (exit 3, fix "upgrade legal-judge") forever.
"""

from __future__ import annotations

import asyncio
import base64
from pathlib import Path

import httpx
from click.testing import CliRunner
from lf_fixtures import make_run
from standin import LangfuseStandin

from legal_judge import __version__
from legal_judge.cli import cli
from legal_judge.debias.experiment import run_experiment, save_experiment
from legal_judge.debias.pairs import load_pairs
from legal_judge.judge.config import JudgeConfig
from legal_judge.providers.registry import get_provider
from legal_judge.store import Store
from legal_judge.sync.plan import det_id, item_trace_id, span_id
from legal_judge.sync.sink import get_sink, sync_now


def _experiment(store: Store) -> dict:
    config = JudgeConfig(spec="simulated:demo-openai")
    pairs = [p for p in load_pairs() if p.bias == "authority"]
    provider = get_provider(config.spec)

    async def go() -> dict:
        try:
            return await run_experiment(config, pairs, provider=provider,
                                        modes=["plain", "aware", "swap"], repeats=1, store=store)
        finally:
            await provider.aclose()

    report = asyncio.run(go())
    save_experiment(store, report)
    return report


def test_a_debias_experiment_is_delivered_as_a_trace_with_scores(standin: LangfuseStandin,
                                                                  store: Store) -> None:
    report = _experiment(store)
    make_run(store, n_items=1)
    sink = get_sink()
    sink.enqueue_run(store, "run-1")
    result = sink.flush(store, timeout_s=20)
    assert (result.delivered, result.failed, result.newly_parked, result.pending) == (2, 0, 0, 0)
    tid = det_id(f"debias_experiment:{report['id']}")
    obs = {o["name"]: o for o in standin.state.observations.values() if o["trace_id"] == tid}
    assert obs["debias_experiment"]["attributes"]["langfuse.observation.type"] == "chain"
    bias_obs = obs["debias.authority"]
    assert bias_obs["attributes"]["langfuse.observation.type"] == "evaluator"
    out = bias_obs["attributes"]["langfuse.observation.output"]
    assert out["recommendation"]["mode"] == report["biases"]["authority"]["recommendation"]["mode"]
    assert set(out["modes"]) == {"plain", "aware", "swap"}
    scores = {s["name"]: s for s in standin.state.scores.values() if s["traceId"] == tid}
    cell = report["biases"]["authority"]["modes"]["aware"]
    assert scores["debias.authority.aware.p_holm"]["value"] == cell["p_holm"]
    assert scores["debias.authority.aware.significant"]["value"] == float(cell["significant"])
    rec = scores["debias.authority.recommendation"]
    assert rec["dataType"] == "CATEGORICAL" and rec["comment"]
    assert rec["observationId"] == span_id(tid, "bias:authority")  # on the bias observation
    assert not scores["debias.swap.tokens_per_trial"].get("observationId")  # per mode: trace
    assert standin.state.traces >= {tid, item_trace_id("run-1", "q0")}
    assert not standin.state.rejected
    # Re-sent, it updates the same objects.
    n_obs, n_scores = len(standin.state.observations), len(standin.state.scores)
    store.outbox_put("debias_experiment", report["id"], {"experiment_id": report["id"]})
    assert sink.flush(store, timeout_s=20).delivered == 1
    assert (len(standin.state.observations), len(standin.state.scores)) == (n_obs, n_scores)


def test_undeliverable_entities_are_parked_and_never_block_the_others(
        standin: LangfuseStandin, store: Store) -> None:
    make_run(store, n_items=1)
    store.outbox_put("forecast", "f-1", {})  # a kind a newer legal-judge queued
    store.outbox_put("audit", "gone", {"audit_id": "gone"})  # no such audit in the store
    sink = get_sink()
    sink.enqueue_run(store, "run-1")
    result = sink.flush(store, timeout_s=20)
    assert (result.delivered, result.failed, result.newly_parked) == (1, 0, 2), result
    assert result.pending == 0 and store.outbox_pending() == []
    parked = {p["entity_kind"]: p for p in store.outbox_parked()}
    assert "cannot deliver 'forecast' entities" in parked["forecast"]["park_reason"]
    assert "upgrade legal-judge" in parked["forecast"]["park_fix"]
    assert "no longer holds audit gone" in parked["audit"]["park_reason"]
    assert "`legal-judge sync --drop gone`" in parked["audit"]["park_fix"]
    assert item_trace_id("run-1", "q0") in standin.state.traces
    # The next sync neither retries nor re-parks them; they stay listed.
    again = sink.flush(store, timeout_s=20)
    assert (again.delivered, again.failed, again.newly_parked, len(again.parked)) == (0, 0, 0, 2)
    # Another legal-judge version retries what this one parked (an upgrade is the fix).
    with store.transaction() as db:
        db.execute("UPDATE outbox SET parked_by = '0.0.1' WHERE entity_kind = 'forecast'")
    retried = sink.flush(store, timeout_s=20)
    # Still unknown to this version: parked again, quietly (nothing new for the user to do).
    assert (retried.retried, retried.newly_parked, len(retried.parked)) == (1, 0, 2)
    assert {p["parked_by"] for p in store.outbox_parked()} == {__version__}
    # Queueing an entity again makes it pending again.
    store.outbox_put("audit", "gone", {"audit_id": "gone"})
    assert [r["entity_id"] for r in store.outbox_pending()] == ["gone"]


def test_content_langfuse_refuses_is_parked_with_the_real_fix(standin: LangfuseStandin,
                                                              store: Store) -> None:
    # The project already has a `legal_soundness` score config on another scale (0-1): every
    # judge score of a run is rejected (207), while the debias experiment goes through.
    auth = base64.b64encode(f"{standin.public_key}:{standin.secret_key}".encode()).decode()
    made = httpx.post(f"{standin.base_url}/api/public/score-configs",
                      headers={"Authorization": f"Basic {auth}"},
                      json={"name": "legal_soundness", "dataType": "NUMERIC", "minValue": 0,
                            "maxValue": 1})
    assert made.status_code == 200, made.text
    report = _experiment(store)
    make_run(store, n_items=1)
    sink = get_sink()
    sink.enqueue_run(store, "run-1")
    result = sink.flush(store, timeout_s=20)
    assert (result.delivered, result.failed, result.newly_parked) == (1, 0, 1), result
    (p,) = store.outbox_parked()
    assert (p["entity_kind"], p["entity_id"]) == ("run", "run-1")
    assert "Langfuse rejected" in p["park_reason"] and "legal_soundness" in p["park_reason"]
    assert "score config" in p["park_fix"] and "next `legal-judge sync` retries" in p["park_fix"]
    assert det_id(f"debias_experiment:{report['id']}") in standin.state.traces
    # Every sync retries refused content; still refused, it is parked again, not reported as new.
    again = sync_now(store, timeout_s=20)
    assert (again.retried, again.delivered, again.newly_parked, len(again.parked)) == (1, 0, 0, 1)
    # Once the config is corrected in Langfuse (its range made 0-5), the next sync delivers it.
    for cfg in standin.state.score_configs.values():
        if cfg["name"] == "legal_soundness":
            cfg["maxValue"] = 5
    healed = sync_now(store, timeout_s=20)
    assert (healed.retried, healed.delivered, healed.newly_parked) == (1, 1, 0)
    assert store.outbox_parked() == [] and store.outbox_pending() == []


def test_sync_cli_reports_parked_once_and_status_lists_them(standin: LangfuseStandin,
                                                            tmp_path: Path) -> None:
    store = Store()  # the CLI's store ($LEGAL_JUDGE_HOME)
    make_run(store, n_items=1)
    get_sink().enqueue_run(store, "run-1")
    store.outbox_put("forecast", "f-1", {})
    store.close()
    runner = CliRunner()
    first = runner.invoke(cli, ["sync"])
    assert first.exit_code == 2, first.output  # the user must act; the run went through
    assert "delivered 1, failed 0, pending 0, parked 1" in first.output
    assert first.output.count("cannot deliver 'forecast' entities") == 1
    assert first.output.count("upgrade legal-judge") == 1
    later = runner.invoke(cli, ["sync"])
    assert later.exit_code == 0, later.output  # not stuck: nothing new to act on
    assert "parked 1" in later.output and "none new" in later.output
    assert later.output.count("fix (forecast f-1): upgrade legal-judge") == 1
    status = runner.invoke(cli, ["sync", "--status"])
    assert status.exit_code == 0 and "parked: 1" in status.output
    assert "forecast f-1" in status.output and "reason:" in status.output
    # Asked to retry (a fix applied), still undeliverable: parked again and reported as new.
    retried = runner.invoke(cli, ["sync", "--retry-parked"])
    assert retried.exit_code == 2 and "cannot deliver 'forecast'" in retried.output
    dropped = runner.invoke(cli, ["sync", "--drop-parked"])
    assert dropped.exit_code == 0 and "dropped 1 parked entity" in dropped.output
    assert "parked: 0" in runner.invoke(cli, ["sync", "--status"]).output
