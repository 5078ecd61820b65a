"""``run --batch`` starts like an online run: a reused run id is refused before anything is sent."""

from __future__ import annotations

import asyncio

import pytest

from legal_judge.batch import run_benchmark_batch
from legal_judge.batch.emulator import ProviderEmulator
from legal_judge.benchmark.runner import plan_run, run_benchmark
from legal_judge.errors import ConfigError
from legal_judge.store import Store

SPECS = ("openai:gpt-4o", "simulated:demo-google", "simulated:demo-mistral")


async def test_batch_run_refuses_a_reused_run_id_like_an_online_run(items, make_config, sleeps):
    config = make_config(*SPECS)
    store = Store()
    emu = ProviderEmulator(polls_to_end=1)
    async with emu.client() as client:
        first = await run_benchmark_batch(items, config, store=store, run_id="run-dup",
                                          http_client=client, sleep=sleeps, online_threshold=0)
        assert first.status == "completed" and first.batches_submitted == 1
        stored = store.get_run("run-dup")
        sent = dict(emu.calls)
        with pytest.raises(ConfigError) as batch_refusal:
            await run_benchmark_batch(items[:2], config, store=store, run_id="run-dup",
                                      http_client=client, sleep=sleeps, online_threshold=0)
        with pytest.raises(ConfigError) as online_refusal:
            await run_benchmark(items[:2], config, store=store, run_id="run-dup",
                                http_client=client)
    # Refused before the run was touched and before any request: the stored run is intact.
    assert dict(emu.calls) == sent
    again = store.get_run("run-dup")
    assert (again["status"], again["summary"], again["finished_at"]) == (
        stored["status"], stored["summary"], stored["finished_at"])
    assert len(store.load_items("run-dup")) == len(items)
    # The same refusal as online; the fix resumes the stored run as the batch run it is.
    b, o = batch_refusal.value, online_refusal.value
    assert b.code == o.code == "run-id-exists" and b.message == o.message
    assert b.message == f"a run 'run-dup' already exists in {store.path}"
    assert b.fix == o.fix == ("finish it with `legal-judge run --resume run-dup --batch` or pick "
                              "another --run-id")


async def test_batch_run_refuses_an_online_runs_id(items, make_config, sleeps):
    config = make_config(*SPECS[1:])
    store = Store()
    done = await run_benchmark(items[:2], config, store=store, run_id="run-online")
    assert done.status == "completed"
    with pytest.raises(ConfigError) as refusal:
        await run_benchmark_batch(items[:2], config, store=store, run_id="run-online",
                                  sleep=sleeps)
    assert refusal.value.code == "run-id-exists"
    assert "`legal-judge run --resume run-online` or pick another --run-id" in refusal.value.fix
    assert store.get_run("run-online")["config"].get("batch") is None


async def test_batch_run_refuses_a_same_family_judge_before_anything_is_sent(items, make_config,
                                                                            sleeps):
    """The judges' family checks are made as the run stores its items: a refusal leaves no run
    and no batch submitted, as before they moved there from the planning."""
    config = make_config("openai:gpt-4o", quorum=1)
    same = [i.model_copy(update={"system_under_test": "gpt-4o-mini"}) for i in items]
    store = Store()
    emu = ProviderEmulator(polls_to_end=1)
    async with emu.client() as client:
        with pytest.raises(ConfigError) as refusal:
            await run_benchmark_batch(same, config, store=store, run_id="fam", http_client=client,
                                      sleep=sleeps, online_threshold=0)
    assert refusal.value.code == "ensemble-same-family-single"
    assert dict(emu.calls) == {} and store.list_runs() == []


async def test_a_batch_run_takes_its_unbounded_calls_at_planning_not_from_outside(items, make_config,
                                                                                   sleeps):
    """The bound on calls in flight is the run's own, set when it is planned (``bound_calls``):
    online it is the ensemble's concurrency; a batch run's parked calls hold no slot, so a
    concurrency of 1 still sends every item in one batch (bounded, the second call would wait
    for a slot the first holds until the round it waits for, which never starts)."""
    config = make_config("openai:gpt-4o", "simulated:demo-google", concurrency=1)
    store = Store()
    online, batch = (plan_run(items[:3], config, store=store, bound_calls=bound)
                     for bound in (True, False))
    for _ in range(3 * 2):  # every (item, judge) task of the batch run holds a call at once
        await batch.job.calls.acquire()
    await online.job.calls.acquire()
    assert (online.job.calls.locked(), batch.job.calls.locked()) == (True, False)
    emu = ProviderEmulator(polls_to_end=1)
    async with emu.client() as client:
        outcome = await asyncio.wait_for(run_benchmark_batch(
            items[:3], config, store=store, run_id="narrow", http_client=client, sleep=sleeps,
            online_threshold=0), timeout=60)
    assert (outcome.status, outcome.batches_submitted, outcome.batch_requests) == ("completed", 1, 3)
    assert store.get_run("narrow")["config"]["ensemble"]["concurrency"] == 1
