"""10,000 items x 3 judges through batches equal the online path on the same cached verdicts."""

from __future__ import annotations

from legal_judge.batch import BatchLimits, run_benchmark_batch
from legal_judge.batch.records import batch_rows
from legal_judge.dataset import load_dataset, sample_dataset_path
from legal_judge.ensemble_config import load_ensemble_config
from legal_judge.runner import run_benchmark
from legal_judge.store import Store

from .fakes import sim_factory

N = 10_000


async def test_ten_thousand_items_three_judges(sleeps) -> None:
    base = load_dataset(sample_dataset_path())
    # Copies of the sample under new ids: the simulated answers are computed once per distinct
    # request, which keeps the test fast while every item still has its own custom ids.
    items = [base[i % len(base)].model_copy(update={"id": f"big-{i:05d}"}) for i in range(N)]
    config = load_ensemble_config("demo").model_copy(update={"run_checks": False})
    factory = sim_factory(limits=BatchLimits(max_requests=4_000, max_bytes=200 * 1024 * 1024),
                          polls_to_end=2)
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
    online = await run_benchmark(base, config, store=store)
    assert online.progress.cached == 3 * len(base) and online.status == "completed"
    for i, item in enumerate(items):
        got = out.results[item.id].model_dump(exclude={"item_id"})
        assert got == online.results[base[i % len(base)].id].model_dump(exclude={"item_id"})
    assert sum(r.status == "ok" for r in out.results.values()) > N * 0.9
