"""Submit and merge throughput of ``run --batch``, and its cost against the online path.

    python scripts/bench_batch.py                 # 2,000 items x (gpt-4o, claude-haiku-4-5 batched,
                                                  #   one simulated judge online)
    python scripts/bench_batch.py --items 500

Everything runs through the real ``openai`` and ``anthropic`` SDKs against the in-memory batch
emulator (``legal_judge.batch.emulator``) over httpx.MockTransport: no network, no keys, no provider
latency, so the figures are this machine's own overhead. Phase 1 submits (``wait=False``: render
every request, encode JSONL, upload, create, store the batch ids); phase 2 is a fresh process-like
resume that polls, downloads, parses and merges; the online run scores the same items through the
same emulator's online endpoints. Token counts are the emulator's (about 4 characters per token).
Prints figures; asserts nothing.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

JUDGES = ("openai:gpt-4o", "anthropic:claude-haiku-4-5", "simulated:demo-mistral")


async def _no_wait(seconds: float) -> None:
    return None


async def main_async(n_items: int, tmp: Path) -> None:
    from legal_judge.batch import run_benchmark_batch
    from legal_judge.batch.emulator import ProviderEmulator
    from legal_judge.benchmark.ensemble_config import EnsembleConfig
    from legal_judge.benchmark.runner import run_benchmark
    from legal_judge.dataset import load_dataset, sample_dataset_path
    from legal_judge.judge.config import JudgeConfig
    from legal_judge.store import Store

    base = load_dataset(sample_dataset_path())
    items = [base[i % len(base)].model_copy(update={
        "id": f"b{i:06d}", "prompt": base[i % len(base)].prompt + f" [{i}]"}) for i in range(n_items)]
    config = EnsembleConfig(judges=[JudgeConfig(spec=s) for s in JUDGES], run_checks=False,
                            concurrency=64)
    # Two polls to end: `wait=False` polls once before it leaves, so phase 1 stays a pure submit.
    emu = ProviderEmulator(polls_to_end=2, shuffle_seed=1)
    calls = n_items * len(JUDGES)
    batched = n_items * 2
    async with emu.client() as client:
        store = Store(tmp / "batch.sqlite3")
        t0 = time.perf_counter()
        sub = await run_benchmark_batch(items, config, store=store, http_client=client,
                                        sleep=_no_wait, wait=False, run_id="bench-batch")
        t_submit = time.perf_counter() - t0
        store = Store(tmp / "batch.sqlite3")
        t0 = time.perf_counter()
        done = await run_benchmark_batch([], config, store=store, http_client=client,
                                         sleep=_no_wait, resume=True, run_id="bench-batch")
        t_merge = time.perf_counter() - t0
        batch_cost = store.get_run("bench-batch")["summary"]["cost_usd"]
        t0 = time.perf_counter()
        online = await run_benchmark(items, config, store=Store(tmp / "online.sqlite3"),
                                     http_client=client, use_cache=False, run_id="bench-online")
        t_online = time.perf_counter() - t0
        online_cost = Store(tmp / "online.sqlite3").get_run("bench-online")["summary"]["cost_usd"]
    upload_mb = sum(len(v) for k, v in emu.files.items() if k.startswith("file-")
                    and not k.startswith(("file-out", "file-err"))) / 1e6
    print(f"{n_items} items x {len(JUDGES)} judges = {calls} judge calls; batched: {batched} "
          f"(gpt-4o, claude-haiku-4-5), online: {calls - batched} (simulated)")
    print(f"submit  {t_submit:7.2f} s  {sub.batch_requests / t_submit:8.0f} batched requests/s "
          f"({sub.batches_submitted} batches, OpenAI upload {upload_mb:.1f} MB; includes the "
          f"online judge's {n_items} calls)")
    print(f"merge   {t_merge:7.2f} s  {batched / t_merge:8.0f} results/s  "
          f"(status {done.status}, {done.batches_collected} batches collected)")
    print(f"online  {t_online:7.2f} s  {calls / t_online:8.0f} calls/s (status {online.status}; "
          f"emulator answers instantly, real APIs are rate-limited)")
    print(f"cost    batch ${batch_cost:.4f}   online ${online_cost:.4f}   "
          f"ratio {batch_cost / online_cost:.3f}  (saved ${online_cost - batch_cost:.4f})")
    same = sum(done.results[i.id].scores == online.results[i.id].scores for i in items)
    print(f"results equal to the online run: {same}/{n_items} items")


async def audit_async(pairs: int, tmp: Path) -> None:
    """A batch audit against the online one: rounds, requests, coalesced calls, time, cost."""
    from legal_judge.audit.design import AuditSettings
    from legal_judge.audit.execute import run_audit
    from legal_judge.audit.target import JudgeTarget
    from legal_judge.batch.audit import run_audit_batch
    from legal_judge.batch.emulator import ProviderEmulator
    from legal_judge.dataset import load_dataset, sample_dataset_path
    from legal_judge.judge.config import JudgeConfig
    from legal_judge.judge.judge import Judge
    from legal_judge.providers.registry import get_provider
    from legal_judge.store import Store

    spec = "openai:gpt-4o"
    items = load_dataset(sample_dataset_path())
    settings = AuditSettings(dimensions=["position", "verbosity", "authority", "confidence"],
                             pairs=pairs, noise_pairs=20, seed=1)
    out = {}
    for mode in ("online", "batch"):
        emu = ProviderEmulator(polls_to_end=1)
        store = Store(tmp / f"audit-{mode}.sqlite3")
        async with emu.client() as client:
            judge = Judge(JudgeConfig(spec=spec), get_provider(spec, http_client=client),
                          store=store)
            target = JudgeTarget(judge)
            t0 = time.perf_counter()
            if mode == "online":
                res = await run_audit(target, items, settings, store=store, sync=False)
            else:
                res = await run_audit_batch(target, items, settings, store=store, sync=False,
                                            sleep=_no_wait, online_threshold=0)
            elapsed = time.perf_counter() - t0
            await target.aclose()
        out[mode] = (res, elapsed, emu)
    (online, t_on, emu_on), (batch, t_b, emu_b) = out["online"], out["batch"]
    info = batch.report["extensions"]["batch"]
    planned = batch.report["extensions"]["counts"]["calls_planned"]
    print(f"audit   {len(settings.dimensions or [])} dimensions x {pairs} pairs: {planned} judgments "
          f"planned; online {emu_on.calls['POST /v1/chat/completions']} calls in {t_on:.2f} s")
    print(f"        batch: {emu_b.calls['POST /v1/batches']} batch round(s), "
          f"{info['batch_requests']} requests, {info['calls_coalesced']} coalesced, "
          f"{t_b:.2f} s; cost ${info['cost_usd']:.4f} vs ${info['cost_usd_at_online_rates']:.4f} "
          f"online; report equal to online: "
          f"{batch.report['dimension_results'] == online.report['dimension_results']}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawTextHelpFormatter)
    parser.add_argument("--items", type=int, default=2000)
    parser.add_argument("--audit-pairs", type=int, default=60, help="batch audit size (0: skip)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        os.environ["LEGAL_JUDGE_HOME"] = tmp
        os.environ.setdefault("OPENAI_API_KEY", "sk-bench-not-a-key")
        os.environ.setdefault("ANTHROPIC_API_KEY", "sk-ant-bench-not-a-key")
        asyncio.run(main_async(args.items, Path(tmp)))
        if args.audit_pairs:
            asyncio.run(audit_async(args.audit_pairs, Path(tmp)))


if __name__ == "__main__":
    main()
