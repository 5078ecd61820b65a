"""Throughput, CPU and memory figures for the runner, against a local OpenAI-compatible stub.

    python scripts/bench.py                  # the issue-18 table: 300 and 1,000 items x 3 judges,
                                             #   concurrency 32, 200 ms stub, HTTP/1.0 (close) and
                                             #   keep-alive; then 1,000 / 10,000 / 100,000 items on
                                             #   a 1 ms stub (peak RSS, time per item)
    python scripts/bench.py --quick          # the same table in about two minutes (small sizes)
    python scripts/bench.py --items 1000 --http 1.0 --memory-items 0 --repeats 3
    python scripts/bench.py --items 0 --memory-items 10000 --tracemalloc
    python scripts/bench.py --code /tmp/old  # measure another checkout's legal_judge (the stub
                                             #   and this script stay this checkout's)
    python scripts/bench.py --batch --items 2000  # run --batch: submit/merge throughput, batch vs
                                                  #   online cost (scripts/bench_batch.py)
    python scripts/bench.py --checks              # citation-check speed (2 KB answer, 100 KB brief,
                                                  #   the Fisher opinion), then the runner with checks on
    python scripts/bench.py --checks --items 0    # citation-check speed only

The ceiling is a bare ``openai`` SDK loop (AsyncOpenAI, a semaphore, asyncio.gather; no rendering,
parsing or store; request bodies rendered before the clock starts) against the same stub in the
same run; our figure (which includes reading the dataset file, as `legal-judge run` does) is a
ratio to it. A second bare loop sends the same bodies through the SDK's ``post()`` (the path the
adapter takes: no typed-parameter walk, no ``ChatCompletion`` built), so the table shows our own
overhead apart from what the adapter saves inside the SDK. CPU per call is process CPU time (user + system) over the
calls made, of this process for the bare loop and of the run's own process for ours (the stub runs
in a third process). Peak memory is the run process's ``ru_maxrss`` (the whole process: interpreter,
imports, the items it loaded, the run); ``--tracemalloc`` adds the peak of Python allocations
during the run (and slows it). Prints figures; asserts nothing (tests never assert on wall time).
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


HTTP_LABELS = {"1.0": "HTTP/1.0 close", "1.1": "keep-alive"}


def start_stub(latency_ms: float, http_version: str = "1.1",
               backlog: int = 128) -> tuple[subprocess.Popen[str], str]:
    """This checkout's stub (whatever ``--code`` measures), on a free loopback port."""
    proc = subprocess.Popen([sys.executable, "-m", "legal_judge.devtools.openai_stub", "--port", "0",
                             "--latency-ms", str(latency_ms), "--http-version", http_version,
                             "--backlog", str(backlog)], stdout=subprocess.PIPE, text=True,
                            cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert proc.stdout is not None
    port = proc.stdout.readline().split()[1]
    return proc, f"http://127.0.0.1:{port}/v1"


def make_items(n: int, start: int = 0) -> list[BenchmarkItem]:
    """Items ``start`` .. ``n - 1``: the bundled sample cycled, each prompt made distinct."""
    base = load_dataset(sample_dataset_path())
    return [base[i % len(base)].model_copy(update={"id": f"b{i:06d}",
                                                   "prompt": base[i % len(base)].prompt + f" [{i}]"})
            for i in range(start, n)]


def write_config(path: Path, url: str, concurrency: int, checks: bool) -> Path:
    judges = "".join(f'\n[[judges]]\nspec = "openai-compatible:{m}@{url}"\n' for m in JUDGE_MODELS)
    path.write_text(f"name = 'bench'\nconcurrency = {concurrency}\nrun_checks = {str(checks).lower()}\n"
                    + judges)
    return path


async def bare_loop(items: list[BenchmarkItem], url: str, concurrency: int, *,
                    typed: bool = True) -> dict[str, float]:
    """The ceiling: the same requests through AsyncOpenAI with nothing else.

    ``typed``: through ``chat.completions.create`` (the issue's ceiling: the SDK walks the typed
    parameters and builds a ``ChatCompletion``); otherwise through ``post()`` with the same body,
    the reply's JSON decoded (the SDK path the adapter takes).
    """
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
        body = {"model": model, "messages": messages, "temperature": 0, "max_tokens": 1500,
                "response_format": {"type": "json_schema",
                                    "json_schema": {"name": "verdict", "schema": schema}}}
        async with sem:
            if typed:
                await client.chat.completions.create(**body)  # type: ignore[call-overload]
            else:
                json.loads(await client.post("/chat/completions", body=body, cast_to=str))

    t0, c0 = time.perf_counter(), time.process_time()
    await asyncio.gather(*(one(m, model) for m in requests for model in JUDGE_MODELS))
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    await client.close()
    return {"wall_s": wall, "cpu_s": cpu, "calls": len(requests) * len(JUDGE_MODELS)}


#: ``--store``: a PostgreSQL server to measure on instead of SQLite (each home its own schema).
STORE_URL: str | None = None


def _store_for(home: Path) -> str:
    """A schema of ``--store`` for ``home`` (the same home, e.g. the cached rerun, shares it)."""
    import hashlib

    import psycopg

    assert STORE_URL is not None
    schema = "bench_" + hashlib.sha1(str(home).encode()).hexdigest()[:12]
    with psycopg.connect(STORE_URL, autocommit=True) as db:
        db.execute(f"CREATE SCHEMA IF NOT EXISTS {schema}")
    joiner = "&" if "?" in STORE_URL else "?"
    return f"{STORE_URL}{joiner}options=-csearch_path%3D{schema}"


def ours(items_path: Path, config: Path, home: Path, *, run_id: str, checks: bool = False,
         code_root: Path = ROOT, trace: bool = False) -> dict[str, Any]:
    """Our full path in a fresh process (rendering, parsing, validation, ensemble, store commits)."""
    code = f"""
import asyncio, json, resource, time, tracemalloc
# Import what the run will import, before the clock starts (the bare loop imports openai untimed too).
import legal_judge.benchmark.summary, legal_judge.providers.openai  # noqa: F401
if {checks!r}:
    import legal_judge.checks  # noqa: F401
if {STORE_URL is not None!r}:  # the PostgreSQL driver, as SQLite's is imported with the store
    import psycopg  # noqa: F401
from legal_judge.dataset import load_dataset
from legal_judge.benchmark.ensemble_config import load_ensemble_config
from legal_judge.benchmark.runner import run_benchmark
from legal_judge.store import Store
try:  # a checkout that streams its items reads the file the way `legal-judge run` does
    from legal_judge.dataset.stream import stream_dataset as read_items
except ImportError:  # older checkouts (--code) load the whole list
    read_items = load_dataset
cfg = load_ensemble_config({str(config)!r})
rss0 = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
if {trace!r}:
    tracemalloc.start()
# Reading the dataset is timed on both sides of a --code comparison: a streaming checkout reads
# it inside run_benchmark, an older one before it, and `legal-judge run` pays for it either way.
t0, c0 = time.perf_counter(), time.process_time()
items = read_items({str(items_path)!r})
out = asyncio.run(run_benchmark(items, cfg, store=Store(), run_id={run_id!r}))
wall, cpu = time.perf_counter() - t0, time.process_time() - c0
traced = tracemalloc.get_traced_memory()[1] / 2**20 if {trace!r} else None
import legal_judge
print(json.dumps({{"code": legal_judge.__file__,
                   "wall_s": wall, "cpu_s": cpu, "status": out.status, "calls": out.progress.calls,
                   "cached": out.progress.cached, "rss_before_mb": rss0, "traced_peak_mb": traced,
                   "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}}))
"""
    env = {**os.environ, "LEGAL_JUDGE_HOME": str(home), "PYTHONPATH": str(code_root)}
    if STORE_URL:
        env["LEGAL_JUDGE_STORE"] = _store_for(home)
    # `python -c` puts the working directory first on sys.path, before PYTHONPATH: run in the
    # measured checkout, or a --code comparison measures this checkout twice.
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                         check=True, cwd=code_root)
    figures = dict(json.loads(out.stdout.strip().splitlines()[-1]))
    if not Path(figures["code"]).resolve().is_relative_to(code_root.resolve()):
        raise SystemExit(f"measured {figures['code']}, not the checkout {code_root}")
    return figures


def stub_requests(url: str) -> int:
    import httpx

    return int(httpx.get(url.removesuffix("/v1") + "/stats", timeout=30).json()["requests"])


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


def _sizes(text: str) -> list[int]:
    return [int(x.replace("_", "")) for x in text.split(",") if x.strip() and int(x) > 0]


def _load() -> str:
    one, five, fifteen = os.getloadavg()
    return f"load average {one:.2f} {five:.2f} {fifteen:.2f} on {os.cpu_count()} cores"


def throughput_rows(n_items: int, http_version: str, args: argparse.Namespace,
                    work: Path) -> dict[str, Any]:
    """Bare loop, our run and its cached rerun, at one size against one stub."""
    items = make_items(n_items)
    work.mkdir()
    items_path = work / "bench.jsonl"
    items_path.write_text("".join(i.model_dump_json() + "\n" for i in items))
    stub, url = start_stub(args.latency_ms, http_version, args.backlog)
    try:
        config = write_config(work / "bench.toml", url, args.concurrency, args.checks)
        bare = asyncio.run(bare_loop(items, url, args.concurrency))
        post = asyncio.run(bare_loop(items, url, args.concurrency, typed=False))
        before = stub_requests(url)
        first = ours(items_path, config, work / "home", run_id="bench-1", checks=args.checks,
                     code_root=args.code)
        made = stub_requests(url) - before
        before = stub_requests(url)
        cached = ours(items_path, config, work / "home", run_id="bench-2", checks=args.checks,
                      code_root=args.code)
        cached_calls = stub_requests(url) - before
    finally:
        stub.terminate()
        stub.wait(10)
    calls = int(bare["calls"])
    return {"mode": HTTP_LABELS[http_version], "items": n_items, "calls": calls,
            "ideal": calls / args.concurrency * args.latency_ms / 1000,
            "bare_s": bare["wall_s"], "ours_s": first["wall_s"],
            "ratio": first["wall_s"] / bare["wall_s"], "post_s": post["wall_s"],
            "post_ratio": first["wall_s"] / post["wall_s"], "post_cpu": post["cpu_s"] / calls * 1000,
            "bare_cpu": bare["cpu_s"] / calls * 1000, "ours_cpu": first["cpu_s"] / max(made, 1) * 1000,
            "made": made, "cached_s": cached["wall_s"], "speedup": first["wall_s"] / cached["wall_s"],
            "cached_calls": cached_calls, "rss": first["peak_rss_mb"], "load": os.getloadavg()[0]}


def memory_row(n_items: int, args: argparse.Namespace, tmpdir: Path) -> dict[str, Any]:
    """One run of ``n_items`` against a 1 ms keep-alive stub: wall time per item and peak memory."""
    work = tmpdir / f"m-{n_items}"
    work.mkdir()
    path = work / "mem.jsonl"
    with path.open("w") as out:  # written in chunks: the bench process need not hold 100,000 items
        for start in range(0, n_items, 5000):
            chunk = make_items(min(n_items, start + 5000), start)
            out.write("".join(i.model_dump_json() + "\n" for i in chunk))
    stub, url = start_stub(1.0, "1.1", args.backlog)
    try:
        before = stub_requests(url)
        mem = ours(path, write_config(work / "m.toml", url, args.memory_concurrency, False),
                   work / "home", run_id="mem", code_root=args.code, trace=args.tracemalloc)
        made = stub_requests(url) - before
    finally:
        stub.terminate()
        stub.wait(10)
    return {"items": n_items, "calls": made, "wall_s": mem["wall_s"],
            "ms_item": mem["wall_s"] / n_items * 1000, "cpu_call": mem["cpu_s"] / max(made, 1) * 1000,
            "rss": mem["peak_rss_mb"], "rss0": mem["rss_before_mb"], "traced": mem["traced_peak_mb"],
            "load": os.getloadavg()[0]}


def print_tables(rows: list[dict[str, Any]], mem: list[dict[str, Any]],
                 args: argparse.Namespace) -> None:
    print()
    print(f"code measured: {args.code}   stub: {ROOT / 'legal_judge/devtools/openai_stub.py'}"
          f" (backlog {args.backlog})")
    if rows:
        print(f"run_benchmark vs a bare AsyncOpenAI loop: {len(JUDGE_MODELS)} judges, concurrency "
              f"{args.concurrency}, stub latency {args.latency_ms:g} ms, checks {args.checks}")
        print("  targets: ratio <= 1.05; CPU/call within 0.5 ms of the bare loop's; cached rerun "
              ">= 50x faster with 0 calls")
        head = (f"{'stub':<15}{'items':>6}{'calls':>6}{'ideal s':>8}{'bare s':>8}{'ours s':>8}"
                f"{'ratio':>7}{'bare ms/c':>10}{'ours ms/c':>10}{'+CPU':>6}{'cached s':>9}"
                f"{'speedup':>8}{'calls':>6}{'RSS MB':>7}{'load':>5}"
                f"{'post s':>8}{'ratio':>7}{'post ms/c':>10}{'+CPU':>6}")
        print(head)
        print("-" * len(head))
        for r in rows:
            print(f"{r['mode']:<15}{r['items']:>6}{r['calls']:>6}{r['ideal']:>8.2f}{r['bare_s']:>8.2f}"
                  f"{r['ours_s']:>8.2f}{r['ratio']:>7.3f}{r['bare_cpu']:>10.2f}{r['ours_cpu']:>10.2f}"
                  f"{r['ours_cpu'] - r['bare_cpu']:>6.2f}{r['cached_s']:>9.3f}{r['speedup']:>7.1f}x"
                  f"{r['cached_calls']:>6}{r['rss']:>7.0f}{r['load']:>5.1f}"
                  f"{r['post_s']:>8.2f}{r['post_ratio']:>7.3f}{r['post_cpu']:>10.2f}"
                  f"{r['ours_cpu'] - r['post_cpu']:>6.2f}")
        print("  ours ms/c: the run's process CPU over the calls it made (the stub's own CPU is "
              "another process); calls: provider requests of the cached rerun; RSS: ru_maxrss of "
              "the first run's process")
        print("  bare: chat.completions.create (the targets' ceiling); post: the same bodies "
              "through the SDK's post() with the reply's JSON decoded, the path our adapter takes "
              "(no typed-parameter walk, no ChatCompletion built)")
        print_medians(rows)
    if mem:
        print()
        print(f"scaling: 1 ms keep-alive stub, {len(JUDGE_MODELS)} judges, concurrency "
              f"{args.memory_concurrency}; peak memory = ru_maxrss of the run's process"
              + ("; traced = tracemalloc peak during the run" if args.tracemalloc else ""))
        print("  targets: peak memory at 100,000 items < 300 MB; ms/item flat from 1,000 to "
              "100,000 items")
        head = (f"{'items':>8}{'calls':>8}{'wall s':>9}{'ms/item':>9}{'CPU ms/c':>9}"
                f"{'RSS before':>11}{'peak RSS':>9}{'traced':>8}{'load':>6}")
        print(head)
        print("-" * len(head))
        for m in mem:
            traced = f"{m['traced']:>8.1f}" if m["traced"] is not None else f"{'-':>8}"
            print(f"{m['items']:>8}{m['calls']:>8}{m['wall_s']:>9.1f}{m['ms_item']:>9.3f}"
                  f"{m['cpu_call']:>9.2f}{m['rss0']:>11.1f}{m['rss']:>9.1f}{traced}{m['load']:>6.1f}")
        print("  RSS before: the process after importing and loading the items, before the run; "
              "MB = MiB")
    print(_load())


def median_rows(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Per cell (stub mode and size) repeated more than once: the median of each target figure
    and its range, so one run in a slow minute of a shared machine does not decide a target."""
    import statistics

    cells: dict[tuple[str, int], list[dict[str, Any]]] = {}
    for r in rows:
        cells.setdefault((r["mode"], r["items"]), []).append(r)
    out = []
    for (mode, items), runs in cells.items():
        if len(runs) < 2:
            continue
        figures = {"ratio": [r["ratio"] for r in runs],
                   "cpu": [r["ours_cpu"] - r["bare_cpu"] for r in runs],
                   "speedup": [r["speedup"] for r in runs]}
        out.append({"mode": mode, "items": items, "n": len(runs),
                    "calls": max(r["cached_calls"] for r in runs),
                    **{k: (statistics.median(v), min(v), max(v)) for k, v in figures.items()}})
    return out


def print_medians(rows: list[dict[str, Any]]) -> None:
    """The medians of :func:`median_rows`, with each target's verdict on the median."""
    medians = median_rows(rows)
    if not medians:
        return
    print()
    print("medians over the repeats (min-max); a target is judged on the median")
    for m in medians:
        ratio, cpu, speed = m["ratio"], m["cpu"], m["speedup"]
        verdicts = [("ratio", ratio[0] <= 1.05), ("CPU", cpu[0] <= 0.5),
                    ("cached", speed[0] >= 50 and m["calls"] == 0)]
        print(f"  {m['mode']:<15}{m['items']:>6} x{m['n']}: ratio {ratio[0]:.3f} "
              f"({ratio[1]:.3f}-{ratio[2]:.3f}), +CPU {cpu[0]:+.2f} ms/call "
              f"({cpu[1]:+.2f} to {cpu[2]:+.2f}), cached {speed[0]:.1f}x "
              f"({speed[1]:.1f}-{speed[2]:.1f}), max {m['calls']} calls; "
              + ", ".join(f"{k} {'met' if ok else 'NOT met'}" for k, ok in verdicts))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    parser.add_argument("--items", default="300,1000",
                        help="throughput sizes, comma-separated (0: skip); default 300,1000")
    parser.add_argument("--http", default="1.0,1.1",
                        help="stub modes: 1.0 (HTTP/1.0, a connection per call), 1.1 (keep-alive)")
    parser.add_argument("--repeats", type=int, default=1,
                        help="repeat each throughput row; the table then ends with each cell's "
                             "medians, on which the targets are judged")
    parser.add_argument("--batch", action="store_true",
                        help="measure run --batch instead: submit and merge throughput, batch vs "
                             "online cost (emulated provider batch APIs)")
    parser.add_argument("--concurrency", type=int, default=32)
    parser.add_argument("--latency-ms", type=float, default=200.0)
    parser.add_argument("--backlog", type=int, default=128, help="the stub's listen backlog")
    parser.add_argument("--checks", action="store_true", help="measure citation-check speed, and run the rule-based checks in the runner")
    parser.add_argument("--memory-items", default="1000,10000,100000",
                        help="scaling sizes on a 1 ms stub, comma-separated (0: skip)")
    parser.add_argument("--memory-concurrency", type=int, default=64)
    parser.add_argument("--tracemalloc", action="store_true",
                        help="also trace Python allocations in the scaling runs (slower)")
    parser.add_argument("--quick", action="store_true",
                        help="small sizes: --items 200 --memory-items 1000,3000")
    parser.add_argument("--store", default=None, metavar="URL",
                        help="measure on this PostgreSQL server (postgresql://...) instead of "
                             "SQLite; each run gets a schema of its own")
    parser.add_argument("--code", type=Path, default=ROOT,
                        help="the checkout whose legal_judge is measured (default: this one)")
    args = parser.parse_args()
    global STORE_URL
    STORE_URL = args.store
    if args.quick:
        args.items, args.memory_items = "200", "1000,3000"
    args.code = args.code.resolve()
    if not (args.code / "legal_judge" / "__init__.py").is_file():
        parser.error(f"--code {args.code}: no legal_judge package there; name a checkout of this "
                     "repository (e.g. git worktree add /tmp/old <commit>)")
    if args.batch:
        batch_figures(int(args.items.split(",")[-1]))
        return
    if args.checks:
        check_figures()
    print(f"start: {_load()}", flush=True)
    rows: list[dict[str, Any]] = []
    mem: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory() as tmp:
        tmpdir = Path(tmp)
        for n in _sizes(args.items):
            for version in [v.strip() for v in args.http.split(",") if v.strip()]:
                for rep in range(args.repeats):
                    row = throughput_rows(n, version, args, tmpdir / f"t-{n}-{version}-{rep}")
                    rows.append(row)
                    print(f"  {row['mode']} {n} items: ratio {row['ratio']:.3f} "
                          f"({row['post_ratio']:.3f} to post()), ours {row['ours_cpu']:.2f} "
                          f"ms/call, bare {row['bare_cpu']:.2f} (post() {row['post_cpu']:.2f}); "
                          f"cached rerun {row['speedup']:.1f}x, {row['cached_calls']} calls",
                          flush=True)
        for n in _sizes(args.memory_items):
            mem.append(memory_row(n, args, tmpdir))
            print(f"  scaling {n} items: {mem[-1]['ms_item']:.3f} ms/item, peak RSS "
                  f"{mem[-1]['rss']:.0f} MB", flush=True)
    print_tables(rows, mem, args)


if __name__ == "__main__":
    main()
