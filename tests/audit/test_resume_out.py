"""An audit stopped half-way and resumed writes its report where it was started to write it: the
command printed at the start (``legal-judge audit run --resume AUDIT_ID``) names no ``--out``."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from pg_server import open_store

import legal_judge.audit.execute as execute
from legal_judge.audit.execute import run_audit
from legal_judge.run_owner import this_host

from .helpers import invoke

SMALL = ("--judge", "simulated:fair", "--dimensions", "verbosity", "--pairs", "12",
         "--noise-pairs", "2", "--probes", "hedge_only")


class _Killed(Exception):
    """Stands for a kill -9 half-way: no handler of the audit sees it."""


def _dead_pid() -> int:
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid


def test_a_resumed_audit_writes_the_report_file_it_was_started_with(tmp_path: Path) -> None:
    async def killed_half_way(*args: Any, progress: Any = None, **kwargs: Any) -> Any:
        def tick(done: int, total: int) -> None:
            if done == 8:
                raise _Killed

        return await run_audit(*args, progress=tick, **kwargs)

    home, out = tmp_path / "home", tmp_path / "reports" / "rep.json"
    out.parent.mkdir()
    with pytest.MonkeyPatch.context() as patch, pytest.raises(_Killed):
        patch.setattr(execute, "run_audit", killed_half_way)
        invoke(home, "audit", "run", *SMALL, "--out", str(out))
    store = open_store(home)
    (audit,) = store.audits.recent(limit=5)
    store.claim_owner("audit", audit["id"], pid=_dead_pid(), host=this_host())
    store.close()
    assert not out.exists()
    # Before: the resume the audit printed (`legal-judge audit run --resume ID`) finished the
    # audit and wrote no file, so `audit gate rep.json` then said "no such file".
    resumed = invoke(home, "audit", "run", "--resume", audit["id"])
    assert resumed.exit_code == 0, resumed.output
    assert f"wrote {out}" in " ".join(resumed.output.split())
    report = json.loads(out.read_text(encoding="utf-8"))
    assert report["extensions"]["audit_id"] == audit["id"]
    assert report["extensions"]["status"] == "complete"
