"""A team's own rubric, found on the assets search path, used by its ensemble and synced."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from standin import LangfuseStandin

from legal_judge.benchmark.ensemble_config import load_ensemble_config
from legal_judge.benchmark.runner import run_benchmark
from legal_judge.dataset import load_dataset, sample_dataset_path
from legal_judge.store import Store
from legal_judge.sync.langfuse_prompts import push_prompts
from legal_judge.sync.plan import item_trace_id

TEAM = Path(__file__).resolve().parents[1] / "data" / "team_assets"


def test_a_custom_rubric_is_scored_and_synced(standin: LangfuseStandin,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LEGAL_JUDGE_ASSETS", str(TEAM))
    pushed = {r["name"]: r for r in push_prompts(label="production")}
    assert pushed["legal-judge/rubric/plain_language"]["action"] == "created"
    prompt = standin.state.prompts["legal-judge/rubric/plain_language"][-1]
    assert "Plain language" in prompt["prompt"] and "production" in prompt["labels"]

    items = load_dataset(sample_dataset_path())[:3]
    store = Store()
    out = asyncio.run(run_benchmark(items, load_ensemble_config(str(TEAM / "team.toml")),
                                    store=store))
    assert out.status == "completed"
    result = store.load_results(out.run_id)[items[0].id]
    assert "plain_language" in result["scores"]
    assert store.get_run(out.run_id)["config"]["rubric_set"].startswith("team_set")

    st = standin.state
    tid = item_trace_id(out.run_id, items[0].id)
    scores = [s for s in st.scores.values() if s["traceId"] == tid]
    cfg = {c["name"]: c for c in st.score_configs.values()}
    ensemble = next(s for s in scores if s["name"] == "plain_language")
    assert not ensemble.get("observationId") and ensemble["configId"] == cfg["plain_language"]["id"]
    assert ensemble["value"] == result["scores"]["plain_language"]
    judges = [s for s in scores if s["name"] == "judge.plain_language"]
    assert len(judges) == 3 and all(s["configId"] == cfg["judge.plain_language"]["id"]
                                    for s in judges)
    assert (cfg["plain_language"]["minValue"], cfg["plain_language"]["maxValue"]) == (0, 5)
    assert store.outbox_status()["pending"] == 0 and not st.rejected
