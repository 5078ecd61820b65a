"""``audit run --resume``: a batch audit survives ``--no-wait``, a killed process and a closed laptop."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from legal_judge.audit.execute import run_audit
from legal_judge.audit.log import AuditLog
from legal_judge.audit.resume import audit_source, resume_plan, resume_target
from legal_judge.audit.target import load_targets
from legal_judge.batch.audit import run_audit_batch
from legal_judge.batch.emulator import ProviderEmulator
from legal_judge.batch.records import batch_rows
from legal_judge.dataset import load_dataset, sample_dataset_path
from legal_judge.errors import ConfigError, NotFoundError, ProviderUnavailable
from legal_judge.store import Store

from .test_audit_batch import CREATE_ROUTE, ONLINE_ROUTE, SETTINGS, SPECS, _target, answer

SIM = "simulated:demo-openai"


async def _no_wait(seconds: float) -> None:
    return None


def _kinds(store: Store, audit_id: str) -> list[str]:
    return [e.kind for e in AuditLog(store).entries(audit_id)
            if e.kind.startswith("audit_")]


async def _online_report(spec: str, tmp_path: Path) -> dict[str, Any]:
    store = Store(tmp_path / "online.sqlite3")
    async with ProviderEmulator(answer=answer).client() as client:
        target = _target(spec, store, client)
        out = await run_audit(target, load_dataset(sample_dataset_path()), SETTINGS, store=store,
                              sync=False)
        await target.aclose()
    return out.report


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
async def test_no_wait_then_resume_in_a_new_process_collects_the_stored_batches(
        tmp_path: Path, provider: str) -> None:
    spec = SPECS[provider]
    items = load_dataset(sample_dataset_path())
    emu = ProviderEmulator(answer=answer, polls_to_end=3)
    path = tmp_path / "laptop.sqlite3"
    async with emu.client() as client:
        target = _target(spec, Store(path), client)
        first = await run_audit_batch(target, items, SETTINGS, store=target.judge.store,
                                      sync=False, sleep=_no_wait, wait=False, audit_id="aud-1",
                                      source=audit_source(spec, batch=True))
        await target.aclose()
    assert first.status == "submitted" and first.report == {}
    created = emu.calls[CREATE_ROUTE[provider]]
    assert created == 1  # every judgment of every pair in one round

    store = Store(path)  # the laptop was closed: nothing in memory survives
    assert store.db.execute("SELECT status FROM audits WHERE id = 'aud-1'").fetchone()[0] \
        == "submitted"
    assert {r["status"] for r in batch_rows(store, run_id="aud-1")} == {"submitted"}
    plan = resume_plan(store, "aud-1")
    assert plan.batch and plan.settings == SETTINGS and [i.id for i in plan.items] == \
        [i.id for i in items]
    async with emu.client() as client:
        target = _target(spec, store, client)
        assert target.judge_id == plan.judge_id
        second = await run_audit_batch(target, plan.items, plan.settings, store=store, sync=False,
                                       sleep=_no_wait, audit_id="aud-1", resume=True,
                                       source=plan.source)
        await target.aclose()

    assert second.status == "complete"
    assert emu.calls[CREATE_ROUTE[provider]] == created  # nothing resubmitted
    assert emu.calls[ONLINE_ROUTE[provider]] == 0
    info = second.report["extensions"]["batch"]
    assert info["batches_submitted"] == 0 and info["batches_collected"] == 1
    assert {r["status"] for r in batch_rows(store, run_id="aud-1")} == {"collected"}
    online = await _online_report(spec, tmp_path)
    assert second.report["dimension_results"] == online["dimension_results"]
    assert _kinds(store, "aud-1") == ["audit_started", "audit_submitted", "audit_resumed",
                                      "audit_finished"]
    assert AuditLog(store).verify().ok
    assert store.db.execute("SELECT status FROM audits WHERE id = 'aud-1'").fetchone()[0] \
        == "complete"


async def test_killed_while_polling_then_resumed(tmp_path: Path) -> None:
    spec = SPECS["openai"]
    items = load_dataset(sample_dataset_path())
    emu = ProviderEmulator(answer=answer, polls_to_end=4)
    path = tmp_path / "s.sqlite3"

    async def dies(seconds: float) -> None:
        raise asyncio.CancelledError  # the process is gone mid-wait

    async with emu.client() as client:
        target = _target(spec, Store(path), client)
        with pytest.raises(asyncio.CancelledError):
            await run_audit_batch(target, items, SETTINGS, store=target.judge.store, sync=False,
                                  sleep=dies, audit_id="aud-k", source=audit_source(spec,
                                                                                    batch=True))
        await target.aclose()
    store = Store(path)
    assert store.db.execute("SELECT status FROM audits WHERE id = 'aud-k'").fetchone()[0] \
        == "interrupted"
    plan = resume_plan(store, "aud-k")
    async with emu.client() as client:
        target = _target(spec, store, client)
        out = await run_audit_batch(target, plan.items, plan.settings, store=store, sync=False,
                                    sleep=_no_wait, audit_id="aud-k", resume=True,
                                    source=plan.source)
        await target.aclose()
    assert out.status == "complete" and emu.calls[CREATE_ROUTE["openai"]] == 1
    assert out.report["dimension_results"] == (await _online_report(spec, tmp_path))[
        "dimension_results"]
    assert _kinds(store, "aud-k") == ["audit_started", "audit_interrupted", "audit_resumed",
                                      "audit_finished"]


async def test_a_changed_design_or_judge_is_refused(tmp_path: Path) -> None:
    store = Store(tmp_path / "s.sqlite3")
    items = load_dataset(sample_dataset_path())
    settings = SETTINGS.model_copy(update={"dimensions": ["verbosity"]})

    def stop(done: int, total: int) -> None:
        if done == 5:
            raise ProviderUnavailable("the provider went down", provider="simulated")

    [target] = load_targets(SIM, store=store)
    with pytest.raises(ProviderUnavailable):
        await run_audit(target, items, settings, store=store, sync=False, audit_id="aud-c",
                        progress=stop, source=audit_source(SIM, batch=False))
    plan = resume_plan(store, "aud-c")
    assert plan.status == "failed" and not plan.batch

    # Another seed rebuilds other pairs: refused before any judge call or log entry.
    before = len(AuditLog(store).entries("aud-c"))
    with pytest.raises(ConfigError) as exc:
        await run_audit(await resume_target(plan, store), plan.items,
                        settings.model_copy(update={"seed": 8}), store=store, sync=False,
                        audit_id="aud-c", resume=True)
    assert exc.value.code == "audit-resume-design"
    assert len(AuditLog(store).entries("aud-c")) == before

    # The spec now builds another judge (here: the stored judge_id no longer matches).
    store.db.execute("UPDATE audits SET judge_id = 'other' WHERE id = 'aud-c'")
    with pytest.raises(ConfigError) as exc:
        await resume_target(resume_plan(store, "aud-c"), store)
    assert exc.value.code == "audit-resume-judge"

    with pytest.raises(NotFoundError):
        resume_plan(store, "no-such-audit")


def _cli(home: Path, *args: str) -> Any:
    from legal_judge.cli import cli

    return CliRunner().invoke(cli, list(args), env={"LEGAL_JUDGE_HOME": str(home)})


def test_cli_resume_finishes_an_audit_and_pays_only_for_what_was_missing(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    home = tmp_path / "home"
    monkeypatch.setenv("LEGAL_JUDGE_HOME", str(home))
    store = Store()
    settings = SETTINGS.model_copy(update={"dimensions": ["verbosity", "position"]})

    def stop(done: int, total: int) -> None:
        if done == 20:
            raise ProviderUnavailable("the provider went down", provider="simulated")

    async def first() -> None:
        [target] = load_targets(SIM, store=store)
        try:
            await run_audit(target, load_dataset(sample_dataset_path()), settings, store=store,
                            sync=False, audit_id="aud-cli", progress=stop,
                            source=audit_source(SIM, batch=False))
        finally:
            await target.aclose()

    with pytest.raises(ProviderUnavailable):
        asyncio.run(first())
    made_before = store.db.execute("SELECT COUNT(*) FROM judge_calls WHERE run_id = 'aud-cli' "
                                   "AND cached = 0").fetchone()[0]
    assert made_before >= 20

    refused = _cli(home, "audit", "run", "--resume", "aud-cli", "--judge", SIM, "--pairs", "5")
    assert refused.exit_code == 2
    assert "--judge, --pairs cannot change it" in " ".join(refused.output.split())

    out = tmp_path / "report.json"
    result = _cli(home, "audit", "run", "--resume", "aud-cli", "--out", str(out))
    assert result.exit_code == 0, result.output
    report = json.loads(out.read_text(encoding="utf-8"))
    assert report["extensions"]["audit_id"] == "aud-cli"
    assert {d["dimension"] for d in report["dimension_results"]} == {"verbosity", "position"}

    # The resumed run paid only for judgments not made before the outage.
    calls = store.db.execute("SELECT cached, COUNT(*) FROM judge_calls WHERE run_id = 'aud-cli' "
                             "GROUP BY cached").fetchall()
    by = {bool(c): n for c, n in calls}
    fresh = Store(tmp_path / "fresh.sqlite3")

    async def whole() -> int:
        [target] = load_targets(SIM, store=fresh)
        try:
            await run_audit(target, load_dataset(sample_dataset_path()), settings, store=fresh,
                            sync=False, audit_id="aud-whole")
        finally:
            await target.aclose()
        row = fresh.db.execute("SELECT COUNT(*) FROM judge_calls WHERE run_id = 'aud-whole' "
                               "AND cached = 0").fetchone()
        return int(row[0])

    assert by[False] == asyncio.run(whole())  # outage + resume = one uninterrupted audit
    fresh_report = fresh.db.execute("SELECT report_json FROM audits WHERE id = 'aud-whole'")
    fr = json.loads(fresh_report.fetchone()[0])["dimension_results"]
    assert fr == \
        report["dimension_results"]

    again = _cli(home, "audit", "run", "--resume", "aud-cli")
    assert again.exit_code == 2 and "nothing to resume" in again.output


def test_no_wait_needs_batch(tmp_path: Path) -> None:
    home = tmp_path / "home"
    audit = _cli(home, "audit", "run", "--judge", SIM, "--no-wait")
    assert audit.exit_code == 2 and "--no-wait needs --batch" in audit.output
    run = _cli(home, "run", str(sample_dataset_path()), "--no-wait")
    assert run.exit_code == 2 and "--no-wait needs --batch" in run.output


def test_cli_batch_audit_no_wait_then_resume(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import legal_judge.providers.registry as registry

    emu = ProviderEmulator(answer=answer, polls_to_end=3)
    real = registry.get_provider

    def through_emulator(spec: str, **kwargs: Any) -> Any:
        return real(spec, **{**kwargs, "http_client": emu.client()})

    monkeypatch.setattr(registry, "get_provider", through_emulator)
    home = tmp_path / "home"
    monkeypatch.setenv("LEGAL_JUDGE_HOME", str(home))
    args = ["--dimensions", "verbosity,position", "--pairs", "12", "--noise-pairs", "3",
            "--min-complete-pairs", "5", "--seed", "7"]
    first = _cli(home, "audit", "run", "--judge", SPECS["openai"], "--batch", "--no-wait", *args)
    assert first.exit_code == 0, first.output
    [audit_id] = [r[0] for r in Store().db.execute("SELECT id FROM audits")]
    flat = " ".join(first.output.split())
    assert "batches submitted and still running" in flat
    assert f"legal-judge audit run --resume {audit_id}" in flat
    assert emu.calls[CREATE_ROUTE["openai"]] == 1

    status = _cli(home, "batches", "status", audit_id)
    assert status.exit_code == 0
    assert f"legal-judge audit run --resume {audit_id}" in " ".join(status.output.split())

    out = tmp_path / "report.json"
    done = _cli(home, "audit", "run", "--resume", audit_id, "--out", str(out))
    assert done.exit_code == 0, done.output
    report = json.loads(out.read_text(encoding="utf-8"))
    assert report["extensions"]["batch"]["batches_submitted"] == 0
    assert report["extensions"]["batch"]["batches_collected"] == 1
    assert emu.calls[CREATE_ROUTE["openai"]] == 1 and emu.calls[ONLINE_ROUTE["openai"]] == 0
    assert {r["status"] for r in batch_rows(Store(), run_id=audit_id)} == {"collected"}


async def test_a_cancelled_online_audit_is_interrupted(tmp_path: Path) -> None:
    store = Store(tmp_path / "s.sqlite3")
    [target] = load_targets(SIM, store=store)
    settings = SETTINGS.model_copy(update={"dimensions": ["verbosity"], "concurrency": 2})
    task: asyncio.Task[Any] | None = None

    def ctrl_c(done: int, total: int) -> None:
        if done == 6 and task is not None:
            task.cancel()  # as asyncio.run does on Ctrl-C

    task = asyncio.create_task(run_audit(target, load_dataset(sample_dataset_path()), settings,
                                         store=store, sync=False, audit_id="aud-x",
                                         progress=ctrl_c, source=audit_source(SIM, batch=False)))
    with pytest.raises(asyncio.CancelledError):
        await task
    assert resume_plan(store, "aud-x").status == "interrupted"
    assert _kinds(store, "aud-x") == ["audit_started", "audit_interrupted"]
    await target.aclose()


async def test_a_judgment_cancelled_before_it_starts_is_closed_not_left_unawaited() -> None:
    import inspect

    from legal_judge.audit.pairs import PairRunner as _Runner

    runner = _Runner.__new__(_Runner)  # only _guard is exercised
    runner.sem = asyncio.Semaphore(1)
    await runner.sem.acquire()  # every slot taken: the judgment waits

    async def judgment() -> int:
        return 1

    coro = judgment()
    waiting = asyncio.create_task(runner._guard(coro))
    await asyncio.sleep(0)
    waiting.cancel()
    with pytest.raises(asyncio.CancelledError):
        await waiting
    assert inspect.getcoroutinestate(coro) == "CORO_CLOSED"  # no "never awaited" warning


async def test_a_resumed_no_cache_audit_does_not_read_the_cache(tmp_path: Path) -> None:
    """Issue 33: `--resume` keeps the cache setting the audit was started with (as `run`)."""
    store = Store(tmp_path / "s.sqlite3")
    items = load_dataset(sample_dataset_path())
    settings = SETTINGS.model_copy(update={"dimensions": ["verbosity"]})

    def stop(done: int, total: int) -> None:
        if done == 5:
            raise ProviderUnavailable("the provider went down", provider="simulated")

    [target] = load_targets(SIM, store=store, use_cache=False)
    with pytest.raises(ProviderUnavailable):
        await run_audit(target, items, settings, store=store, sync=False, audit_id="aud-n",
                        progress=stop, source=audit_source(SIM, batch=False, use_cache=False))
    resumed = await resume_target(resume_plan(store, "aud-n"), store)
    try:
        assert resumed.judge.use_cache is False
    finally:
        await resumed.aclose()
