"""Throughput, CPU and memory figures for the runner, against a local OpenAI-compatible stub.

    python scripts/bench.py                       # 1,000 items x 3 judges, concurrency 32, 200 ms stub
    python scripts/bench.py --items 200 --latency-ms 50
    python scripts/bench.py --memory-items 10000  # peak RSS of a 10,000-item run (fast stub)
    python scripts/bench.py --batch --items 2000  # run --batch: submit/merge throughput, batch vs
                                                  #   online cost (scripts/bench_batch.py)

The ceiling is a bare ``openai`` SDK loop (AsyncOpenAI, a semaphore, asyncio.gather; no rendering,
parsing or store) against the same stub in the same run; our figure is a ratio to it. Prints figures;
asserts nothing (tests never assert on wall time).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from legal_judge.dataset import load_dataset, sample_dataset_path  # noqa: E402
from legal_judge.models import BenchmarkItem  # noqa: E402

JUDGE_MODELS = ("gpt-4o", "gemini-2.5-pro", "mistral-large-latest")


def start_stub(latency_ms: float) -> tuple[subprocess.Popen[str], str]:
    proc = subprocess.Popen([sys.executable, "-m", "legal_judge.devtools.openai_stub", "--port", "0",
                             "--latency-ms", str(latency_ms)], stdout=subprocess.PIPE, text=True,
                            cwd=ROOT)
    assert proc.stdout is not None
    port = proc.stdout.readline().split()[1]
    return proc, f"http://127.0.0.1:{port}/v1"


def make_items(n: int) -> list[BenchmarkItem]:
    base = load_dataset(sample_dataset_path())
    return [base[i % len(base)].model_copy(update={"id": f"b{i:06d}",
                                                   "prompt": base[i % len(base)].prompt + f" [{i}]"})
            for i in range(n)]


def write_config(path: Path, url: str, concurrency: int, checks: bool) -> Path:
    judges = "".join(f'\n[[judges]]\nspec = "openai-compatible:{m}@{url}"\n' for m in JUDGE_MODELS)
    path.write_text(f"name = 'bench'\nconcurrency = {concurrency}\nrun_checks = {str(checks).lower()}\n"
                    + judges)
    return path


async def bare_loop(items: list[BenchmarkItem], url: str, concurrency: int) -> dict[str, float]:
    """The ceiling: the same requests through AsyncOpenAI with nothing else."""
    import openai

    from legal_judge.judge import Judge, JudgeConfig, verdict_schema
    from legal_judge.providers.registry import get_provider

    judge = Judge(JudgeConfig(spec=f"openai-compatible:gpt-4o@{url}"),
                  get_provider(f"openai-compatible:gpt-4o@{url}"))
    schema = verdict_schema(judge.active_rubrics(items[0]))
    requests = [[m.model_dump() for m in judge.messages(it)] for it in items]  # prepared untimed
    client = openai.AsyncOpenAI(base_url=url, api_key="not-needed", max_retries=0)
    sem = asyncio.Semaphore(concurrency)

    async def one(messages: list[dict[str, str]], model: str) -> None:
        async with sem:
            await client.chat.completions.create(  # type: ignore[call-overload]
                model=model, messages=messages, temperature=0, max_tokens=1500,
                response_format={"type": "json_schema",
                                 "json_schema": {"name": "verdict", "schema": schema}})

    t0, c0 = time.perf_counter(), time.process_time()
    await asyncio.gather(*(one(m, model) for m in requests for model in JUDGE_MODELS))
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    await client.close()
    return {"wall_s": wall, "cpu_s": cpu, "calls": len(requests) * len(JUDGE_MODELS)}


def ours(items_path: Path, config: Path, home: Path, *, run_id: str,
         checks: bool = False) -> dict[str, Any]:
    """Our full path in a fresh process (rendering, parsing, validation, ensemble, store commits)."""
    code = f"""
import asyncio, json, resource, time
# Import what the run will import, before the clock starts (the bare loop imports openai untimed too).
import legal_judge.summary, legal_judge.providers.openai  # noqa: F401
if {checks!r}:
    import legal_judge.checks  # noqa: F401
from legal_judge.dataset import load_dataset
from legal_judge.ensemble_config import load_ensemble_config
from legal_judge.runner import run_benchmark
from legal_judge.store import Store
items = load_dataset({str(items_path)!r})
cfg = load_ensemble_config({str(config)!r})
t0, c0 = time.perf_counter(), time.process_time()
out = asyncio.run(run_benchmark(items, cfg, store=Store(), run_id={run_id!r}))
wall, cpu = time.perf_counter() - t0, time.process_time() - c0
print(json.dumps({{"wall_s": wall, "cpu_s": cpu, "status": out.status, "calls": out.progress.calls,
                   "cached": out.progress.cached,
                   "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}}))
"""
    env = {**os.environ, "LEGAL_JUDGE_HOME": str(home), "PYTHONPATH": str(ROOT)}
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                         check=True)
    return dict(json.loads(out.stdout.strip().splitlines()[-1]))


def stub_requests(url: str) -> int:
    import httpx

    return int(httpx.get(url.removesuffix("/v1") + "/stats").json()["requests"])


def batch_figures(n_items: int) -> None:
    """``scripts/bench_batch.py``'s measurement (emulated batch APIs, no network), printed."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("bench_batch", ROOT / "scripts" / "bench_batch.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    with tempfile.TemporaryDirectory() as tmp:
        os.environ["LEGAL_JUDGE_HOME"] = tmp
        os.environ.setdefault("OPENAI_API_KEY", "sk-bench-not-a-key")
        os.environ.setdefault("ANTHROPIC_API_KEY", "sk-ant-bench-not-a-key")
        asyncio.run(module.main_async(n_items, Path(tmp)))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    parser.add_argument("--items", type=int, default=1000)
    parser.add_argument("--batch", action="store_true",
                        help="measure run --batch instead: submit and merge throughput, batch vs "
                             "online cost (emulated provider batch APIs)")
    parser.add_argument("--concurrency", type=int, default=32)
    parser.add_argument("--latency-ms", type=float, default=200.0)
    parser.add_argument("--checks", action="store_true", help="also run the rule-based checks")
    parser.add_argument("--memory-items", type=int, default=0, help="peak-memory run size (0: skip)")
    args = parser.parse_args()
    if args.batch:
        batch_figures(args.items)
        return
    items = make_items(args.items)
    with tempfile.TemporaryDirectory() as tmp:
        tmpdir = Path(tmp)
        items_path = tmpdir / "bench.jsonl"
        items_path.write_text("".join(i.model_dump_json() + "\n" for i in items))
        stub, url = start_stub(args.latency_ms)
        try:
            config = write_config(tmpdir / "bench.toml", url, args.concurrency, args.checks)
            bare = asyncio.run(bare_loop(items, url, args.concurrency))
            before = stub_requests(url)
            first = ours(items_path, config, tmpdir / "home", run_id="bench-1", checks=args.checks)
            made = stub_requests(url) - before
            before = stub_requests(url)
            cached = ours(items_path, config, tmpdir / "home", run_id="bench-2", checks=args.checks)
            cached_calls = stub_requests(url) - before
        finally:
            stub.terminate()
        calls = bare["calls"]
        ideal = calls / args.concurrency * args.latency_ms / 1000
        print(f"items {args.items} x {len(JUDGE_MODELS)} judges = {calls} calls, concurrency "
              f"{args.concurrency}, stub latency {args.latency_ms:.0f} ms, checks {args.checks}")
        print(f"ideal wall time          {ideal:8.2f} s")
        print(f"bare openai SDK loop     {bare['wall_s']:8.2f} s  ({ideal / bare['wall_s']:.2f} of ideal)"
              f"  CPU {bare['cpu_s'] / calls * 1000:.2f} ms/call")
        print(f"legal-judge run          {first['wall_s']:8.2f} s  ratio to bare "
              f"{first['wall_s'] / bare['wall_s']:.3f}  CPU {first['cpu_s'] / calls * 1000:.2f} ms/call"
              f"  provider requests {made}")
        print(f"cached rerun             {cached['wall_s']:8.2f} s  {first['wall_s'] / cached['wall_s']:.1f}x"
              f" faster  provider requests {cached_calls}")
        print(f"peak RSS (1st run)       {first['peak_rss_mb']:8.1f} MB")
        if args.memory_items:
            mem_items = make_items(args.memory_items)
            path = tmpdir / "mem.jsonl"
            path.write_text("".join(i.model_dump_json() + "\n" for i in mem_items))
            stub, url = start_stub(1.0)
            try:
                mem = ours(path, write_config(tmpdir / "m.toml", url, 64, False), tmpdir / "mem",
                           run_id="mem")
            finally:
                stub.terminate()
            print(f"{args.memory_items} items: {mem['wall_s']:.1f} s, peak RSS {mem['peak_rss_mb']:.1f} MB")


if __name__ == "__main__":
    main()
