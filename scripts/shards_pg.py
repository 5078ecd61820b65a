"""Four shard processes of a generated dataset into one PostgreSQL store, against one process.

    python scripts/shards_pg.py --store postgresql://USER@HOST/DB [--items 2000]

Generates ``--items`` items (the bundled sample's, under new ids and variant prompts), starts the OpenAI-compatible
stub, runs the whole dataset in one process (in a schema of its own), then four ``--shard K/4``
processes at once into another schema, SIGKILLs one of them midway and reruns it. Prints the wall
times, whether the sharded run equals the single one verdict by verdict, and the stub's request
counts (a call paid twice shows as requests above the distinct requests). Not a test: it takes
minutes; tests/benchmark/test_shards.py checks the same on the 57-item sample.
"""

from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

import httpx
import psycopg

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from legal_judge.dataset import load_dataset, sample_dataset_path  # noqa: E402
from legal_judge.store import Store  # noqa: E402


def _schema(url: str) -> str:
    name = f"shards_{uuid.uuid4().hex[:10]}"
    with psycopg.connect(url, autocommit=True) as db:
        db.execute(f"CREATE SCHEMA {name}")
    return f"{url}{'&' if '?' in url else '?'}options=-csearch_path%3D{name}"


def _verdicts(store: Store, run_id: str) -> dict[str, Any]:
    return {f"{item}/{judge}": (v.get("status"), v.get("scores"))
            for item, judge, v in store.iter_verdicts(run_id)}


def _stats(stub: str) -> dict[str, Any]:
    return dict(httpx.get(stub.removesuffix("/v1") + "/stats").json())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawTextHelpFormatter)
    parser.add_argument("--store", required=True, help="a PostgreSQL URL (schemas are created)")
    parser.add_argument("--items", type=int, default=2000)
    parser.add_argument("--latency-ms", type=float, default=5.0)
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="lj-shards-"))
    sample = load_dataset(sample_dataset_path())
    data = work / "generated.jsonl"
    with data.open("w") as fh:
        for n in range(args.items):
            # Distinct content too: the verdict cache is keyed by content, not by id.
            source = sample[n % len(sample)]
            item = source.model_copy(update={"id": f"gen-{n:05d}",
                                             "prompt": f"{source.prompt}\n(variant {n})"})
            fh.write(item.model_dump_json() + "\n")
    stub_proc = subprocess.Popen([sys.executable, "-m", "legal_judge.devtools.openai_stub",
                                  "--port", "0", "--latency-ms", str(args.latency_ms)],
                                 stdout=subprocess.PIPE, text=True)
    assert stub_proc.stdout is not None
    stub = f"http://127.0.0.1:{stub_proc.stdout.readline().split()[1]}/v1"
    cfg = work / "stub.toml"
    cfg.write_text("name = 'stub'\nconcurrency = 16\nrun_checks = false\n" + "".join(
        f'\n[[judges]]\nspec = "openai-compatible:{m}@{stub}"\n'
        for m in ("gpt-4o", "gemini-2.5-pro", "mistral-large-latest")))
    base_env = {**os.environ, "PYTHONPATH": str(ROOT), "LEGAL_JUDGE_HOME": str(work / "home")}
    try:
        single_url, sharded_url = _schema(args.store), _schema(args.store)
        t0 = time.perf_counter()
        subprocess.run([sys.executable, "-m", "legal_judge", "run", str(data), "--ensemble",
                        str(cfg), "--run-id", "S", "--quiet"], env={
                            **base_env, "LEGAL_JUDGE_STORE": single_url},
                       check=True, capture_output=True)
        single_s = time.perf_counter() - t0
        before = _stats(stub)
        env = {**base_env, "LEGAL_JUDGE_STORE": sharded_url}

        def shard(k: int) -> subprocess.Popen[bytes]:
            return subprocess.Popen([sys.executable, "-m", "legal_judge", "run", str(data),
                                     "--ensemble", str(cfg), "--run-id", "R", "--shard", f"{k}/4",
                                     "--quiet"], env=env, stdout=subprocess.DEVNULL,
                                    stderr=subprocess.DEVNULL)

        t0 = time.perf_counter()
        procs = {k: shard(k) for k in range(1, 5)}
        store = Store(sharded_url)
        while not store.run_exists("R~shard-2-of-4") or store.call_counts(
                "R~shard-2-of-4")["calls"] < 300:
            time.sleep(0.1)
        procs[2].send_signal(signal.SIGKILL)
        procs[2].wait()
        killed_at = store.call_counts("R~shard-2-of-4")["calls"]
        procs[2] = shard(2)
        codes = {k: p.wait() for k, p in procs.items()}
        sharded_s = time.perf_counter() - t0
        after = _stats(stub)
        single, sharded = Store(single_url), Store(sharded_url)
        same = _verdicts(single, "S") == _verdicts(sharded, "R")
        requests = after["requests"] - before["requests"]
        print(f"items {args.items}, calls {3 * args.items}; exit codes of the shards {codes}")
        print(f"single process: {single_s:.1f} s; four shards at once: {sharded_s:.1f} s "
              f"(shard 2 SIGKILLed after {killed_at} calls and rerun)")
        print(f"sharded run R: {sharded.get_run('R')['status']}, equal verdict by verdict to "
              f"the single run: {same} ({len(_verdicts(sharded, 'R'))} verdicts)")
        print(f"stub requests by the shards: {requests} for {3 * args.items} distinct calls "
              f"(paid again after the kill: {requests - 3 * args.items}, at most the "
              f"concurrency in flight)")
    finally:
        stub_proc.terminate()
        stub_proc.wait(10)


if __name__ == "__main__":
    main()
