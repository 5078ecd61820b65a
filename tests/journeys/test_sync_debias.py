"""Journeys: debias a judge, sync everything to Langfuse, push prompts to staging (issue 20 #7, #8, #19).

The Langfuse side is the API stand-in of the contract tests (``tests/sync/standin.py``: the real
SDK's models validate every body), on 127.0.0.1 in this process; the CLI runs in a subprocess.
"""

from __future__ import annotations

import base64
import importlib.util
import json
import sqlite3
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import httpx
import pytest

from legal_judge.sync.plan import det_id, item_trace_id

from .conftest import Journey


def _standin_module() -> ModuleType:
    path = Path(__file__).parents[1] / "sync" / "standin.py"
    spec = importlib.util.spec_from_file_location("journey_langfuse_standin", path)
    assert spec is not None and spec.loader is not None
    if spec.name in sys.modules:
        return sys.modules[spec.name]
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


@pytest.fixture
def langfuse(journey: Journey) -> Iterator[Any]:
    """A running stand-in, and the journey's shell pointed at it."""
    mod = _standin_module()
    server = mod.LangfuseStandin().start()
    journey.env.update({"LANGFUSE_PUBLIC_KEY": mod.PUBLIC_KEY, "LANGFUSE_SECRET_KEY": mod.SECRET_KEY,
                        "LANGFUSE_BASE_URL": server.base_url, "LANGFUSE_TIMEOUT": "5"})
    yield server
    server.stop()


def _score_config(server: Any, **body: Any) -> None:
    auth = base64.b64encode(f"{server.public_key}:{server.secret_key}".encode()).decode()
    made = httpx.post(f"{server.base_url}/api/public/score-configs", json=body,
                      headers={"Authorization": f"Basic {auth}"})
    assert made.status_code == 200, made.text


def test_debias_then_sync_delivers_everything_and_parks_what_langfuse_refuses(
        journey: Journey, langfuse: Any) -> None:
    # The team's Langfuse already has a `legal_soundness` score config on a 0-1 scale: every
    # judge score of a run is refused (207).
    _score_config(langfuse, name="legal_soundness", dataType="NUMERIC", minValue=0, maxValue=1)
    demo_run = journey("demo", "--quiet")
    assert "parked" in demo_run.text and "sync --status" in demo_run.text  # said at the end
    run_id = journey.query("SELECT id FROM runs")[0][0]

    # #19: on the demo judge the warning fixes authority and the self pass verbosity, both
    # significantly after Holm; the output gives the lines to paste into the ensemble TOML.
    # (Old code: no TOML line at all.)
    demo = journey("debias", "compare", "--judge", "demo", "--biases", "authority,verbosity",
                   "--modes", "plain,aware,self", "--repeats", "1")
    # (Issue 29: each line names the judging form it applies to.)
    flat = " ".join(demo.out.split())
    assert 'authority: debias = { mode = "aware", bias = "authority" }' in flat
    assert 'verbosity: debias = { mode = "self", bias = "verbosity" }' in flat

    # #19: the case. simulated:biased on authority: aware+self gains 17 points with
    # p = 0.078 against plain. Old code recommended aware+self ("n.s."); now no mode helped.
    # swap is measured, and for position it wins (both orders, balanced position calibration).
    biased = journey("debias", "compare", "--judge", "simulated:biased",
                     "--biases", "authority,position", "--modes", "plain,aware+self,swap",
                     "--repeats", "1")
    assert "authority: keep plain (no mode helped significantly)" in biased.out
    # Issue 29: swap is for pairwise judging; an ensemble (pointwise) gets the cheapest mode
    # that acts on one answer and helped, never swap.
    flat = " ".join(biased.out.split())
    assert 'position, pairwise: debias = { mode = "swap" }' in flat
    assert 'position: debias = { mode = "aware+self", bias = "position" }' in flat
    assert "side effects of swap on the other biases: authority" in flat
    assert "authority: debias" not in flat
    stored = {json.loads(r[0])["judge"]: json.loads(r[0]) for r in journey.query(
        "SELECT report_json FROM debias_experiments")}
    assert stored["simulated:biased"]["recommendations"] == {"authority": "plain",
                                                             "position": "swap"}
    experiments = [r[0] for r in journey.query("SELECT id FROM debias_experiments")]

    # #7: the debias experiments are delivered; the refused run stays parked with its reason and
    # the fix, reported once, and blocks nothing. (Old code: "unknown outbox entity kind
    # 'debias_experiment'", exit 3, on this and every later sync.)
    first = journey("sync")
    assert "delivered 2, failed 0, pending 0, parked 1" in first.out, first.describe()
    assert first.text.count("Langfuse rejected") == 1
    assert first.text.count(f"fix (run {run_id}): make the Langfuse score config of that name "
                            "match the rubric") == 1
    assert "unknown outbox entity kind" not in first.text
    assert {det_id(f"debias_experiment:{e}") for e in experiments} <= langfuse.state.traces
    status = journey("sync", "--status")
    assert "pending: 0  delivered: 2  parked: 1" in status.out
    assert f"run {run_id}" in status.out and "reason: Langfuse rejected" in status.out

    # The score config is corrected in Langfuse: the next plain sync delivers the run.
    for cfg in langfuse.state.score_configs.values():
        if cfg["name"] == "legal_soundness":
            cfg["maxValue"] = 5
    healed = journey("sync")
    assert "delivered 1, failed 0, pending 0, parked 0" in healed.out, healed.describe()
    assert item_trace_id(run_id, journey.query("SELECT item_id FROM items LIMIT 1")[0][0]) \
        in langfuse.state.traces
    assert journey.query("SELECT COUNT(*) FROM outbox WHERE synced_at IS NULL") == [(0,)]
    assert "pending: 0  delivered: 3  parked: 0" in journey("sync", "--status").out

    # An entity this version cannot deliver (queued by a newer legal-judge) never blocks the
    # others: the sync that parks it says so (exit 2), later syncs go on (exit 0).
    db = sqlite3.connect(journey.store_file)
    db.execute("INSERT INTO outbox (entity_kind, entity_id, payload_json, created_at) "
               "VALUES ('forecast', 'f-1', '{}', '2026-01-01T00:00:00+00:00')")
    db.commit()
    db.close()
    journey("debias", "compare", "--judge", "demo", "--biases", "position", "--modes", "plain",
            "--repeats", "1")
    parked = journey("sync", expect=2)
    assert "delivered 1, failed 0, pending 0, parked 1" in parked.out, parked.describe()
    assert parked.text.count("cannot deliver 'forecast' entities") == 1
    assert "fix (forecast f-1): upgrade legal-judge" in parked.out
    assert "parked 1" in journey("sync").out  # exit 0: reported again, nothing new


def test_a_staging_push_leaves_production_untouched(journey: Journey, langfuse: Any) -> None:
    def production() -> dict[str, list[int]]:
        return {n: [p["version"] for p in vs if "production" in p["labels"]]
                for n, vs in langfuse.state.prompts.items()}

    # #8: a first staging push labels staging only (old code also set `production` on every
    # rubric) and composes the judge from the staging rubrics (old: `label=production`).
    journey("prompts", "push", "--label", "staging")
    assert all(v == [] for v in production().values()), production()
    judge = langfuse.state.prompts["llm-judge-v2"][-1]
    assert "label=staging" in judge["prompt"] and "label=production" not in judge["prompt"]

    # Reviewed, the same content goes to production: rubrics are labelled, the judge composed anew.
    journey("prompts", "promote", "llm-judge-v2", "1", "--label", "production", expect=2)
    pushed = journey("prompts", "push", "--label", "production")
    assert "labeled" in pushed.out
    # A lawyer edits a rubric in Langfuse and promotes it to production.
    name = "legal-judge/rubric/completeness"
    versions = langfuse.state.prompts[name]
    versions.append({**versions[-1], "version": len(versions) + 1, "labels": [],
                     "prompt": "EDITED COMPLETENESS"})
    journey("prompts", "promote", name, str(len(versions)), "--label", "production")
    before = production()

    # The repository's text goes to staging again: production does not move.
    journey("prompts", "push", "--label", "staging")
    assert production() == before
    staging = journey("prompts", "pull", "llm-judge-v2", "--label", "staging")
    assert "EDITED COMPLETENESS" not in staging.out and "@@@langfusePrompt" not in staging.out
    # staging still holds the repository's text (v1); the edit (v2) is production's.
    assert f"resolved {name} (label staging) -> v1" in staging.out
    prod = journey("prompts", "pull", "llm-judge-v2", "--label", "production")
    assert "EDITED COMPLETENESS" in prod.out
    assert f"resolved {name} (label production) -> v2" in prod.out
