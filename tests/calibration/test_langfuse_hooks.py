"""The Langfuse integration points: the annotation queue hook and the outbox write-back."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from legal_judge.calibration import compare, from_store, save_calibration
from legal_judge.errors import SyncError
from legal_judge.store import Store


class FakeSink:
    def __init__(self, fail: bool = False) -> None:
        self.calls: list[dict[str, Any]] = []
        self.fail = fail

    def create_annotation_queue(self, **kwargs: Any) -> str:
        self.calls.append(kwargs)
        if self.fail:
            raise SyncError("Langfuse unreachable", fix="legal-judge sync later")
        return "queue-123"


def _install(monkeypatch: pytest.MonkeyPatch, sink: FakeSink | None) -> None:
    # The command asks legal_judge.sync.sink.annotation_sink (no importlib discovery any more).
    monkeypatch.setattr("legal_judge.sync.sink.annotation_sink", lambda: sink)


def test_sample_creates_an_annotation_queue(invoke: Any, store: Store, make_run: Any,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    make_run(store, "r1", n_items=8)
    sink = FakeSink()
    _install(monkeypatch, sink)
    res = invoke("calibrate", "sample", "r1", "--n", "5", "--seed", "1")
    assert res.exit_code == 0, res.output
    assert "Langfuse annotation queue: queue-123" in res.output
    call = sink.calls[0]
    assert call["run_id"] == "r1" and len(call["trace_seeds"]) == 5
    assert all(s.startswith("r1:item-") for s in call["trace_seeds"])
    hall = next(r for r in call["rubrics"] if r["name"] == "hallucination")
    assert hall == {"name": "hallucination", "kind": "categorical",
                    "scale": ["clean", "uncertain", "hallucinated"]}
    assert Path("r1-calibration.csv").is_file()
    invoke("calibrate", "sample", "r1", "--n", "5", "--no-langfuse-queue")
    assert len(sink.calls) == 1


def test_a_langfuse_outage_keeps_the_template(invoke: Any, store: Store, make_run: Any,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    make_run(store, "r1", n_items=8)
    _install(monkeypatch, FakeSink(fail=True))
    res = invoke("calibrate", "sample", "r1", "--n", "5")
    assert res.exit_code == 0 and "annotation queue not created" in res.output
    assert Path("r1-calibration.csv").is_file()


def test_no_sink_configured(invoke: Any, store: Store, make_run: Any,
                            monkeypatch: pytest.MonkeyPatch) -> None:
    make_run(store, "r1", n_items=8)
    _install(monkeypatch, None)
    res = invoke("calibrate", "sample", "r1", "--n", "5")
    assert res.exit_code == 0 and "annotation queue" not in res.output


def test_calibration_is_queued_for_langfuse(store: Store, make_run: Any, tmp_path: Path) -> None:
    make_run(store, "r1", n_items=6)
    f = tmp_path / "l.csv"
    f.write_text("item_id,rubric,score,annotator,labeled_at\n"
                 + "".join(f"item-00{i},completeness,{i % 5},ann,2026-10-01\n" for i in range(6)))
    from legal_judge.calibration import import_labels, rubric_specs

    import_labels(store, f, rubric_specs()[1])
    report = save_calibration(store, compare(from_store(store, "r1"), quarter="2026-Q4"))
    pending = {(p["entity_kind"], p["entity_id"]): p["payload"] for p in store.outbox_pending()}
    assert pending[("calibration", report.calibration_id)] == {
        "calibration_id": report.calibration_id, "quarter": "2026-Q4"}
    assert ("human_labels", "r1") in pending
    # the shape the Langfuse sync's calibration plan reads scores from
    assert set(report.per_rubric) == {"completeness"}
    assert "ensemble.mean_divergence" in report.per_rubric["completeness"]
