"""Identical parked requests coalesce; stored batches carry digests; a batch audit is one round."""

from __future__ import annotations

import asyncio
import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from legal_judge.audit.execute import run_audit
from legal_judge.batch import run_benchmark_batch
from legal_judge.batch.audit import run_audit_batch
from legal_judge.batch.base import CallTag, custom_id, line_digest, parse_custom_id
from legal_judge.batch.emulator import ProviderEmulator
from legal_judge.batch.records import ABANDONED, COLLECTED, batch_rows, update_batch
from legal_judge.batch.routing import (
    CallRecord,
    Collector,
    Lane,
    records_cost,
)
from legal_judge.benchmark.ensemble_config import EnsembleConfig
from legal_judge.benchmark.runner import run_benchmark
from legal_judge.dataset import load_dataset, sample_dataset_path
from legal_judge.judge.config import JudgeConfig
from legal_judge.models import (
    BenchmarkItem,
    CompletionRequest,
    CompletionResponse,
    Message,
    Usage,
)
from legal_judge.providers.pricing import cost_usd
from legal_judge.store import Store

from .fakes import SimBatchBackend
from .test_audit_batch import SETTINGS, _no_wait, _target, answer

OPENAI, ANTHROPIC, ONLINE = "openai:gpt-4o", "anthropic:claude-haiku-4-5", "simulated:demo-mistral"


def _calls(store: Store, run_id: str, judge: str) -> list[dict[str, Any]]:
    rows = store.db.execute("SELECT * FROM judge_calls WHERE run_id = ? AND judge = ? ORDER BY id",
                            (run_id, judge))
    return [dict(r) for r in rows]


def _usage_cost(spec: str, call: dict[str, Any]) -> float:
    usage = json.loads(call["usage_json"])
    provider, model = spec.split(":")
    cost = cost_usd(model, usage["input_tokens"], usage["output_tokens"], provider=provider)
    assert cost is not None and cost > 0
    return cost


# batch runs ------------------------------------------------------------------------------------
async def test_duplicate_items_send_each_distinct_request_once(
        items: list[BenchmarkItem], make_config: Any, sleeps: Any) -> None:
    base = items[:4]
    dups = {"dup-0": base[0], "dup-2": base[2]}  # same content under another id
    run_items = base + [b.model_copy(update={"id": k}) for k, b in dups.items()]
    emu = ProviderEmulator()
    store = Store()
    async with emu.client() as client:
        out = await run_benchmark_batch(run_items, make_config(OPENAI, ANTHROPIC, ONLINE),
                                        store=store, http_client=client, sleep=sleeps,
                                        online_threshold=0)
    assert out.status == "completed" and out.batches_submitted == 2
    # One line per distinct request and judge: 4 distinct items, not 6.
    assert out.batch_requests == 8
    assert len(emu.submitted_ids) == len(set(emu.submitted_ids)) == 8
    for judge_index in (0, 1):
        positions = [parse_custom_id(c)[1] for c in emu.submitted_ids
                     if parse_custom_id(c)[0] == judge_index]
        sent = {(run_items[p].prompt, run_items[p].response) for p in positions}
        assert len(positions) == len(sent) == 4  # each distinct content once
    assert emu.calls["POST /v1/chat/completions"] == emu.calls["POST /v1/messages"] == 0

    verdicts = store.load_verdicts(out.run_id)
    for dup_id, original in dups.items():
        for spec in (OPENAI, ANTHROPIC, ONLINE):
            a, b = verdicts[(original.id, spec)], verdicts[(dup_id, spec)]
            assert a["status"] == b["status"] == "ok"
            assert a["scores"] == b["scores"] and a["overall"] == b["overall"]
        assert out.results[dup_id].scores == out.results[original.id].scores
        for spec in (OPENAI, ANTHROPIC):
            pair = {c["item_id"]: c for c in _calls(store, out.run_id, spec)
                    if c["item_id"] in (original.id, dup_id)}
            assert sorted(c["cached"] for c in pair.values()) == [0, 1]  # one paid, one shared
            paid = next(c for c in pair.values() if not c["cached"])
            shared = next(c for c in pair.values() if c["cached"])
            assert shared["response_text"] == paid["response_text"]
            assert verdicts[(shared["item_id"], spec)]["cost_usd"] == 0.0
            assert verdicts[(paid["item_id"], spec)]["cost_usd"] == pytest.approx(
                _usage_cost(spec, paid) / 2)  # the batch price
    # The run costs what the distinct items cost, each at the batch rate.
    for spec in (OPENAI, ANTHROPIC):
        paid_calls = [c for c in _calls(store, out.run_id, spec) if not c["cached"]]
        assert len(paid_calls) == 4
        total = sum(v["cost_usd"] for (_, s), v in verdicts.items() if s == spec)
        assert total == pytest.approx(sum(_usage_cost(spec, c) for c in paid_calls) / 2)


async def test_no_cache_sends_every_request_as_online_does(
        items: list[BenchmarkItem], make_config: Any, sleeps: Any) -> None:
    base = items[:3]
    run_items = [*base, base[0].model_copy(update={"id": "dup-0"})]
    emu = ProviderEmulator()
    async with emu.client() as client:
        out = await run_benchmark_batch(run_items, make_config(OPENAI, ONLINE), store=Store(),
                                        http_client=client, sleep=sleeps, online_threshold=0,
                                        use_cache=False)
    assert out.status == "completed"
    assert out.batch_requests == len(emu.submitted_ids) == 4  # the copy is paid for too


async def test_a_changed_request_is_sent_again_and_an_unneeded_batch_abandoned(
        items: list[BenchmarkItem], make_config: Any, sleeps: Any, tmp_path: Path) -> None:
    emu = ProviderEmulator(polls_to_end=3)  # still running when the first process leaves
    path = tmp_path / "s.sqlite3"
    config = make_config(OPENAI, ANTHROPIC, ONLINE)
    async with emu.client() as client:
        first = await run_benchmark_batch(items, config, store=Store(path), http_client=client,
                                          sleep=sleeps, run_id="run-c", wait=False)
    assert first.status == "submitted" and first.batches_submitted == 2
    store = Store(path)
    rows = {r["meta"]["judge"]: r for r in batch_rows(store, run_id="run-c")}
    old_openai, old_anthropic = rows[OPENAI]["id"], rows[ANTHROPIC]["id"]

    # Digests are parallel to the custom ids, and are those of the lines actually sent.
    for row in rows.values():
        ids, digests = row["meta"]["custom_ids"], row["meta"]["digests"]
        assert len(digests) == len(ids) == len(items)
        assert all(len(d) == 16 and int(d, 16) >= 0 for d in digests)
    uploaded = [x for x in emu.files["file-1"].splitlines() if x]
    assert [line_digest(x) for x in uploaded] == rows[OPENAI]["meta"]["digests"]
    assert [json.loads(x)["custom_id"] for x in uploaded] == rows[OPENAI]["meta"]["custom_ids"]

    # Since then: every OpenAI request is rendered differently (another max_tokens, same label),
    # and one Anthropic request "changed" (its stored digest no longer matches).
    changed = EnsembleConfig(judges=[JudgeConfig(spec=OPENAI, max_tokens=1234),
                                     JudgeConfig(spec=ANTHROPIC), JudgeConfig(spec=ONLINE)],
                             run_checks=False)
    assert [j.label for j in changed.judges] == [j.label for j in config.judges]
    digests = list(rows[ANTHROPIC]["meta"]["digests"])
    moved = rows[ANTHROPIC]["meta"]["custom_ids"].index("j1-i2-v1")
    digests[moved] = "0" * 16
    update_batch(store, old_anthropic, meta={"digests": digests})

    async with emu.client() as client:
        second = await run_benchmark_batch([], changed, store=store, http_client=client,
                                           sleep=sleeps, run_id="run-c", resume=True)
    assert second.status == "completed"
    assert second.batches_submitted == 2  # the OpenAI requests, and the one Anthropic request
    assert emu.calls["POST /v1/batches"] == emu.calls["POST /v1/messages/batches"] == 2
    new_openai, new_anthropic = [b for b in emu.batches.values()
                                 if b.id not in (old_openai, old_anthropic)]
    assert [cid for cid, _ in new_openai.lines] == [f"j0-i{i}-v1" for i in range(len(items))]
    assert {body["max_completion_tokens"] for _, body in new_openai.lines} == {1234}
    assert [cid for cid, _ in new_anthropic.lines] == ["j1-i2-v1"]

    status = {r["id"]: r["status"] for r in batch_rows(store, run_id="run-c")}
    assert status == {old_openai: ABANDONED, old_anthropic: COLLECTED,
                      new_openai.id: COLLECTED, new_anthropic.id: COLLECTED}
    # Every item judged once per judge; nothing merged from the abandoned batch.
    for spec in (OPENAI, ANTHROPIC):
        calls = _calls(store, "run-c", spec)
        assert sorted(c["item_id"] for c in calls) == sorted(i.id for i in items)
        assert all(not c["cached"] and c["error"] is None for c in calls)
    openai_requests = [json.loads(c["request_json"]) for c in _calls(store, "run-c", OPENAI)]
    assert {r.get("max_tokens") for r in openai_requests} == {1234}

    # The results are those of an online run with the changed configuration.
    async with ProviderEmulator().client() as client:
        online = await run_benchmark(items, changed, store=Store(tmp_path / "o.sqlite3"),
                                     http_client=client)
    assert len(second.results) == len(items)
    for item in items:
        a, o = second.results[item.id], online.results[item.id]
        assert a.valid_judges == 3
        assert (a.scores, a.overall, a.votes) == (o.scores, o.overall, o.votes)


async def test_resume_with_unchanged_requests_collects_the_stored_batches(
        items: list[BenchmarkItem], make_config: Any, sleeps: Any, tmp_path: Path) -> None:
    emu = ProviderEmulator(polls_to_end=3)
    path = tmp_path / "s.sqlite3"
    config = make_config(OPENAI, ONLINE)
    async with emu.client() as client:
        await run_benchmark_batch(items, config, store=Store(path), http_client=client,
                                  sleep=sleeps, run_id="run-u", wait=False)
        second = await run_benchmark_batch([], config, store=Store(path), http_client=client,
                                           sleep=sleeps, run_id="run-u", resume=True)
    assert second.status == "completed" and second.batches_submitted == 0
    (row,) = batch_rows(Store(path), run_id="run-u")
    assert row["status"] == COLLECTED and emu.calls["POST /v1/batches"] == 1
    assert len(row["meta"]["digests"]) == len(row["meta"]["custom_ids"]) == len(items)
    assert "digests" not in batch_rows(Store(path), run_id="run-u", with_ids=False)[0]["meta"]


# batch audit -----------------------------------------------------------------------------------
async def test_a_batch_audit_is_one_round_and_reports_what_was_coalesced(tmp_path: Path) -> None:
    spec = OPENAI
    items = load_dataset(sample_dataset_path())
    online_emu, batch_emu = ProviderEmulator(answer=answer), ProviderEmulator(answer=answer,
                                                                              polls_to_end=2)
    online_store, batch_store = Store(tmp_path / "o.sqlite3"), Store(tmp_path / "b.sqlite3")
    async with online_emu.client() as client:
        target = _target(spec, online_store, client)
        online = await run_audit(target, items, SETTINGS, store=online_store, sync=False)
        await target.aclose()
    async with batch_emu.client() as client:
        target = _target(spec, batch_store, client)
        # Bounded: miscounted flows never settle, and the audit would wait for ever.
        batch = await asyncio.wait_for(run_audit_batch(
            target, items, SETTINGS, store=batch_store, sync=False, sleep=_no_wait,
            online_threshold=0), timeout=120)
        await target.aclose()
    assert online.status == batch.status == "complete"
    assert batch.report["dimension_results"] == online.report["dimension_results"]

    # Every pair task's judgments (A, B and the repeat) park together: one batch, one round.
    assert batch_emu.calls["POST /v1/batches"] == 1
    assert batch_emu.calls["POST /v1/chat/completions"] == 0
    (row,) = batch_rows(batch_store, run_id=batch.audit_id)
    assert row["status"] == COLLECTED
    assert len(row["meta"]["digests"]) == len(row["meta"]["custom_ids"])

    info = batch.report["extensions"]["batch"]
    logged = Counter(r[0] for r in batch_store.db.execute(
        "SELECT cached FROM judge_calls WHERE run_id = ?", (batch.audit_id,)))
    # A fresh store and one round: no call can hit the provider cache, so every cached call in
    # the log is one that waited for an identical parked request.
    assert info["calls_via_batch"] == logged[0] == info["batch_requests"]
    assert info["calls_via_batch"] == len(batch_emu.submitted_ids) == row["meta"]["requests"]
    assert info["calls_coalesced"] == logged[1] > 0  # identical variants were parked together
    assert info["calls_online"] == 0
    # Online, the same distinct requests are made (the rest are cache hits).
    assert info["calls_via_batch"] == online_emu.calls["POST /v1/chat/completions"]
    # A coalesced call costs nothing.
    paid = batch_store.db.execute("SELECT usage_json FROM judge_calls WHERE run_id = ? AND "
                                  "cached = 0", (batch.audit_id,)).fetchall()
    at_online = sum(cost_usd("gpt-4o", u["input_tokens"], u["output_tokens"], provider="openai")
                    or 0.0 for u in (json.loads(r[0]) for r in paid))
    assert info["cost_usd_at_online_rates"] == pytest.approx(at_online)
    assert info["cost_usd"] == pytest.approx(at_online / 2)


# the collector -----------------------------------------------------------------------------------
def _lane() -> Lane:
    return Lane(0, "fake:model", SimBatchBackend(None), None)


def _request(text: str, *, seed: int | None = None) -> CompletionRequest:
    return CompletionRequest(model="m", messages=[Message(role="user", content=text)], seed=seed)


def _response(text: str) -> CompletionResponse:
    return CompletionResponse(text=text, model="m", finish_reason="stop",
                              usage=Usage(input_tokens=10, output_tokens=5))


async def _spin() -> None:
    for _ in range(5):
        await asyncio.sleep(0)


async def test_forked_flows_settle_only_when_all_have_parked() -> None:
    collector = Collector(positions={}, unfinished=0)
    collector.start(1)
    assert not collector.is_settled()
    collector.fork(3)  # the task's one flow becomes three
    assert collector.active == 3
    lane, parked = _lane(), []
    for slot in range(3):
        assert not collector.is_settled()
        parked.append(asyncio.create_task(collector.park(
            lane, CallTag("x", "verdict", 1, position=slot), _request(f"r{slot}"))))
        await _spin()
    assert collector.is_settled() and collector.active == 0 and len(collector.pending) == 3
    for entry in list(collector.pending.values()):
        collector.resolve(entry, _response("ok"), via_batch=True)
    assert collector.active == 3  # woken: running again before their tasks resume
    await asyncio.gather(*parked)
    collector.flow_done(last=False)
    collector.flow_done(last=False)
    assert collector.active == 1 and not collector.is_settled()
    collector.flow_done(last=True)  # hands over to the forking flow: still running
    assert collector.active == 1 and not collector.is_settled()
    collector.task_done()
    assert collector.active == 0 and collector.unfinished == 0 and collector.is_settled()


async def test_identical_parked_requests_share_one_line_and_answer() -> None:
    collector = Collector(positions={}, unfinished=0)
    collector.start(3)
    lane = _lane()
    tasks = [asyncio.create_task(collector.park(lane, CallTag("x", "verdict", 1, position=p), r))
             for p, r in enumerate([_request("same"), _request("same"), _request("same", seed=9)])]
    await _spin()
    assert collector.is_settled()
    # The seeded request differs (a noise-floor repeat): it is not coalesced.
    assert sorted(collector.pending) == [custom_id(0, 0, "verdict", 1),
                                         custom_id(0, 2, "verdict", 1)]
    assert collector.coalesced == 1
    for entry in list(collector.pending.values()):
        collector.resolve(entry, _response(entry.custom_id), via_batch=True)
    (r0, b0), (r1, b1), (r2, b2) = await asyncio.gather(*tasks)
    assert (r0.cached, r1.cached, r2.cached) == (False, True, False)
    assert r0.text == r1.text == "j0-i0-v1" and r2.text == "j0-i2-v1"
    assert b0 and b1 and b2 and not collector.pending and not collector._by_key


async def test_a_failed_parked_request_fails_its_followers_too() -> None:
    collector = Collector(positions={}, unfinished=0)
    collector.start(2)
    lane = _lane()
    tasks = [asyncio.create_task(collector.park(lane, CallTag("x", "verdict", 1, position=p),
                                                _request("same"))) for p in (0, 1)]
    await _spin()
    (entry,) = collector.pending.values()
    collector.fail(entry, RuntimeError("gone"))
    results = await asyncio.gather(*tasks, return_exceptions=True)
    assert [str(r) for r in results] == ["gone", "gone"]
    assert collector.active == 2 and not collector._by_key


async def test_a_request_already_in_a_stored_batch_leads_its_identical_requests() -> None:
    collector = Collector(positions={}, unfinished=0)
    collector.start(2)
    lane = _lane()
    request = _request("same")
    stored = custom_id(0, 1, "verdict", 1)
    collector.in_flight[stored] = ("old-batch", line_digest(lane.backend.encode(stored, request)))
    first = asyncio.create_task(collector.park(lane, CallTag("x", "verdict", 1, position=0),
                                               request))
    await _spin()
    second = asyncio.create_task(collector.park(lane, CallTag("x", "verdict", 1, position=1),
                                                request))
    await _spin()
    (entry,) = collector.pending.values()  # the stored one took the lead; nothing new to send
    assert entry.custom_id == stored and entry.batch_id == "old-batch"
    collector.resolve(entry, _response("stored"), via_batch=True)
    (r0, _), (r1, _) = await asyncio.gather(first, second)
    assert (r0.cached, r1.cached) == (True, False) and r0.text == r1.text == "stored"


async def test_a_stored_line_with_another_digest_does_not_answer_the_request() -> None:
    collector = Collector(positions={}, unfinished=0)
    collector.start(1)
    lane = _lane()
    cid = custom_id(0, 0, "verdict", 1)
    collector.in_flight[cid] = ("old-batch", "0" * 16)
    task = asyncio.create_task(collector.park(lane, CallTag("x", "verdict", 1, position=0),
                                              _request("now")))
    await _spin()
    assert collector.pending[cid].batch_id is None  # to be sent again
    collector.in_flight[cid] = ("old-batch", None)  # an older row without digests: trusted
    assert collector._submitted_in(cid, lane, _request("now")) == "old-batch"
    collector.resolve(collector.pending[cid], _response("x"), via_batch=True)
    await task


def test_coalesced_calls_cost_nothing() -> None:
    paid = CallRecord("verdict", True, 1_000, 500)
    shared = CallRecord("verdict", True, 1_000, 500, cached=True)
    one = records_cost([paid], provider="openai", model="gpt-4o")
    assert one is not None and one > 0
    assert records_cost([paid, shared], provider="openai", model="gpt-4o") == one
    assert records_cost([paid], provider="openai", model="gpt-4o", batch_rates=False) == \
        pytest.approx(2 * one)



async def test_a_failing_judgment_stops_its_parked_siblings_and_keeps_the_count_exact() -> None:
    from legal_judge.batch.audit import AuditBatchRouter
    from legal_judge.errors import AuthError

    collector = Collector(positions={}, unfinished=0)
    collector.start(1)
    router = AuditBatchRouter.__new__(AuditBatchRouter)  # only judgments() is exercised
    router.collector = collector
    lane = _lane()

    async def parks(slot: int) -> Any:
        return await collector.park(lane, CallTag("x", "verdict", 1, position=slot),
                                    _request(f"r{slot}"))

    async def fails() -> Any:
        await _spin()  # the siblings park first
        raise AuthError("bad key", provider="openai")

    with pytest.raises(AuthError):
        await router.judgments([parks(0), parks(1), fails()])
    # The two parked siblings were cancelled and forgotten; the forking flow runs on.
    assert collector.pending == {} and collector.active == 1
    collector.task_done()
    assert collector.active == 0 and collector.is_settled()
