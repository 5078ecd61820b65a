"""Run owners: a run whose process is gone is shown interrupted (issue 20 item 2)."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from datetime import UTC, datetime, timedelta

import pytest
from click.testing import CliRunner

from legal_judge.benchmark.ensemble_config import load_ensemble_config
from legal_judge.benchmark.runner import run_benchmark
from legal_judge.cli import cli
from legal_judge.dataset import load_dataset, sample_dataset_path
from legal_judge.errors import ConfigError
from legal_judge.run_owner import (
    STALE_AFTER_S,
    RunOwner,
    displayed_status,
    hold_run,
    refuse_if_owned,
    resume_command,
    run_owner,
    this_host,
)
from legal_judge.store import Store


def _dead_pid() -> int:
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()  # reaped: the pid no longer exists
    return proc.pid


def _ago(seconds: float) -> str:
    return (datetime.now(UTC) - timedelta(seconds=seconds)).isoformat()


def test_owner_liveness_rules() -> None:
    host = this_host()
    assert RunOwner(os.getpid(), host, _ago(1)).alive()
    assert not RunOwner(_dead_pid(), host, _ago(1)).alive()  # killed on this host
    assert not RunOwner(os.getpid(), host, _ago(STALE_AFTER_S + 5)).alive()  # pid reused
    assert RunOwner(12345, "another-host", _ago(5)).alive()  # cannot see its pids: trust the beat
    assert not RunOwner(12345, "another-host", _ago(STALE_AFTER_S + 5)).alive()
    assert not RunOwner(None, None, None).alive()  # never claimed (a store from before owners)
    assert displayed_status("running", RunOwner(None, None, None)) == "interrupted"
    assert displayed_status("completed", RunOwner(None, None, None)) == "completed"


def test_a_killed_child_not_yet_reaped_is_not_alive() -> None:
    proc = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    try:
        assert RunOwner(proc.pid, this_host(), _ago(1)).alive()
        proc.kill()
        deadline = datetime.now(UTC) + timedelta(seconds=10)
        while RunOwner(proc.pid, this_host(), _ago(1)).alive():  # a zombie until waited for
            assert datetime.now(UTC) < deadline
    finally:
        proc.wait()


def test_hold_run_claims_and_beats() -> None:
    store = Store()
    store.create_run("R", kind="run", config={}, items=[])
    with hold_run(store, "R", interval_s=0.01):
        first = run_owner(store.get_run("R"))
        assert first.pid == os.getpid() and first.host == this_host()
        deadline = datetime.now(UTC) + timedelta(seconds=10)
        while run_owner(store.get_run("R")).heartbeat_at == first.heartbeat_at:
            assert datetime.now(UTC) < deadline
    assert store.owners("run", ["R", "nope"]) == {"R": {
        "status": "running", "pid": os.getpid(), "host": this_host(),
        "heartbeat_at": store.get_run("R")["heartbeat_at"]}}


def test_resume_refused_while_another_live_process_owns_the_run() -> None:
    store = Store()
    store.create_run("R", kind="run", config={"batch": True}, items=[])
    sleeper = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    try:
        store.claim_owner("run", "R", pid=sleeper.pid, host=this_host())
        with pytest.raises(ConfigError) as exc:
            refuse_if_owned(store, "R")
        assert exc.value.code == "run-in-progress" and f"kill {sleeper.pid}" in (exc.value.fix or "")
    finally:
        sleeper.kill()
        sleeper.wait()
    refuse_if_owned(store, "R")  # its owner is gone: resuming is allowed
    assert resume_command(store.get_run("R")) == "legal-judge run --resume R --batch"


def test_a_run_killed_mid_way_is_listed_interrupted_with_its_resume_command() -> None:
    store = Store()
    items = load_dataset(sample_dataset_path())[:2]
    out = asyncio.run(run_benchmark(items, load_ensemble_config("demo"), store=store,
                                    run_id="done"))
    assert out.status == "completed"
    assert store.get_run("done")["owner_pid"] == os.getpid()
    asyncio.run(run_benchmark(items, load_ensemble_config("demo"), store=store, run_id="dead"))
    # As a kill -9 after the first item leaves it: running, one result, its process gone.
    with store.transaction() as db:
        db.execute("DELETE FROM ensemble_results WHERE run_id = 'dead' AND item_id = ?",
                   (items[1].id,))
    store.claim_owner("run", "dead", pid=_dead_pid(), host=this_host())
    listed = CliRunner().invoke(cli, ["runs", "list"])
    assert listed.exit_code == 0, listed.output
    rows = {line.split()[1]: line for line in listed.output.splitlines() if line.startswith("│")}
    assert "interrupted" in rows["dead"] and "completed" in rows["done"]
    assert "legal-judge run --resume dead" in listed.output
    assert "--resume done" not in listed.output
    shown = CliRunner().invoke(cli, ["runs", "show", "dead"])
    assert "interrupted" in shown.output and "legal-judge run --resume dead" in shown.output
    as_json = CliRunner().invoke(cli, ["runs", "show", "dead", "--json"])
    assert '"status": "interrupted"' in as_json.output
    resumed = CliRunner().invoke(cli, ["run", "--resume", "dead", "--quiet"])
    assert resumed.exit_code == 0 and "completed" in resumed.output
    assert store.get_run("dead")["status"] == "completed" and len(store.load_results("dead")) == 2
