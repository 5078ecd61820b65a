"""One way into the Langfuse outbox, with typed entity kinds (issue 34, step 5).

Every producer queues through ``legal_judge.sync.outbox.enqueue``; the stored rows keep the kind
strings and payloads older versions wrote (a store queued before the change still delivers, and
one queued after can be delivered by the version before).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from legal_judge.debias.experiment import save_experiment
from legal_judge.store import Store
from legal_judge.sync.outbox import EntityKind, enqueue, kind_of
from legal_judge.sync.sink import annotation_sink, get_sink

PACKAGE = Path(__file__).parents[2] / "legal_judge"

#: (kind, id, payload) as the producers before the change stored them (sync/sink.py,
#: calibration/hooks.py, debias/experiment.py at 0228e7b).
STORED_BEFORE = [
    ("run", "run-1", {"run_id": "run-1"}),
    ("audit", "aud-1", {"audit_id": "aud-1"}),
    ("calibration", "cal-1", {"calibration_id": "cal-1", "quarter": "2026-Q3"}),
    ("human_labels", "run-1", {"run_id": "run-1"}),
    ("debias_experiment", "dbx-1", {"experiment_id": "dbx-1"}),
]


def _rows(store: Store) -> list[tuple[str, str, dict[str, object]]]:
    return [(r["entity_kind"], r["entity_id"], r["payload"]) for r in store.outbox_pending()]


def test_every_producer_stores_the_kinds_and_payloads_it_stored_before() -> None:
    store = Store()
    sink = get_sink()
    sink.enqueue_run(store, "run-1")
    sink.enqueue_audit(store, "aud-1")
    enqueue(store, EntityKind.CALIBRATION, "cal-1", quarter="2026-Q3")  # calibration.compare
    enqueue(store, EntityKind.HUMAN_LABELS, "run-1")  # calibration.labels
    save_experiment(store, {"id": "dbx-1", "judge": "j", "spec": "simulated:x",
                            "judge_ids": {"j": "jid"}, "settings": {}, "judge_id": "jid",
                            "created_at": "2026-12-03T00:00:00+00:00"})
    assert _rows(store) == STORED_BEFORE
    assert [k.value for k in EntityKind] == [k for k, _, _ in STORED_BEFORE]


def test_stored_kind_strings_read_back_typed_and_an_unknown_one_is_none() -> None:
    assert kind_of("human_labels") is EntityKind.HUMAN_LABELS
    assert kind_of("labels") is EntityKind.HUMAN_LABELS  # queued by older versions
    assert kind_of("something_newer") is None


def test_no_producer_writes_the_outbox_but_through_the_one_api() -> None:
    """Before: ``store.outbox_put`` in sync/sink.py, calibration/hooks.py and
    debias/experiment.py, and calibration/hooks.py found the sink with importlib."""
    writers, discovery = [], []
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(PACKAGE).as_posix()
        text = path.read_text()
        if ".outbox_put(" in text and rel not in ("store/outbox.py", "sync/outbox.py"):
            writers.append(rel)
        if "importlib" in text and re.search(r"[\"']legal_judge\.sync", text):
            discovery.append(rel)  # the sink found by name, which no reader or drawing sees
    assert writers == []
    assert not (PACKAGE / "calibration" / "hooks.py").exists() and discovery == []


def test_annotation_queues_come_from_the_sink_when_langfuse_is_configured(
        monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("LANGFUSE_PUBLIC_KEY", "LANGFUSE_SECRET_KEY", "LANGFUSE_HOST",
                 "LANGFUSE_BASE_URL"):
        monkeypatch.delenv(name, raising=False)
    assert annotation_sink() is None  # the CSV/JSONL sheet is the only channel
    monkeypatch.setenv("LANGFUSE_PUBLIC_KEY", "pk-lf-test")
    monkeypatch.setenv("LANGFUSE_SECRET_KEY", "sk-lf-test")
    monkeypatch.setenv("LANGFUSE_BASE_URL", "http://127.0.0.1:9")
    sink = annotation_sink()
    assert sink is not None and sink.deliver and callable(sink.create_annotation_queue)
