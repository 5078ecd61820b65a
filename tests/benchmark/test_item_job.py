"""The one item pipeline takes one explicit job object (issue 34, step 4).

Before, judging an item read 19 members back from ``RunState`` through a protocol
(``item_judging.JudgedRun``); an :class:`~legal_judge.benchmark.pipeline.ItemJob` now carries all
of them, so the pipeline can be driven without a run's lifecycle and decides as a run does.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from legal_judge.assets.catalogue import load_assets
from legal_judge.benchmark.ensemble import EnsemblePolicy, JudgeSlot
from legal_judge.benchmark.ensemble_config import load_ensemble_config
from legal_judge.benchmark.pipeline import ItemJob, judge_item, settle_cached
from legal_judge.benchmark.run_setup import build_judges
from legal_judge.benchmark.runner import plan_run, run_benchmark
from legal_judge.dataset import load_dataset, sample_dataset_path
from legal_judge.store import Store

IDS = ("us-fed-004", "gb-ews-005")


def _job(store: Store, run_id: str) -> ItemJob:
    config = load_ensemble_config("demo")
    judges = build_judges(config, store, use_cache=True)
    assets = load_assets()
    family = plan_run([], config, store=store).sut_family  # the run's own family lookup
    return ItemJob(store=store, run_id=run_id, judges=judges,
                   slots=[JudgeSlot(j.label, j.family, j.config.weight) for j in judges],
                   policy=EnsemblePolicy(quorum=config.quorum,
                                         other_family_min_share=config.other_family_min_share),
                   rubric_set=assets.rubric_set(config.rubric_set),
                   severity=assets.rubric("hallucination").severity or [],
                   sut_family=family, calls=asyncio.Semaphore(4))


def _decision(result: dict[str, Any]) -> tuple[Any, ...]:
    return result["status"], result["overall"], result["scores"], result.get("rules")


def test_an_item_job_alone_decides_and_stores_an_item_as_a_run_does(tmp_path: Path) -> None:
    items = [i for i in load_dataset(sample_dataset_path()) if i.id in IDS]
    run_store = Store(tmp_path / "run.sqlite3")
    asyncio.run(run_benchmark(items, load_ensemble_config("demo"), store=run_store, run_id="r"))

    store = Store(tmp_path / "job.sqlite3")
    store.create_run("j", kind="run", config={}, items=[i.model_dump() for i in items])
    job = _job(store, "j")
    for item in items:
        asyncio.run(judge_item(job, item))
    assert job.progress.items_done == 2 and job.progress.calls >= 6
    assert job.progress.cached == 0
    assert ({k: _decision(v) for k, v in store.load_results("j").items()}
            == {k: _decision(v) for k, v in run_store.load_results("r").items()})

    # A second job on the same store finds every verdict cached: settled, nothing left over.
    store.create_run("j2", kind="run", config={}, items=[i.model_dump() for i in items])
    again = _job(store, "j2")
    rest = asyncio.run(settle_cached(again, items))
    assert rest == [] and again.progress.cached == 6 and again.progress.items_done == 2
    assert ({k: _decision(v) for k, v in store.load_results("j2").items()}
            == {k: _decision(v) for k, v in store.load_results("j").items()})
