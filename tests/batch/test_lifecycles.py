"""Both batch lifecycles through the real ``openai`` and ``anthropic`` SDKs over httpx.MockTransport."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from legal_judge.batch import run_benchmark_batch
from legal_judge.batch.emulator import EmulatedRequest, ProviderEmulator, default_answer
from legal_judge.batch.records import batch_rows
from legal_judge.benchmark.runner import run_benchmark
from legal_judge.providers.pricing import cost_usd
from legal_judge.store import Store

SPECS = {"openai": "openai:gpt-4o", "anthropic": "anthropic:claude-haiku-4-5"}
ONLINE_ROUTE = {"openai": "POST /v1/chat/completions", "anthropic": "POST /v1/messages"}
CREATE_ROUTE = {"openai": "POST /v1/batches", "anthropic": "POST /v1/messages/batches"}
OTHERS = ("simulated:demo-google", "simulated:demo-mistral")


def _calls(store: Store, run_id: str, judge: str) -> list[dict[str, Any]]:
    rows = store.db.execute("SELECT * FROM judge_calls WHERE run_id = ? AND judge = ? ORDER BY id",
                            (run_id, judge))
    return [dict(r) for r in rows]


async def test_mixed_ensemble_lifecycle_shapes_store_and_prices(items, make_config, sleeps):
    emu = ProviderEmulator(polls_to_end=3)
    config = make_config(SPECS["openai"], SPECS["anthropic"], "simulated:demo-mistral")
    store = Store()
    async with emu.client() as client:
        out = await run_benchmark_batch(items, config, store=store, http_client=client,
                                        sleep=sleeps, poll_interval_s=7.0, online_threshold=0)
    assert out.status == "completed" and out.batches_submitted == 2 and out.batch_requests == 12
    assert sleeps.waits == [7.0, 7.0]  # two polls in progress, the third ends both batches
    assert emu.calls["POST /v1/files"] == 1 and emu.calls["POST /v1/batches"] == 1
    assert emu.calls["POST /v1/messages/batches"] == 1
    assert emu.calls["GET /v1/files/{id}/content"] == 1  # output only: nothing failed
    assert emu.calls["POST /v1/chat/completions"] == emu.calls["POST /v1/messages"] == 0

    # OpenAI: one JSONL line per item, chat completions with the online request body.
    (upload,) = [v for k, v in emu.files.items() if k == "file-1"]
    lines = [json.loads(x) for x in upload.splitlines()]
    assert [x["custom_id"] for x in lines] == [f"j0-i{i}-v1" for i in range(len(items))]
    assert {x["url"] for x in lines} == {"/v1/chat/completions"} and lines[0]["method"] == "POST"
    body = lines[0]["body"]
    assert body["model"] == "gpt-4o" and body["max_completion_tokens"] == 1500
    assert body["response_format"]["type"] == "json_schema"
    assert body["messages"][0]["role"] == "system" and items[0].response in body["messages"][1][
        "content"]
    # Anthropic: forced tool use, system split off, temperature in the params.
    (abatch,) = [b for b in emu.batches.values() if b.id.startswith("msgbatch_")]
    cid, params = abatch.lines[3]
    assert cid == "j1-i3-v1" and params["tool_choice"] == {"type": "tool", "name": "verdict"}
    assert params["temperature"] == 0.0 and params["system"] and params["messages"][0]["role"] == "user"

    rows = batch_rows(store, run_id=out.run_id)
    assert sorted(r["provider"] for r in rows) == ["anthropic", "openai"]
    assert {r["status"] for r in rows} == {"collected"}
    assert all(r["meta"]["requests"] == len(items) for r in rows)
    assert {r["meta"]["provider_status"] for r in rows} == {"completed", "ended"}

    verdicts = store.load_verdicts(out.run_id)
    for spec in SPECS.values():
        calls = _calls(store, out.run_id, spec)
        assert [(c["attempt"], c["cached"], c["error"]) for c in calls] == [(1, 0, None)] * len(items)
        by_item = {c["item_id"]: c for c in calls}  # merged in result order, not item order
        for item in items:
            call, v = by_item[item.id], verdicts[(item.id, spec)]
            assert v["status"] == "ok" and v["extra"]["batch_calls"] == 1
            usage = json.loads(call["usage_json"])
            online = cost_usd(spec.split(":")[1], usage["input_tokens"], usage["output_tokens"],
                              provider=spec.split(":")[0])
            assert online and v["cost_usd"] == pytest.approx(online / 2)  # batch price: half
    run = store.get_run(out.run_id)
    assert run["status"] == "completed" and run["config"]["batch"] is True
    assert run["summary"]["scored"] == len(items) and run["summary"]["batch"]["batches"] == 2
    assert len(out.results) == len(items) and all(r.valid_judges == 3 for r in out.results.values())


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
async def test_out_of_order_results_equal_the_online_path(provider, items, make_config, sleeps,
                                                         tmp_path: Path):
    emu = ProviderEmulator(shuffle_seed=3)
    config = make_config(SPECS[provider], *OTHERS)
    async with emu.client() as client:
        batch = await run_benchmark_batch(items, config, store=Store(), http_client=client,
                                          sleep=sleeps)
        online = await run_benchmark(items, config, store=Store(tmp_path / "online.sqlite3"),
                                     http_client=client, use_cache=False)
    (b,) = emu.batches.values()
    returned = [r["custom_id"] for r in b.results]
    assert returned != [cid for cid, _ in b.lines] and sorted(returned) == sorted(
        cid for cid, _ in b.lines)  # really out of order
    assert emu.calls[ONLINE_ROUTE[provider]] == len(items)  # the online run's calls
    assert batch.status == online.status == "completed"
    for item in items:
        a, o = batch.results[item.id], online.results[item.id]
        assert (a.scores, a.overall, a.hallucination, a.votes) == (o.scores, o.overall,
                                                                   o.hallucination, o.votes)


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
async def test_expired_batch_resubmits_only_what_did_not_run(provider, items, make_config, sleeps):
    emu = ProviderEmulator(expire_after=2)
    config = make_config(SPECS[provider], *OTHERS)
    store = Store()
    async with emu.client() as client:
        out = await run_benchmark_batch(items[:5], config, store=store, http_client=client,
                                        sleep=sleeps, online_threshold=0)
    # 5 sent: 2 ran, 3 expired -> 3 sent: 2 ran, 1 expired -> 1 sent: ran.
    sizes = [len(b.lines) for b in emu.batches.values()]
    assert sizes == [5, 3, 1] and out.batches_submitted == 3
    assert sorted(emu.submitted_ids) == sorted(
        [f"j0-i{i}-v1" for i in range(5)] + ["j0-i2-v1", "j0-i3-v1", "j0-i4-v1", "j0-i4-v1"])
    verdicts = store.load_verdicts(out.run_id)
    assert all(verdicts[(i.id, SPECS[provider])]["status"] == "ok" for i in items[:5])
    status = {r["meta"]["provider_status"] for r in batch_rows(store, run_id=out.run_id)}
    assert status == ({"expired", "completed"} if provider == "openai" else {"ended"})


async def test_requests_still_expired_after_resubmits_become_error_verdicts(items, make_config,
                                                                           sleeps):
    emu = ProviderEmulator(expire_after=2)
    store = Store()
    async with emu.client() as client:
        out = await run_benchmark_batch(items[:5], make_config(SPECS["openai"], *OTHERS),
                                        store=store, http_client=client, sleep=sleeps,
                                        online_threshold=0, max_resubmits=1)
    verdicts = store.load_verdicts(out.run_id)
    statuses = [verdicts[(i.id, "openai:gpt-4o")]["status"] for i in items[:5]]
    assert statuses == ["ok", "ok", "ok", "ok", "error"]
    assert "batch_expired" in verdicts[(items[4].id, "openai:gpt-4o")]["reason"]
    errors = [c for c in _calls(store, out.run_id, "openai:gpt-4o") if c["error"]]
    assert len(errors) == 1 and "j0-i4-v1" in errors[0]["error"]
    assert out.results[items[4].id].valid_judges == 2  # the two online judges still count


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
async def test_partially_failed_batch_retries_the_few_failures_online(provider, items,
                                                                      make_config, sleeps):
    emu = ProviderEmulator(fail_once={"j0-i1-v1", "j0-i4-v1"})
    store = Store()
    spec = SPECS[provider]
    async with emu.client() as client:
        out = await run_benchmark_batch(items, make_config(spec, *OTHERS), store=store,
                                        http_client=client, sleep=sleeps, online_threshold=5)
    assert len(emu.batches) == 1 and out.online_follow_ups == 2
    assert emu.calls[ONLINE_ROUTE[provider]] == 2
    verdicts = store.load_verdicts(out.run_id)
    assert all(verdicts[(i.id, spec)]["status"] == "ok" for i in items)
    # Online follow-ups are priced at the standard rate, batch answers at half.
    assert "batch_calls" not in verdicts[(items[1].id, spec)]["extra"]
    assert verdicts[(items[0].id, spec)]["extra"]["batch_calls"] == 1


def _invalid_first(target: str):  # type: ignore[no-untyped-def]
    def answer(req: EmulatedRequest) -> str:
        if req.custom_id == target:
            return "The answer looks fine to me, 4 out of 5."
        return default_answer(req)
    return answer


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
async def test_invalid_json_goes_round_again_as_the_next_attempt(provider, items, make_config,
                                                                sleeps):
    emu = ProviderEmulator(answer=_invalid_first("j0-i2-v1"))
    store = Store()
    spec = SPECS[provider]
    async with emu.client() as client:
        out = await run_benchmark_batch(items, make_config(spec, *OTHERS), store=store,
                                        http_client=client, sleep=sleeps, online_threshold=0)
    first, second = emu.batches.values()
    assert [cid for cid, _ in second.lines] == ["j0-i2-v2"]  # a follow-up batch, attempt 2
    body = second.lines[0][1]
    convo = body["messages"]
    assert convo[-2]["role"] == "assistant" and "4 out of 5" in convo[-2]["content"]
    assert "not valid JSON" in convo[-1]["content"] or "schema" in convo[-1]["content"]
    if provider == "openai":
        assert body["temperature"] == 0.2  # the retry policy's second temperature
    calls = [c for c in _calls(store, out.run_id, spec) if c["item_id"] == items[2].id]
    assert [c["attempt"] for c in calls] == [1, 2]
    v = store.load_verdicts(out.run_id)[(items[2].id, spec)]
    assert v["status"] == "ok" and v["attempts"] == 2 and v["extra"]["batch_calls"] == 2


async def test_restart_between_submit_and_collect_resubmits_nothing(items, make_config, sleeps,
                                                                    tmp_path: Path):
    emu = ProviderEmulator(polls_to_end=2)
    config = make_config(SPECS["openai"], SPECS["anthropic"], "simulated:demo-mistral")
    path = tmp_path / "laptop.sqlite3"
    async with emu.client() as client:
        first = await run_benchmark_batch(items, config, store=Store(path), http_client=client,
                                          sleep=sleeps, run_id="run-laptop", wait=False)
    assert first.status == "submitted" and first.batches_submitted == 2
    store = Store(path)  # a new process: nothing in memory survives
    assert {r["status"] for r in batch_rows(store, run_id="run-laptop")} == {"submitted"}
    assert not store.load_results("run-laptop")
    async with emu.client() as client:
        second = await run_benchmark_batch([], config, store=store, http_client=client,
                                           sleep=sleeps, run_id="run-laptop", resume=True)
    assert second.status == "completed" and second.batches_submitted == 0
    assert second.batches_collected == 2
    assert emu.calls["POST /v1/batches"] == emu.calls["POST /v1/messages/batches"] == 1
    assert len(emu.submitted_ids) == len(set(emu.submitted_ids)) == 2 * len(items)
    assert len(store.load_results("run-laptop")) == len(items)
    assert {r["status"] for r in batch_rows(store, run_id="run-laptop")} == {"collected"}


async def test_killed_while_polling_then_resumed(items, make_config, tmp_path: Path):
    emu = ProviderEmulator(polls_to_end=3)
    config = make_config(SPECS["anthropic"], *OTHERS)
    path = tmp_path / "s.sqlite3"

    async def dies(seconds: float) -> None:
        raise asyncio.CancelledError  # the process is gone mid-wait

    async with emu.client() as client:
        first = await run_benchmark_batch(items, config, store=Store(path), http_client=client,
                                          sleep=dies, run_id="run-k")
    assert first.status == "interrupted"
    assert Store(path).get_run("run-k")["status"] == "interrupted"

    async def no_wait(seconds: float) -> None:
        return None

    async with emu.client() as client:
        second = await run_benchmark_batch([], config, store=Store(path), http_client=client,
                                           sleep=no_wait, run_id="run-k", resume=True)
    assert second.status == "completed" and len(emu.batches) == 1
    assert all(r.status == "ok" for r in second.results.values()) and len(second.results) == 6
