"""``audit run --batch``: the audited judge's calls through provider batches, same report as online."""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from legal_judge.audit.design import AuditSettings
from legal_judge.audit.execute import run_audit
from legal_judge.audit.target import JudgeTarget
from legal_judge.batch.audit import run_audit_batch
from legal_judge.batch.base import parse_custom_id
from legal_judge.batch.emulator import EmulatedRequest, ProviderEmulator, default_answer
from legal_judge.batch.records import batch_rows
from legal_judge.dataset import load_dataset, sample_dataset_path
from legal_judge.judge.config import JudgeConfig
from legal_judge.judge.judge import Judge
from legal_judge.providers.pricing import cost_usd
from legal_judge.providers.registry import get_provider
from legal_judge.store import Store

SPECS = {"openai": "openai:gpt-4o", "anthropic": "anthropic:claude-haiku-4-5"}
ONLINE_ROUTE = {"openai": "POST /v1/chat/completions", "anthropic": "POST /v1/messages"}
CREATE_ROUTE = {"openai": "POST /v1/batches", "anthropic": "POST /v1/messages/batches"}
SETTINGS = AuditSettings(dimensions=["position", "verbosity", "authority"], pairs=12,
                         noise_pairs=3, min_complete_pairs=5, seed=7)


def answer(req: EmulatedRequest) -> str:
    """Verdicts as the emulator's default; pairwise answers with scores from the prompt's digest."""
    if "winner" in (req.schema or {}).get("properties", {}):
        d = hashlib.sha256(json.dumps(req.messages, sort_keys=True).encode()).digest()
        a, b = d[0] % 6, d[1] % 6
        return json.dumps({"reasoning": "emulated", "winner": "A" if a >= b else "B",
                           "score_a": a, "score_b": b})
    return default_answer(req)


def _target(spec: str, store: Store, client: Any) -> JudgeTarget:
    judge = Judge(JudgeConfig(spec=spec), get_provider(spec, http_client=client), store=store)
    return JudgeTarget(judge)


def _stats(report: dict[str, Any]) -> list[dict[str, Any]]:
    return report["dimension_results"]


async def _no_wait(seconds: float) -> None:
    return None


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
async def test_batch_audit_equals_online_audit_and_is_priced_at_batch_rates(tmp_path: Path,
                                                                            provider: str) -> None:
    spec = SPECS[provider]
    items = load_dataset(sample_dataset_path())
    online_emu, batch_emu = ProviderEmulator(answer=answer), ProviderEmulator(
        answer=answer, polls_to_end=2)
    online_store, batch_store = Store(tmp_path / "online.sqlite3"), Store(tmp_path / "b.sqlite3")
    async with online_emu.client() as client:
        target = _target(spec, online_store, client)
        online = await run_audit(target, items, SETTINGS, store=online_store, sync=False)
        await target.aclose()
    async with batch_emu.client() as client:
        target = _target(spec, batch_store, client)
        batch = await run_audit_batch(target, items, SETTINGS, store=batch_store, sync=False,
                                      sleep=_no_wait, online_threshold=0)
        await target.aclose()

    # Same judge answers -> the same statistics, pair by pair.
    assert online.status == batch.status == "complete"
    assert batch.judge_id == online.judge_id
    assert _stats(batch.report) == _stats(online.report)
    assert batch.report["extensions"]["dimensions"] == online.report["extensions"]["dimensions"]
    assert [(r.pair_id, r.variant_a_score, r.variant_b_score, r.repeat_score) for r in batch.rows] \
        == [(r.pair_id, r.variant_a_score, r.variant_b_score, r.repeat_score) for r in online.rows]
    assert sum(r.variant_a_score is not None for r in batch.rows) == len(batch.rows) == 36

    # Every provider call went through a batch (none online); custom ids are distinct call slots.
    # Identical variants hit the verdict cache, so fewer calls are made than judgments planned.
    made = online_emu.calls[ONLINE_ROUTE[provider]]
    assert 50 < made <= online.report["extensions"]["counts"]["calls_planned"]
    assert batch_emu.calls[ONLINE_ROUTE[provider]] == 0
    assert batch_emu.calls[CREATE_ROUTE[provider]] >= 1
    assert len(batch_emu.submitted_ids) == len(set(batch_emu.submitted_ids)) == made
    online_purposes = Counter(r[0] for r in online_store.db.execute(
        "SELECT purpose FROM judge_calls WHERE run_id = ? AND cached = 0", (online.audit_id,)))
    assert Counter(parse_custom_id(c)[2] for c in batch_emu.submitted_ids) == online_purposes
    assert set(online_purposes) == {"verdict", "audit-pairwise"}
    rows = batch_rows(batch_store, run_id=batch.audit_id)
    assert rows and {r["status"] for r in rows} == {"collected"}
    assert sum(r["meta"]["requests"] for r in rows) == made

    # The call log and the prices: batch rates, half of the online price for the same tokens.
    logged = batch_store.db.execute(
        "SELECT usage_json FROM judge_calls WHERE run_id = ? AND cached = 0",
        (batch.audit_id,)).fetchall()
    assert len(logged) == made
    model = spec.split(":")[1]
    online_cost = sum(cost_usd(model, u["input_tokens"], u["output_tokens"], provider=provider)
                      or 0.0 for u in (json.loads(r[0]) for r in logged))
    assert online_cost > 0
    info = batch.report["extensions"]["batch"]
    assert info["mode"] == "batch" and info["calls_via_batch"] == made and not info["calls_online"]
    assert info["batches_submitted"] == len(rows) and info["batch_requests"] == made
    assert info["cost_usd_at_online_rates"] == pytest.approx(online_cost)
    assert info["cost_usd"] == pytest.approx(online_cost / 2)
    stored = json.loads(batch_store.db.execute(
        "SELECT report_json FROM audits WHERE id = ?", (batch.audit_id,)).fetchone()[0])
    assert stored["extensions"]["batch"]["cost_usd"] == pytest.approx(online_cost / 2)


async def test_a_judge_without_a_batch_api_is_audited_online(tmp_path: Path) -> None:
    store = Store(tmp_path / "s.sqlite3")
    items = load_dataset(sample_dataset_path())
    judge = Judge(JudgeConfig(spec="simulated:demo-openai"), get_provider("simulated:demo-openai"),
                  store=store)
    settings = SETTINGS.model_copy(update={"dimensions": ["verbosity"]})
    out = await run_audit_batch(JudgeTarget(judge), items, settings, store=store, sync=False,
                                sleep=_no_wait)
    assert out.status == "complete"
    assert out.report["extensions"]["batch"] == {
        "mode": "online", "reason": "provider 'simulated' has no batch API"}
    assert batch_rows(store, run_id=out.audit_id) == []
    assert out.rows[0].variant_a_score is not None


def test_cli_audit_run_batch_flag(tmp_path: Path) -> None:
    from legal_judge.cli import cli

    out = tmp_path / "report.json"
    result = CliRunner().invoke(
        cli, ["audit", "run", "--judge", "simulated:demo-openai", "--batch", "--pairs", "12",
              "--dimensions", "verbosity", "--noise-pairs", "2", "--min-complete-pairs", "5",
              "--out", str(out)],
        env={"LEGAL_JUDGE_HOME": str(tmp_path / "home")}, catch_exceptions=False)
    assert result.exit_code == 0, result.output
    report = json.loads(out.read_text(encoding="utf-8"))
    assert report["extensions"]["batch"]["mode"] == "online"


def flaky_answer(req: EmulatedRequest) -> str:
    """Not JSON for about a quarter of first attempts (chosen by content: the same online)."""
    retry = any(m["role"] == "assistant" for m in req.messages)
    digest = hashlib.sha256(json.dumps(req.messages, sort_keys=True).encode()).digest()
    if not retry and digest[5] % 4 == 0:
        return "I would rather explain in prose."
    return answer(req)


async def test_json_retries_go_round_in_follow_up_batches_with_the_online_outcome(
        tmp_path: Path) -> None:
    items = load_dataset(sample_dataset_path())
    online_emu = ProviderEmulator(answer=flaky_answer)
    batch_emu = ProviderEmulator(answer=flaky_answer)
    online_store, batch_store = Store(tmp_path / "online.sqlite3"), Store(tmp_path / "b.sqlite3")
    spec = SPECS["openai"]
    async with online_emu.client() as client:
        target = _target(spec, online_store, client)
        online = await run_audit(target, items, SETTINGS, store=online_store, sync=False)
        await target.aclose()
    async with batch_emu.client() as client:
        target = _target(spec, batch_store, client)
        batch = await run_audit_batch(target, items, SETTINGS, store=batch_store, sync=False,
                                      sleep=_no_wait, online_threshold=0)
        await target.aclose()
    assert _stats(batch.report) == _stats(online.report)
    assert [(r.variant_a_score, r.variant_b_score) for r in batch.rows] == \
        [(r.variant_a_score, r.variant_b_score) for r in online.rows]
    attempts = Counter(parse_custom_id(c)[3] for c in batch_emu.submitted_ids)
    assert attempts[2] > 0 and set(attempts) == {1, 2}  # retries were answered on attempt 2
    assert batch_emu.calls["POST /v1/batches"] >= 2  # the first round, then follow-up batches
    assert batch_emu.calls["POST /v1/chat/completions"] == 0
    assert sum(attempts.values()) == online_emu.calls["POST /v1/chat/completions"]
