"""10,000 items x 3 judges through batches equal the online path on the same cached verdicts."""

from __future__ import annotations

from legal_judge.batch import BatchLimits, run_benchmark_batch
from legal_judge.batch.records import batch_rows
from legal_judge.benchmark.ensemble_config import load_ensemble_config
from legal_judge.benchmark.runner import run_benchmark
from legal_judge.dataset import load_dataset, sample_dataset_path
from legal_judge.store import Store

from .fakes import sim_factory

N = 10_000
MARK = "[matter "


async def test_ten_thousand_items_three_judges(sleeps) -> None:
    base = load_dataset(sample_dataset_path())
    # Distinct items (identical ones would be coalesced into one request): the sample under new
    # ids, each prompt marked with its matter number. The fake answers a marked request as the
    # unmarked one, computed once, which keeps the test fast.
    items = [base[i % len(base)].model_copy(update={
        "id": f"big-{i:05d}", "prompt": f"{base[i % len(base)].prompt} {MARK}{i:05d}]"})
        for i in range(N)]
    config = load_ensemble_config("demo").model_copy(update={"run_checks": False})
    factory = sim_factory(limits=BatchLimits(max_requests=4_000, max_bytes=200 * 1024 * 1024),
                          polls_to_end=2, unmark=MARK)
    store = Store()
    out = await run_benchmark_batch(items, config, store=store, backend_factory=factory,
                                    sleep=sleeps, online_threshold=0)
    assert out.status == "completed" and len(out.results) == N
    assert out.batches_submitted == 9 and out.batch_requests == 3 * N  # 3 judges x (4k + 4k + 2k)
    rows = batch_rows(store, run_id=out.run_id, with_ids=False)
    assert sorted(r["meta"]["requests"] for r in rows) == [2_000] * 3 + [4_000] * 6
    assert {r["status"] for r in rows} == {"collected"}
    assert store.call_counts(out.run_id)["calls"] == 3 * N

    # The online path over the same store: every call is a cache hit of a batch answer.
    sample = items[::37]
    online = await run_benchmark(sample, config, store=store)
    assert online.progress.cached == 3 * len(sample) and online.status == "completed"
    for item in sample:
        got = out.results[item.id].model_dump()
        assert got == online.results[item.id].model_dump()
    assert sum(r.status == "ok" for r in out.results.values()) > N * 0.9
