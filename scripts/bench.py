"""Throughput, CPU and memory figures for the runner, against a local OpenAI-compatible stub.

    python scripts/bench.py                       # 1,000 items x 3 judges, concurrency 32, 200 ms stub
    python scripts/bench.py --items 200 --latency-ms 50
    python scripts/bench.py --memory-items 10000  # peak RSS of a 10,000-item run (fast stub)
    python scripts/bench.py --batch --items 2000  # run --batch: submit/merge throughput, batch vs
                                                  #   online cost (scripts/bench_batch.py)
    python scripts/bench.py --checks              # citation-check speed (2 KB answer, 100 KB brief,
                                                  #   the Fisher opinion), then the runner with checks on
    python scripts/bench.py --checks --items 0    # citation-check speed only

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

    from legal_judge.judge.config import JudgeConfig
    from legal_judge.judge.judge import Judge
    from legal_judge.judge.parse import verdict_schema
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
import legal_judge.benchmark.summary, legal_judge.providers.openai  # noqa: F401
if {checks!r}:
    import legal_judge.checks  # noqa: F401
from legal_judge.dataset import load_dataset
from legal_judge.benchmark.ensemble_config import load_ensemble_config
from legal_judge.benchmark.runner import run_benchmark
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


# ---------------------------------------------------------------- citation-check speed

# A typical 2 KB answer of a legal AI: cases with parallel and pin cites, statutes with
# subdivisions, a rule, a regulation. Fixed, so figures compare across versions.
CHECK_ANSWER_2KB = (
    "Under Title VII, 42 U.S.C. § 2000e-2(a)(1), an employer may not discriminate because of sex. "
    "The framework comes from McDonnell Douglas Corp. v. Green, 411 U.S. 792, 802 (1973), and "
    "Texas Dep't of Community Affairs v. Burdine, 450 U.S. 248, 253 (1981). Harassment is "
    "actionable when severe or pervasive: Meritor Savings Bank, FSB v. Vinson, 477 U.S. 57, 67 "
    "(1986); Harris v. Forklift Systems, Inc., 510 U.S. 17, 21 (1993). Employer liability follows "
    "Faragher v. City of Boca Raton, 524 U.S. 775, 807 (1998) and Burlington Industries, Inc. v. "
    "Ellerth, 524 U.S. 742, 765 (1998). Retaliation is broader: Burlington N. & S.F. R. Co. v. "
    "White, 548 U.S. 53, 68 (2006); see 42 U.S.C. § 2000e-3(a). A complaint must state a plausible "
    "claim, Fed. R. Civ. P. 12(b)(6); Ashcroft v. Iqbal, 556 U.S. 662, 678 (2009); Bell Atlantic "
    "Corp. v. Twombly, 550 U.S. 544, 570 (2007). In the Second Circuit, see Vega v. Hempstead Union "
    "Free School Dist., 801 F.3d 72, 86 (2d Cir. 2015), and in New York state court, Matter of "
    "Jones, 150 A.D.3d 1234 (2d Dep't 2017). The EEOC's regulations are at 29 C.F.R. § 1604.11 "
    "(2023). Disability claims arise under 42 U.S.C. § 12112(b)(5)(A); see US Airways, Inc. v. "
    "Barnett, 535 U.S. 391, 401 (2002). The charge must be filed within 300 days, 42 U.S.C. "
    "§ 2000e-5(e)(1); National Railroad Passenger Corp. v. Morgan, 536 U.S. 101, 113 (2002). "
    "Section 1981 claims, 42 U.S.C. § 1981, are not subject to that limit: Jones v. R.R. Donnelley "
    "& Sons Co., 541 U.S. 369, 382 (2004). California adds Cal. Gov't Code § 12940 and Cal. Lab. "
    "Code § 2802. Fee awards: 42 U.S.C. § 1988(b); Hensley v. Eckerhart, 461 U.S. 424, 433 (1983). "
    "Punitive damages are capped by 42 U.S.C. § 1981a(b)(3), added by the Civil Rights Act of 1991, "
    "Pub. L. No. 102-166, 105 Stat. 1071; see Kolstad v. American Dental Ass'n, 527 U.S. 526, 535 "
    "(1999). Evidence of similar acts may come in under Fed. R. Evid. 404(b)(2). For the standard of "
    "review, see Anderson v. Liberty Lobby, Inc., 477 U.S. 242, 248 (1986), and Reeves v. Sanderson "
    "Plumbing Products, Inc., 530 U.S. 133, 150 (2000)."
)

_BRIEF_TEMPLATES = (
    "The court in {n1} v. {n2}, {v} F.3d {p}, {q} (2d Cir. {y}), held that the claim was timely. "
    "See also {n2} v. {n1}, {v2} F. Supp. 2d {p2} (S.D.N.Y. {y2}). ",
    "Under 42 U.S.C. § {s}(a)({k}) and 28 U.S.C. § 1331, jurisdiction lies; cf. Fed. R. Civ. P. "
    "{r}(b)({k}). The state analogue is Cal. Gov't Code § {s}. ",
    "In {n1} v. {n2}, {v} U.S. {p}, {q} (1990), the Court explained the standard, and {n2} v. "
    "State, {v2} So. 2d {p2} (Fla. 4th DCA {y2}), applied it. ",
    "Id. at {q}. The Ninth Circuit agreed, {n1} v. {n2}, {v} F.2d {p} (9th Cir. 1985), as did "
    "People v. {n2}, {v2} Cal. App. 4th {p2} (Cal. Ct. App. 2001). ",
    "The regulation, 29 C.F.R. § 1604.{k}, and Matter of {n1}, {v2} A.D.3d {p2} (1st Dept {y2}), "
    "confirm it. {n1}, supra, at {q}. ",
)
_NAMES = ("Smith", "Jones", "Garcia", "Nguyen", "Okafor", "Rossi", "Cohen", "Ivanova", "Moreau")


def check_brief(size: int = 100_000, seed: int = 7) -> str:
    """A ~100 KB brief of template paragraphs with seeded random names, volumes and pages."""
    import random

    rng = random.Random(seed)
    parts: list[str] = []
    total = 0
    while total < size:
        t = _BRIEF_TEMPLATES[len(parts) % len(_BRIEF_TEMPLATES)]
        p = rng.randint(1, 1400)
        para = t.format(n1=rng.choice(_NAMES), n2=rng.choice(_NAMES), v=rng.randint(100, 990),
                        p=p, q=p + rng.randint(1, 9), y=rng.randint(2000, 2020),
                        v2=rng.randint(1, 300), p2=rng.randint(1, 1400),
                        y2=rng.randint(2005, 2020), s=rng.randint(1981, 12200),
                        k=rng.randint(1, 9), r=rng.randint(1, 60))
        parts.append(para)
        total += len(para)
    return "".join(parts)


def check_figures(repeats: int = 5) -> None:
    """Time ``check_citations`` (in process, after a warm-up) on three texts; print figures."""
    import statistics
    from datetime import date

    from legal_judge.checks.citations import check_citations

    today = date(2026, 11, 29)
    fisher = ROOT / "tests" / "checks" / "data" / "fisher-v-university-of-texas-2013.txt"
    if not fisher.exists():  # before the copy inside tests/ existed
        fisher = Path("/work/shared/data/us-supreme-court-opinion-fisher.txt")
    texts = [("2 KB answer", CHECK_ANSWER_2KB, max(repeats, 31)),
             ("100 KB brief", check_brief(), repeats)]
    if fisher.exists():
        texts.append(("Fisher opinion", fisher.read_text(encoding="utf-8"), repeats))
    t0 = time.perf_counter()
    check_citations(CHECK_ANSWER_2KB, today=today)  # loads eyecite, reporters-db, courts-db
    print(f"checks: first call (data loading) {(time.perf_counter() - t0) * 1000:.0f} ms")
    for label, text, n in texts:
        times, cpus, found = [], [], 0
        for _ in range(n):
            t0, c0 = time.perf_counter(), time.process_time()
            found = len(check_citations(text, today=today).findings)
            times.append(time.perf_counter() - t0)
            cpus.append(time.process_time() - c0)
        med, cpu = statistics.median(times), statistics.median(cpus)
        # CPU time is printed too: on a shared machine the wall time mostly measures the others.
        print(f"checks: {label:14} {len(text) / 1000:5.1f} KB {found:5d} findings  median wall "
              f"{med * 1000:7.1f} ms (min {min(times) * 1000:.1f}), CPU {cpu * 1000:7.1f} ms, n {n}:"
              f" {found / med:5.0f} findings/s wall, {found / cpu:5.0f}/s CPU")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    parser.add_argument("--items", type=int, default=1000)
    parser.add_argument("--batch", action="store_true",
                        help="measure run --batch instead: submit and merge throughput, batch vs "
                             "online cost (emulated provider batch APIs)")
    parser.add_argument("--concurrency", type=int, default=32)
    parser.add_argument("--latency-ms", type=float, default=200.0)
    parser.add_argument("--checks", action="store_true", help="measure citation-check speed, and run the rule-based checks in the runner")
    parser.add_argument("--memory-items", type=int, default=0, help="peak-memory run size (0: skip)")
    args = parser.parse_args()
    if args.batch:
        batch_figures(args.items)
        return
    if args.checks:
        check_figures()
    if args.items <= 0:
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
