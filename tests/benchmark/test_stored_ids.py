"""Stored ids survive the one item pipeline and the one ensemble identity (issue 34, steps 4-6).

``tests/data/seam_ids/ids.json`` holds what the code before the change (0228e7b) stored for six
demo items (``generate.py`` beside it wrote it): the run's ensemble id, each judge's id, every
verdict's cache key and every provider-cache key. Today's code must store the same ones, and runs
and calibrations must name the ensemble alike, on stored configs of every age.
"""

from __future__ import annotations

import asyncio
import importlib.util
import json
from pathlib import Path
from typing import Any

import pytest

from legal_judge.benchmark.ensemble_config import ensemble_judge_id, load_ensemble_config
from legal_judge.benchmark.runner import run_benchmark
from legal_judge.calibration.data import ENSEMBLE, from_store
from legal_judge.dataset import load_dataset, sample_dataset_path
from legal_judge.store import Store

# The module's one store is a SQLite file (generate.py reads the file); the ids do not depend on
# the backend, and the rerun below would find its run id taken by a second pass.
pytestmark = pytest.mark.sqlite_only("one module store, read as a SQLite file")

BEFORE: dict[str, Any] = json.loads(
    (Path(__file__).parents[1] / "data" / "seam_ids" / "ids.json").read_text())


def _generator() -> Any:
    """``generate.py``, which wrote ``ids.json``: its reading of a store is the test's."""
    path = Path(__file__).parents[1] / "data" / "seam_ids" / "generate.py"
    spec = importlib.util.spec_from_file_location("seam_ids_generate", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def written(tmp_path_factory: pytest.TempPathFactory) -> tuple[Store, dict[str, Any]]:
    """The six items judged by today's code, under the run id the old store has."""
    items = load_dataset(sample_dataset_path())[:len(BEFORE["item_ids"])]
    assert [i.id for i in items] == BEFORE["item_ids"]
    store = Store(tmp_path_factory.mktemp("ids") / "store.sqlite3")
    asyncio.run(run_benchmark(items, load_ensemble_config("demo"), store=store,
                              run_id=BEFORE["run_id"]))
    return store, _generator().stored_ids(store.path, BEFORE["run_id"])


def test_a_run_stores_the_ids_the_code_before_stored(
        written: tuple[Store, dict[str, Any]]) -> None:
    _, now = written
    assert now["judge_id"] == BEFORE["judge_id"]
    assert now["judge_ids"] == BEFORE["judge_ids"]
    assert now["verdicts"] == BEFORE["verdicts"]  # judge ids and verdict-cache keys
    assert now["provider_cache_keys"] == BEFORE["provider_cache_keys"]


def test_runs_and_calibrations_name_the_ensemble_alike(
        written: tuple[Store, dict[str, Any]]) -> None:
    store, _ = written
    config = store.get_run(BEFORE["run_id"])["config"]
    # The calibration's side (what it reads back) and the run's (what it computes) agree.
    assert from_store(store, BEFORE["run_id"]).judge_ids[ENSEMBLE] == BEFORE["judge_id"]
    assert ensemble_judge_id(config) == BEFORE["calibration_ensemble_id"] == BEFORE["judge_id"]
    assert ensemble_judge_id(config, fresh=True) == BEFORE["judge_id"]


def test_a_run_stored_without_its_id_keeps_the_key_its_calibrations_used() -> None:
    # Runs stored before the runner recorded an id: members only, as calibrations keyed them.
    legacy = {"ensemble": {"judges": []}, "judge_ids": BEFORE["judge_ids"]}
    assert ensemble_judge_id(legacy) == BEFORE["fallback_ensemble_id"]
    assert ensemble_judge_id({}, BEFORE["judge_ids"]) == BEFORE["fallback_ensemble_id"]
    assert BEFORE["fallback_ensemble_id"] != BEFORE["judge_id"]


def test_a_rerun_reads_every_verdict_from_the_cache_the_store_holds(
        written: tuple[Store, dict[str, Any]]) -> None:
    store, _ = written
    items = load_dataset(sample_dataset_path())[:len(BEFORE["item_ids"])]
    again = asyncio.run(run_benchmark(items, load_ensemble_config("demo"), store=store,
                                      run_id="run-seam-ids-again"))
    assert again.progress.cached == len(BEFORE["verdicts"]) and again.progress.calls == 0
    assert store.get_run("run-seam-ids-again")["config"]["judge_id"] == BEFORE["judge_id"]
