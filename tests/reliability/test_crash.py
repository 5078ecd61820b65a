"""Item 2: SIGKILL at 10 seeded random points, resume, and compare with an uninterrupted run.

Each kill point is (a verdict count to wait for, a further random delay), so kills land while the
process imports and migrates, between calls, inside commits and while items are saved. After every
kill the store must pass ``PRAGMA integrity_check``; at the end the results must equal a clean run,
and the stub's per-digest counts bound the repeated calls: only calls in flight at a kill (at most
the concurrency, 4) can be sent again. Then two processes write to one store at once.

``LJ_CRASH_SEED`` picks other kill points (the seed is printed with the figures).
"""

from __future__ import annotations

import os
import random
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

from .conftest import Stub, bench_items, results_of, two_writers_one_killed, write_jsonl
from .invariants import dump

N_ITEMS = 40
JUDGES = ("gpt-4o", "gemini-2.5-pro", "mistral-large-latest")
CONCURRENCY = 4
KILLS = 10
SEED = int(os.environ.get("LJ_CRASH_SEED", "20260611"))


def _config(path: Path, url: str) -> Path:
    judges = "".join(f'\n[[judges]]\nspec = "openai-compatible:{m}@{url}"\n' for m in JUDGES)
    path.write_text(f"name = 'stub'\nconcurrency = {CONCURRENCY}\nrun_checks = false\n{judges}",
                    encoding="utf-8")
    return path


def _scalar(home: Path, sql: str, *args: str) -> int:
    try:
        db = sqlite3.connect(home / "store.sqlite3", timeout=5)
        try:
            return int(db.execute(sql, args).fetchone()[0])
        finally:
            db.close()
    except sqlite3.Error:
        return -1  # not created yet


def _integrity(home: Path) -> str:
    db = sqlite3.connect(home / "store.sqlite3", timeout=30)
    try:
        return str(db.execute("PRAGMA integrity_check").fetchone()[0])
    finally:
        db.close()


def _cmd(bench: Path, cfg: Path, run_id: str, home: Path) -> list[str]:
    exists = _scalar(home, "SELECT COUNT(*) FROM runs WHERE id = ?", run_id) > 0
    base = [sys.executable, "-m", "legal_judge", "run", "--quiet"]
    if exists:
        return [*base, "--resume", run_id]
    return [*base, str(bench), "--ensemble", str(cfg), "--run-id", run_id]


def _kill_at(cmd: list[str], env: dict[str, str], home: Path, run_id: str, verdicts: int,
             delay_s: float) -> bool:
    """Run ``cmd``; SIGKILL it once ``verdicts`` are stored plus ``delay_s``. True if killed."""
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            text=True)
    deadline = time.monotonic() + 120
    sql = "SELECT COUNT(*) FROM verdicts WHERE run_id = ?"
    while (proc.poll() is None and _scalar(home, sql, run_id) < verdicts
           and time.monotonic() < deadline):
        time.sleep(0.003)
    time.sleep(delay_s)
    if proc.poll() is not None:
        _, err = proc.communicate()
        assert proc.returncode == 0, err[-3000:]  # it finished on its own: cleanly
        return False
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    return True


def _finish(cmd: list[str], env: dict[str, str]) -> None:
    done = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]


def _kill_points(rng: random.Random, total: int) -> list[tuple[int, float]]:
    points = [(0, rng.uniform(0.0, 0.8))]  # during start-up: imports, migrations, run creation
    points += [(v, rng.uniform(0.0, 0.06)) for v in sorted(rng.sample(range(1, total - 8), KILLS - 1))]
    return points


def test_sigkill_at_random_points_then_resume(tmp_path: Path,
                                              start_stub: Callable[..., Stub]) -> None:
    killed_stub, clean_stub = start_stub(latency_ms=40), start_stub(latency_ms=40)
    bench = write_jsonl(tmp_path / "bench.jsonl", bench_items(N_ITEMS))
    home = tmp_path / "killed"
    env = {**os.environ, "LEGAL_JUDGE_HOME": str(home)}
    cfg = _config(tmp_path / "killed.toml", killed_stub.url)
    total = N_ITEMS * len(JUDGES)
    rng = random.Random(SEED)
    log = []
    for planned, delay in _kill_points(rng, total):
        # A point the previous process already passed moves just ahead of the stored progress.
        stored = _scalar(home, "SELECT COUNT(*) FROM verdicts WHERE run_id = 'R1'")
        verdicts = min(total - 1, max(planned, stored + 1 if planned else 0))
        killed = _kill_at(_cmd(bench, cfg, "R1", home), env, home, "R1", verdicts, delay)
        stored = _scalar(home, "SELECT COUNT(*) FROM verdicts WHERE run_id = 'R1'")
        log.append({"wait_for": verdicts, "delay_ms": round(delay * 1000), "killed": killed,
                    "verdicts_stored": stored})
        if (home / "store.sqlite3").exists():
            assert _integrity(home) == "ok"
    _finish(_cmd(bench, cfg, "R1", home), env)
    assert _integrity(home) == "ok"
    kills = sum(e["killed"] for e in log)
    stats = killed_stub.stats()
    # No completed call is repeated: every digest reached the stub at most once per kill it
    # survived in flight, and the repeats are bounded by the calls in flight at each kill.
    assert stats["distinct"] == total
    assert stats["requests"] - total <= kills * CONCURRENCY
    assert stats["max_per_digest"] <= 1 + kills
    env_clean = {**os.environ, "LEGAL_JUDGE_HOME": str(tmp_path / "clean")}
    _finish([sys.executable, "-m", "legal_judge", "run", str(bench), "--ensemble",
             str(_config(tmp_path / "clean.toml", clean_stub.url)), "--run-id", "C", "--quiet"],
            env_clean)
    killed_results = results_of(home / "store.sqlite3", "R1")
    assert len(killed_results) == N_ITEMS
    assert killed_results == results_of(tmp_path / "clean" / "store.sqlite3", "C")
    print(dump({"crash": {"seed": SEED, "kills": kills, "points": log,
                          "repeated_requests": stats["requests"] - total,
                          "max_per_digest": stats["max_per_digest"]}}))


def test_two_processes_write_one_store_at_once(tmp_path: Path,
                                               start_stub: Callable[..., Stub]) -> None:
    stub = start_stub(latency_ms=20)
    bench = write_jsonl(tmp_path / "bench.jsonl", bench_items(N_ITEMS))
    cfg = _config(tmp_path / "stub.toml", stub.url)
    home = tmp_path / "shared"
    env = {**os.environ, "LEGAL_JUDGE_HOME": str(home)}
    home.mkdir()
    subprocess.run([sys.executable, "-c", "from legal_judge.store import Store; Store()"], env=env,
                   check=True)  # both processes then open an existing, migrated store
    cmd = [sys.executable, "-m", "legal_judge", "run", str(bench), "--ensemble", str(cfg), "--quiet"]

    def progressed() -> bool:
        return _scalar(home, "SELECT COUNT(*) FROM verdicts WHERE run_id = 'A'") >= N_ITEMS

    def intact() -> None:
        assert _integrity(home) == "ok"

    two_writers_one_killed(cmd, env, progressed, check=intact)
    db_path = home / "store.sqlite3"
    results = {r: results_of(db_path, r) for r in ("A", "B", "C")}
    assert len(results["A"]) == N_ITEMS
    assert results["A"] == results["B"] == results["C"]
    db = sqlite3.connect(db_path)
    dupes = db.execute("SELECT COUNT(*) FROM (SELECT run_id, item_id, judge, COUNT(*) n FROM verdicts"
                       " GROUP BY run_id, item_id, judge HAVING n > 1)").fetchone()[0]
    assert dupes == 0
    assert {r[0]: r[1] for r in db.execute("SELECT id, status FROM runs")} == {
        "A": "completed", "B": "completed", "C": "completed"}
