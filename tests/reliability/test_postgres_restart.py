"""A PostgreSQL server restarted mid-run: the run exits 3, and a resume completes it with nothing
lost and nothing paid or stored twice (tests/pg_server.py's throwaway server, restarted here)."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from stub_process import stub_process

from legal_judge.dataset import load_dataset, sample_dataset_path
from legal_judge.store import Store


@pytest.fixture
def slow_stub() -> Iterator[str]:
    with stub_process(60) as url:
        yield url


def test_a_server_restart_mid_run_exits_3_and_a_resume_completes_it(
        tmp_path: Path, postgres_server: Any, pg_schema_url: str, slow_stub: str) -> None:
    bench = tmp_path / "bench.jsonl"
    bench.write_text("".join(i.model_dump_json() + "\n"
                             for i in load_dataset(sample_dataset_path())[:24]))
    cfg = tmp_path / "stub.toml"
    cfg.write_text("name = 'stub'\nconcurrency = 4\nrun_checks = false\n" + "".join(
        f'\n[[judges]]\nspec = "openai-compatible:{m}@{slow_stub}"\n'
        for m in ("gpt-4o", "gemini-2.5-pro", "mistral-large-latest")))
    env = {**os.environ, "LEGAL_JUDGE_HOME": str(tmp_path / "home"),
           "LEGAL_JUDGE_STORE": pg_schema_url, "COLUMNS": "80", "NO_COLOR": "1"}
    proc = subprocess.Popen([sys.executable, "-m", "legal_judge", "run", str(bench), "--ensemble",
                             str(cfg), "--run-id", "R", "--quiet"], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    store = Store(pg_schema_url)
    deadline = time.time() + 90
    while time.time() < deadline and (not store.run_exists("R")
                                      or store.call_counts("R")["calls"] < 9):
        time.sleep(0.05)
    store.close()
    postgres_server.stop("immediate")  # the server goes away under the running process
    try:
        out, err = proc.communicate(timeout=120)
    finally:
        postgres_server.start()
    assert proc.returncode == 3, out + err
    text = " ".join((out + err).split())
    assert "cannot be reached" in text and "legal-judge run --resume" in text
    resumed = subprocess.run([sys.executable, "-m", "legal_judge", "run", "--resume", "R",
                              "--quiet"], env=env, capture_output=True, text=True, timeout=300)
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    store = Store(pg_schema_url)
    assert store.get_run("R")["status"] == "completed"
    assert store.result_count("R") == 24 and len(store.load_verdicts("R")) == 72
    stats = httpx.get(slow_stub.removesuffix("/v1") + "/stats").json()
    # Calls whose answers were committed are never repeated; only those in flight (at most the
    # concurrency, 4) or answered but not yet committed when the server went away are sent again.
    assert stats["distinct"] == 72 and stats["requests"] - stats["distinct"] <= 8, stats
