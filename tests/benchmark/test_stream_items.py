"""Issue 18 item 4: a run streams its items; the dataset is validated in one pass that keeps none.

A 100,000-item run held every item (about 9 KB each) before its first call: the loaded list, the
run's list, a queue of all of them. Now a generator is read once, as the run stores it, and the
workers read the stored items back in chunks.
"""

from __future__ import annotations

import asyncio
import gc
import weakref
from collections.abc import Iterator
from pathlib import Path

import pytest

from legal_judge.benchmark.ensemble_config import EnsembleConfig, load_ensemble_config
from legal_judge.benchmark.pipeline import RunProgress
from legal_judge.benchmark.runner import run_benchmark
from legal_judge.dataset import load_dataset, sample_dataset_path
from legal_judge.errors import ConfigError, InputError, Problem
from legal_judge.models import BenchmarkItem
from legal_judge.store import Store

N = 300


def test_a_run_over_a_generator_never_holds_its_items(tmp_path: Path) -> None:
    base = load_dataset(sample_dataset_path())
    made: list[weakref.ref[BenchmarkItem]] = []
    pulled = 0

    def items() -> Iterator[BenchmarkItem]:
        nonlocal pulled
        for i in range(N):
            item = base[i % len(base)].model_copy(update={"id": f"g{i:04d}",
                                                          "prompt": f"{base[i % len(base)].prompt} [{i}]"})
            made.append(weakref.ref(item))
            pulled += 1
            yield item

    alive_at_first_verdict: list[int] = []

    def on_progress(_: RunProgress) -> None:
        if not alive_at_first_verdict:
            gc.collect()
            alive_at_first_verdict.append(sum(r() is not None for r in made))

    store = Store(tmp_path / "s.sqlite3")
    outcome = asyncio.run(run_benchmark(items(), load_ensemble_config("demo"), store=store,
                                        run_id="gen", on_progress=on_progress))
    assert outcome.status == "completed"
    assert pulled == N and len(outcome.results) == N and outcome.progress.items_total == N
    # Every item was pulled (and stored) before the first call, yet none of them is still held:
    # the workers judge the items read back from the store.
    assert alive_at_first_verdict == [0]
    assert [i["id"] for i in store.iter_items("gen")] == [f"g{i:04d}" for i in range(N)]
    store.close()


def test_a_generator_refused_midway_stores_nothing(tmp_path: Path) -> None:
    """A generator's family checks are made as it is stored, and its defects surface as it is
    read: a refusal or a defect on the fourth item rolls the whole run back."""
    config = EnsembleConfig.model_validate({"name": "one", "quorum": 1, "judges": [
        {"spec": "simulated:demo-openai"}]})
    base = load_dataset(sample_dataset_path())[:6]
    same = [i.model_copy(update={"system_under_test": "gpt-4o-mini" if k == 3 else None})
            for k, i in enumerate(base)]
    store = Store(tmp_path / "s.sqlite3")
    with pytest.raises(ConfigError) as refused:
        asyncio.run(run_benchmark(iter(same), config, store=store, run_id="fam"))
    assert refused.value.code == "ensemble-same-family-single"

    def broken() -> Iterator[BenchmarkItem]:
        yield from same[:3]
        raise InputError([Problem("bench.jsonl", 4, "response", "Field required")])

    with pytest.raises(InputError):
        asyncio.run(run_benchmark(broken(), config, store=store, run_id="bad"))
    assert store.list_runs() == [] and store.item_keys() == []
    store.close()


BROKEN = [
    ("mixed.jsonl", b'{"id": "a", "prompt": "p", "response": "r"}\n'
                    b'{"id": "b", "prompt": "p"}\n\n'
                    b'not json\n'
                    b'{"id": "a", "prompt": "p", "response": "r"}\n'
                    b'{"id": "c\\u0007", "prompt": "p", "response": "r"}\n'
                    b'\xff\xfe{"id": "d"}\n'
                    b'{"id": "e", "prompt": "p", "response": "r\x00"}\n'
                    b'{"id": "f", "prompt": "p", "response": "r", "colour": 1}\n'
                    b'[1, 2]\n'
                    b'{"id": "g", "prompt": "p", "response": "r", '
                    b'"metadata": {"expected_pass": "maybe"}}\n'),
    ("empty.jsonl", b"  \n\n"),
    ("blank-rows.jsonl", b"\xef\xbb\xbf\n"),
    ("deep.jsonl", b"[" * 100_000 + b"\n"),
]


@pytest.mark.parametrize(("name", "data"), BROKEN, ids=[b[0] for b in BROKEN])
def test_the_stream_reports_every_defect_load_dataset_reports(tmp_path: Path, name: str,
                                                              data: bytes) -> None:
    from legal_judge.dataset.stream import DatasetStream

    path = tmp_path / name
    path.write_bytes(data)
    with pytest.raises(InputError) as whole:
        load_dataset(path)
    with pytest.raises(InputError) as streamed:
        DatasetStream(path).validate()
    assert streamed.value.problems == whole.value.problems
    assert str(streamed.value) == str(whole.value)


def test_the_stream_reads_what_load_dataset_reads(tmp_path: Path) -> None:
    from legal_judge.dataset.stream import DatasetStream

    path = tmp_path / "ok.jsonl"
    rows = [i.model_dump_json() for i in load_dataset(sample_dataset_path())]
    path.write_bytes(b"\xef\xbb\xbf" + "\r\n".join(rows).encode() + b"\n\n")
    stream = DatasetStream(path)
    assert stream.validate() == len(rows)
    assert list(stream) == load_dataset(path) == list(stream)  # read again by every iteration
    missing = DatasetStream(tmp_path / "nope.jsonl")
    with pytest.raises(InputError) as gone:
        missing.validate()
    with pytest.raises(InputError) as whole:
        load_dataset(tmp_path / "nope.jsonl")
    assert str(gone.value) == str(whole.value) and gone.value.fix == whole.value.fix


def test_a_run_reads_its_dataset_file_once_after_validating_it(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Validating the file, then storing its items: two passes. A third, to check the judges'
    families before the run existed, cost a cached rerun a tenth of its time; the checks are
    made as the items are stored, and a refusal still leaves no run."""
    from legal_judge.dataset.stream import DatasetStream, stream_dataset

    path = tmp_path / "bench.jsonl"
    base = load_dataset(sample_dataset_path())[:6]
    path.write_text("".join(i.model_dump_json() + "\n" for i in base))
    passes = 0
    lines = DatasetStream._lines

    def counted(self: DatasetStream) -> Iterator[BenchmarkItem]:
        nonlocal passes
        passes += 1
        yield from lines(self)

    monkeypatch.setattr(DatasetStream, "_lines", counted)
    store = Store(tmp_path / "s.sqlite3")
    outcome = asyncio.run(run_benchmark(stream_dataset(path), load_ensemble_config("demo"),
                                        store=store, run_id="once"))
    assert outcome.status == "completed" and len(outcome.results) == 6
    assert passes == 2  # stream_dataset's validation, and the run storing the items

    same = tmp_path / "same.jsonl"
    same.write_text("".join(i.model_copy(update={"system_under_test": "gpt-4o-mini"})
                            .model_dump_json() + "\n" for i in base))
    config = EnsembleConfig.model_validate({"name": "one", "quorum": 1, "judges": [
        {"spec": "simulated:demo-openai"}]})
    for source in (stream_dataset(same), list(stream_dataset(same))):
        with pytest.raises(ConfigError) as refused:
            asyncio.run(run_benchmark(source, config, store=store, run_id="fam"))
        assert refused.value.code == "ensemble-same-family-single"
    assert [r["id"] for r in store.list_runs()] == ["once"]
    store.close()
