"""Shared helpers of the reliability suite: the fault-injecting HTTP stub, benchmark items, dumps.

The Langfuse stand-in lives in ``tests/sync`` (no package); it is imported by plain name.
"""

from __future__ import annotations

import json
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest

from legal_judge.dataset import load_dataset, sample_dataset_path
from legal_judge.models import BenchmarkItem

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "sync"))

FAULTS = {"rate_429": 0.3, "server_5xx": 0.1, "timeout": 0.05, "invalid_json": 0.1, "truncated": 0.02}
"""The issue's fault mix, per attempt."""


def bench_items(n: int) -> list[BenchmarkItem]:
    """``n`` distinct items cycled from the bundled sample (distinct prompts: no cache sharing)."""
    base = load_dataset(sample_dataset_path())
    out = []
    for k in range(n):
        b = base[k % len(base)]
        out.append(b.model_copy(update={"id": f"{b.id}-{k}", "prompt": f"{b.prompt} (case {k})"}))
    return out


def write_jsonl(path: Path, items: list[BenchmarkItem]) -> Path:
    """Write items as a JSONL dataset."""
    path.write_text("".join(i.model_dump_json() + "\n" for i in items), encoding="utf-8")
    return path


@dataclass
class Stub:
    """A running ``openai_stub`` subprocess."""

    url: str
    proc: subprocess.Popen[str]

    def stats(self) -> dict[str, Any]:
        """The stub's ``/stats``."""
        return dict(httpx.get(self.url.removesuffix("/v1") + "/stats", timeout=10).json())


@pytest.fixture
def start_stub() -> Iterator[Callable[..., Stub]]:
    """Start stubs with extra flags (``start_stub("--rate-429", "0.3")``); all stopped at teardown."""
    procs: list[subprocess.Popen[str]] = []

    def start(*flags: str, latency_ms: float = 5) -> Stub:
        proc = subprocess.Popen([sys.executable, "-m", "legal_judge.devtools.openai_stub", "--port", "0",
                                 "--latency-ms", str(latency_ms), *flags],
                                stdout=subprocess.PIPE, text=True)
        procs.append(proc)
        assert proc.stdout is not None
        port = proc.stdout.readline().split()[1]
        return Stub(f"http://127.0.0.1:{port}/v1", proc)

    yield start
    for p in procs:
        p.terminate()
        p.wait(10)


def dump_store(path: Path) -> dict[str, list[tuple[Any, ...]]]:
    """Every row of every table of a store (an absent store dumps as empty)."""
    if not path.exists():
        return {}
    db = sqlite3.connect(path)
    try:
        tables = [r[0] for r in db.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")]
        return {t: sorted(db.execute(f'SELECT * FROM "{t}"').fetchall(), key=repr)  # noqa: S608
                for t in tables if t != "sqlite_sequence"}
    finally:
        db.close()


def results_of(path: Path, run_id: str) -> dict[str, tuple[str, str | None, str]]:
    """``item_id -> (status, overall, scores JSON)`` of a run, read straight from SQLite."""
    db = sqlite3.connect(path)
    try:
        rows = db.execute("SELECT item_id, result_json FROM ensemble_results WHERE run_id = ?",
                          (run_id,)).fetchall()
    finally:
        db.close()
    out = {}
    for item_id, js in rows:
        r = json.loads(js)
        out[item_id] = (r["status"], r.get("overall"), json.dumps(r["scores"], sort_keys=True))
    return out


def two_writers_one_killed(cmd: list[str], env: dict[str, str], progressed: Callable[[], bool],
                           *, check: Callable[[], None] = lambda: None,
                           require_alive: bool = False) -> None:
    """Runs ``A`` and ``B`` of ``cmd`` write one store at once; ``A`` is SIGKILLed once
    ``progressed()`` (``require_alive``: it must still be running then) while ``B`` keeps
    writing; then ``A`` is resumed while a third run ``C`` writes. Every survivor must exit 0;
    ``check`` runs after ``B`` and again at the end (the store's own integrity, where it has one).
    """
    def start(*args: str) -> subprocess.Popen[str]:
        return subprocess.Popen([*args], env=env, stdout=subprocess.DEVNULL,
                                stderr=subprocess.PIPE, text=True)

    a, b = start(*cmd, "--run-id", "A"), start(*cmd, "--run-id", "B")
    deadline = time.monotonic() + 120
    while a.poll() is None and time.monotonic() < deadline and not progressed():
        time.sleep(0.005)
    if require_alive:
        assert a.poll() is None, "run A ended before it could be killed"
    a.send_signal(signal.SIGKILL)  # A dies mid-run while B keeps writing
    a.wait()
    _, err_b = b.communicate(timeout=300)
    assert b.returncode == 0, err_b[-3000:]
    check()
    resumed = start(sys.executable, "-m", "legal_judge", "run", "--resume", "A", "--quiet")
    c = start(*cmd, "--run-id", "C")
    for p in (resumed, c):  # a resume and a third run, again at the same time
        _, err = p.communicate(timeout=300)
        assert p.returncode == 0, err[-3000:]
    check()
