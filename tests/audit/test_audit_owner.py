"""Audit owners: an audit whose process is gone is listed interrupted, with its resume command.

Audits share the owner records of runs (``legal_judge.run_owner``, ``m007_audit_owner``).
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys

import pytest
from click.testing import CliRunner, Result

from legal_judge.audit.design import AuditSettings
from legal_judge.audit.execute import run_audit
from legal_judge.audit.resume import audit_source, resume_plan
from legal_judge.audit.target import load_targets
from legal_judge.cli import cli
from legal_judge.dataset import load_dataset, sample_dataset_path
from legal_judge.errors import ConfigError
from legal_judge.run_owner import this_host
from legal_judge.store import Store

SIM = "simulated:demo-openai"
SETTINGS = AuditSettings(dimensions=["verbosity"], pairs=10, noise_pairs=2, probes=[],
                         min_sample=5, min_complete_pairs=5)


class _Killed(Exception):
    """Stands for a kill -9: no handler of the audit sees it, so nothing marks the audit."""


def _dead_pid() -> int:
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()  # reaped: the pid no longer exists
    return proc.pid


def _half_done(store: Store, audit_id: str) -> None:
    def die(done: int, total: int) -> None:
        if done == 10:
            raise _Killed

    async def go() -> None:
        [target] = load_targets(SIM, store=store)
        try:
            await run_audit(target, load_dataset(sample_dataset_path()), SETTINGS, store=store,
                            sync=False, audit_id=audit_id, progress=die,
                            source=audit_source(SIM, batch=False))
        finally:
            await target.aclose()

    with pytest.raises(_Killed):
        asyncio.run(go())


def _listed(*args: str) -> Result:
    result = CliRunner().invoke(cli, ["audit", "list", *args])
    assert result.exit_code == 0, result.output
    return result


def _row(listing: str, audit_id: str) -> str:
    (line,) = [x for x in listing.splitlines() if audit_id in x and x.startswith("│")]
    return line


def test_an_audit_records_its_owner_while_it_runs() -> None:
    store = Store()
    _half_done(store, "aud-own")
    row = store.db.execute("SELECT status, owner_pid, owner_host, heartbeat_at FROM audits "
                           "WHERE id = 'aud-own'").fetchone()
    assert tuple(row[:3]) == ("running", os.getpid(), this_host()) and row[3]
    # Its owner (this process) is alive: listed running, and no second process may resume it.
    listing = _listed().output
    assert "running" in _row(listing, "aud-own") and "--resume" not in listing
    sleeper = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    try:
        store.claim_owner("audit", "aud-own", pid=sleeper.pid, host=this_host())
        with pytest.raises(ConfigError) as exc:
            resume_plan(store, "aud-own")
        assert exc.value.code == "audit-in-progress"
        assert f"kill {sleeper.pid}" in (exc.value.fix or "")
        assert "legal-judge audit run --resume aud-own" in (exc.value.fix or "")
        refused = CliRunner().invoke(cli, ["audit", "run", "--resume", "aud-own"])
        assert refused.exit_code == 2 and "still being executed" in refused.output
    finally:
        sleeper.kill()
        sleeper.wait()


def test_a_killed_audit_is_listed_interrupted_and_its_resume_completes() -> None:
    store = Store()
    _half_done(store, "aud-dead")
    store.claim_owner("audit", "aud-dead", pid=_dead_pid(), host=this_host())
    listing = _listed().output
    assert "interrupted" in _row(listing, "aud-dead"), listing
    assert "legal-judge audit run --resume aud-dead" in listing
    (shown,) = json.loads(_listed("--json").output)
    assert shown["status"] == "interrupted"
    assert shown["resume_command"] == "legal-judge audit run --resume aud-dead"
    resumed = CliRunner().invoke(cli, ["audit", "run", "--resume", "aud-dead"])
    assert resumed.exit_code == 0, resumed.output
    row = store.db.execute("SELECT status, owner_pid FROM audits WHERE id = 'aud-dead'").fetchone()
    assert tuple(row) == ("complete", os.getpid())
    listing = _listed().output
    assert "complete" in _row(listing, "aud-dead") and "--resume" not in listing
