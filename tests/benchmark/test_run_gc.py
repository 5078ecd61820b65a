"""A run judges with fewer young-generation collections (most of a judged call's allocations are
freed by reference counting; collecting every 700 cost about 14% of a run's CPU), and leaves the
caller's garbage-collector setting as it found it, also when the run fails."""

from __future__ import annotations

import asyncio
import gc
from collections.abc import Iterator

import pytest

from legal_judge.benchmark.ensemble_config import load_ensemble_config
from legal_judge.benchmark.run_setup import GC_YOUNG_THRESHOLD
from legal_judge.benchmark.runner import run_benchmark
from legal_judge.dataset import load_dataset, sample_dataset_path
from legal_judge.store import Store


@pytest.fixture
def callers_setting() -> Iterator[tuple[int, int, int]]:
    old = gc.get_threshold()
    gc.set_threshold(900, 11, 12)
    yield (900, 11, 12)
    gc.set_threshold(*old)


def test_a_run_collects_young_garbage_less_often_and_restores_the_setting(
        callers_setting: tuple[int, int, int]) -> None:
    items = load_dataset(sample_dataset_path())[:3]
    seen: list[tuple[int, int, int]] = []
    out = asyncio.run(run_benchmark(items, load_ensemble_config("demo"), store=Store(),
                                    run_id="gc", on_progress=lambda p: seen.append(
                                        gc.get_threshold())))
    assert out.status == "completed" and len(seen) >= 12  # 9 verdicts and 3 items
    assert set(seen) == {(GC_YOUNG_THRESHOLD, 11, 12)}
    assert gc.get_threshold() == callers_setting


def test_a_failed_run_restores_the_setting_too(callers_setting: tuple[int, int, int]) -> None:
    items = load_dataset(sample_dataset_path())[:3]

    def boom(progress: object) -> None:
        raise RuntimeError("a progress callback fails")

    with pytest.raises(RuntimeError):
        asyncio.run(run_benchmark(items, load_ensemble_config("demo"), store=Store(),
                                  run_id="gc-fail", on_progress=boom))
    assert gc.get_threshold() == callers_setting
