"""Sharded runs: N processes judge one run id in deterministic parts; the result is one run.

The concurrent tests write one PostgreSQL store (tests/pg_server.py: skipped locally without a
server, required in CI); ``runs merge`` is the SQLite path, one store per runner.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from pg_server import open_store
from stub_process import stub_process

from legal_judge.benchmark.shards import Shard, shard_of
from legal_judge.dataset import load_dataset, sample_dataset_path
from legal_judge.errors import ConfigError
from legal_judge.store import Store

SAMPLE = str(sample_dataset_path())


def _cli(env: dict[str, str], *args: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "legal_judge", *args], env=env,
                          capture_output=True, text=True, timeout=timeout)


def _env(home: Path, store: str | None = None) -> dict[str, str]:
    env = {**os.environ, "LEGAL_JUDGE_HOME": str(home), "COLUMNS": "80", "NO_COLOR": "1"}
    if store:
        env["LEGAL_JUDGE_STORE"] = store
    return env


def _verdicts(store: Store, run_id: str) -> dict[str, Any]:
    """Every verdict (status and scores) and every item's outcome, by item and judge."""
    verdicts = {f"{item}/{judge}": (v.get("status"), v.get("scores"))
                for item, judge, v in store.iter_verdicts(run_id)}
    results = {item: (r.get("overall"), r.get("scores"))
               for item, r in store.load_results(run_id).items()}
    return {"verdicts": verdicts, "results": results}


def test_the_shard_of_an_item_is_a_fixed_hash_of_its_id() -> None:
    # Reference values: every machine and every version must put an item in the same shard.
    assert [shard_of(i, 4) for i in ("us-fed-001", "eu-002", "fr-006", "lb-001")] == [3, 2, 3, 1]
    ids = [item.id for item in load_dataset(sample_dataset_path())]
    parts = [[i for i in ids if shard_of(i, 4) == k] for k in range(1, 5)]
    assert sorted(sum(parts, [])) == sorted(ids) and all(parts)  # each item once, no shard empty
    with pytest.raises(ConfigError, match="K/N"):
        Shard.parse("5/4")


def test_four_concurrent_shards_on_postgres_equal_a_single_process_run(
        tmp_path: Path, pg_schema_url: str, postgres_url: str) -> None:
    from pg_server import new_schema_url

    shards = [subprocess.Popen(
        [sys.executable, "-m", "legal_judge", "run", SAMPLE, "--ensemble", "demo", "--run-id", "R",
         "--shard", f"{k}/4", "--quiet"], env=_env(tmp_path / f"runner{k}", pg_schema_url),
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for k in range(1, 5)]
    outputs = [p.communicate(timeout=300) for p in shards]
    assert [p.returncode for p in shards] == [0, 0, 0, 0], outputs
    # Exactly one process (the last to complete) printed the run's summary and gate.
    assert sum("run gate:" in out for out, _ in outputs) == 1, outputs
    single = new_schema_url(postgres_url)
    done = _cli(_env(tmp_path / "single", single), "run", SAMPLE, "--ensemble", "demo",
                "--run-id", "S", "--quiet")
    assert done.returncode == 0, done.stdout + done.stderr
    sharded, alone = Store(pg_schema_url), Store(single)
    assert sharded.get_run("R")["status"] == "completed"
    assert sharded.load_items("R") == alone.load_items("S")  # dataset order kept
    assert _verdicts(sharded, "R") == _verdicts(alone, "S")
    assert len(_verdicts(sharded, "R")["verdicts"]) == 3 * 57
    shown = _cli(_env(tmp_path / "runner1", pg_schema_url), "runs", "show", "R")
    assert shown.returncode == 0 and "shards of R: 4/4 done" in shown.stdout, shown.stdout
    # One row per run id (each shard was listed as a run of its own).
    listed = _cli(_env(tmp_path / "runner1", pg_schema_url), "runs", "list", "--json")
    assert [(r["id"], r["status"], r["items"], r["shards"]["done"])
            for r in json.loads(listed.stdout)] == [("R", "completed", 57, [1, 2, 3, 4])]


def _subset(path: Path, n: int) -> str:
    """The first ``n`` items of the bundled sample as a dataset file (a quick run)."""
    path.write_text("".join(i.model_dump_json() + "\n"
                            for i in load_dataset(sample_dataset_path())[:n]))
    return str(path)


def test_a_shard_with_another_n_or_dataset_is_refused_naming_the_difference(
        tmp_path: Path) -> None:
    env = _env(tmp_path / "home")
    data = _subset(tmp_path / "d24.jsonl", 24)
    first = _cli(env, "run", data, "--ensemble", "demo", "--run-id", "R", "--shard", "1/4",
                 "--quiet")
    assert first.returncode == 0, first.stdout + first.stderr
    assert "shards of R: 1/4 done; pending: 2 (not started)" in " ".join(first.stdout.split())
    other_n = _cli(env, "run", data, "--ensemble", "demo", "--run-id", "R", "--shard", "2/3",
                   "--quiet")
    assert other_n.returncode == 2
    assert "N (the number of shards): stored 4, given 3" in " ".join(other_n.stderr.split())
    smaller = _subset(tmp_path / "d20.jsonl", 20)
    other_data = _cli(env, "run", smaller, "--ensemble", "demo", "--run-id", "R", "--shard",
                      "2/4", "--quiet")
    assert other_data.returncode == 2
    assert "in its dataset" in " ".join(other_data.stderr.split())
    pending = _cli(env, "runs", "finish", "R")
    assert pending.returncode == 2 and "pending: 2" in " ".join(pending.stderr.split())
    store = open_store(tmp_path / "home")
    assert [r["id"] for r in store.list_runs()] == ["R~shard-1-of-4"]  # nothing else stored


@pytest.mark.sqlite_only("one SQLite store per runner, by design")
def test_runs_merge_brings_sqlite_shard_stores_into_one_run(tmp_path: Path) -> None:
    data = _subset(tmp_path / "d24.jsonl", 24)
    for k in (1, 2):
        done = _cli(_env(tmp_path / f"runner{k}"), "run", data, "--ensemble", "demo",
                    "--run-id", "R", "--shard", f"{k}/2", "--quiet")
        assert done.returncode == 0, done.stdout + done.stderr
    files = [str(tmp_path / f"runner{k}" / "store.sqlite3") for k in (1, 2)]
    env = _env(tmp_path / "lead")
    overlap = _cli(env, "runs", "merge", "R", files[0], files[0])
    assert overlap.returncode == 2 and "is in both" in overlap.stderr
    merged = _cli(env, "runs", "merge", "R", *files)
    assert merged.returncode == 0, merged.stdout + merged.stderr
    assert "merged 2 shard run(s)" in merged.stdout
    again = _cli(env, "runs", "merge", "R", *files)  # a rerun copies nothing twice
    assert again.returncode == 0, again.stdout + again.stderr
    lead = Store(tmp_path / "lead" / "store.sqlite3")
    single = _cli(_env(tmp_path / "single"), "run", data, "--ensemble", "demo", "--run-id",
                  "S", "--quiet")
    assert single.returncode == 0
    assert _verdicts(lead, "R") == _verdicts(Store(tmp_path / "single" / "store.sqlite3"), "S")
    assert lead.call_counts("R")["calls"] == 3 * 24


#: Judge a never answers valid JSON and b mostly fails too: 4 of the first 12 sample items are
#: INCONCLUSIVE (fewer valid verdicts than the quorum), over the [run] gate's default 10%.
FLAKY = ('name = "flaky"\nquorum = 2\n'
         '[[judges]]\nname = "a"\nspec = "simulated:demo-openai?invalid_json=1"\n'
         '[[judges]]\nname = "b"\nspec = "simulated:demo-google?invalid_json=0.8"\n'
         '[[judges]]\nname = "c"\nspec = "simulated:demo-mistral"\n')
GATE_FAILED = ("run gate: FAILED: inconclusive share 33.3% (4 of 12 items) > policy limit 10.0% "
               "(run.max_inconclusive_share)")


@pytest.mark.sqlite_only("one SQLite store per runner, by design")
def test_runs_finish_and_merge_apply_the_run_gate_as_run_does(tmp_path: Path) -> None:
    # Defect: `runs merge` and `runs finish` completed a run whose INCONCLUSIVE share failed the
    # [run] gate with exit 0 and no gate line, while `run` (and the last `run --shard`) exit 1.
    data = _subset(tmp_path / "d12.jsonl", 12)
    flaky = tmp_path / "flaky.toml"
    flaky.write_text(FLAKY, encoding="utf-8")
    whole = _cli(_env(tmp_path / "whole"), "run", data, "--ensemble", str(flaky), "--quiet")
    assert whole.returncode == 1 and GATE_FAILED in " ".join(whole.stdout.split())
    runner = [_env(tmp_path / f"runner{k}") | {"LEGAL_JUDGE_STORE": ""} for k in (1, 2)]
    for k, env in enumerate(runner, start=1):
        done = _cli(env, "run", data, "--ensemble", str(flaky), "--run-id", "R", "--shard",
                    f"{k}/2", "--quiet")
        assert done.returncode == 0, done.stdout + done.stderr
    files = [str(tmp_path / f"runner{k}" / "store.sqlite3") for k in (1, 2)]
    lead = _env(tmp_path / "lead") | {"LEGAL_JUDGE_STORE": ""}
    merged = _cli(lead, "runs", "merge", "R", *files)
    assert merged.returncode == 1, merged.stdout + merged.stderr
    assert GATE_FAILED in " ".join(merged.stdout.split())
    assert "policy: bundled default (sha256" in merged.stdout
    again = _cli(lead, "runs", "merge", "R", *files, "--json")  # decided again, the same way
    assert again.returncode == 1
    doc = json.loads(again.stdout)
    assert doc["gate"]["passed"] is False and doc["merged_shard_runs"] == 2
    assert doc["policy"]["settings"]["max_inconclusive_share"] == 0.1
    # judge a never answered validly: loosening the share alone still fails on its coverage
    share_only = _cli(lead, "runs", "merge", "R", *files, "--override",
                      "max_inconclusive_share=0.4")
    assert share_only.returncode == 1
    assert "judge a returned a verdict on 0 of 12 items" in " ".join(share_only.stdout.split())
    loosened = _cli(lead, "runs", "merge", "R", *files, "--override", "max_inconclusive_share=0.4",
                    "--override", "min_judge_coverage=0")
    assert loosened.returncode == 0, loosened.stdout + loosened.stderr
    assert "policy override: run.max_inconclusive_share=0.4 (policy 0.1)" in loosened.stdout
    finish = _cli(lead, "runs", "finish", "R", "--json")
    assert finish.returncode == 1 and json.loads(finish.stdout)["gate"]["passed"] is False


@pytest.fixture
def slow_stub() -> Iterator[str]:
    with stub_process(40) as url:
        yield url


def test_a_shard_killed_with_sigkill_and_rerun_pays_no_call_twice(
        tmp_path: Path, pg_schema_url: str, slow_stub: str) -> None:
    bench = tmp_path / "bench.jsonl"
    bench.write_text("".join(i.model_dump_json() + "\n"
                             for i in load_dataset(sample_dataset_path())[:24]))
    cfg = tmp_path / "stub.toml"
    cfg.write_text("name = 'stub'\nconcurrency = 4\nrun_checks = false\n" + "".join(
        f'\n[[judges]]\nspec = "openai-compatible:{m}@{slow_stub}"\n'
        for m in ("gpt-4o", "gemini-2.5-pro", "mistral-large-latest")))
    env = _env(tmp_path / "runner", pg_schema_url)
    args = ["run", str(bench), "--ensemble", str(cfg), "--run-id", "R", "--shard", "1/2",
            "--quiet"]
    proc = subprocess.Popen([sys.executable, "-m", "legal_judge", *args], env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    store = Store(pg_schema_url)
    deadline = time.time() + 60
    while time.time() < deadline and (
            not store.run_exists("R~shard-1-of-2")
            or store.call_counts("R~shard-1-of-2")["calls"] < 6):
        time.sleep(0.05)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    before = store.call_counts("R~shard-1-of-2")["calls"]
    assert before >= 6
    rerun = _cli(env, *args)
    assert rerun.returncode == 0, rerun.stdout + rerun.stderr
    stats = httpx.get(slow_stub.removesuffix("/v1") + "/stats").json()
    shard_items = sum(shard_of(i.id, 2) == 1 for i in load_dataset(sample_dataset_path())[:24])
    # Only the calls in flight at the kill (at most the concurrency, 4) can be sent again.
    assert stats["distinct"] == 3 * shard_items
    assert stats["max_per_digest"] <= 2 and stats["requests"] - stats["distinct"] <= 4
    second = _cli(env, "run", str(bench), "--ensemble", str(cfg), "--run-id", "R", "--shard",
                  "2/2", "--quiet")
    assert second.returncode == 0, second.stdout + second.stderr
    assert Store(pg_schema_url).get_run("R")["status"] == "completed"
