"""One transaction over several tables' methods: a nested transaction is a savepoint of the outer.

Callers outside the store write several tables all or nothing through the tables' own methods
(an audit's row and its log entries; labels, comments and their outbox rows) by opening
``store.transaction()`` around them; the methods open their own transactions inside it.
"""

from __future__ import annotations

import pytest

from legal_judge.audit.log import AuditLog
from legal_judge.store import Store


def test_methods_inside_one_transaction_commit_or_roll_back_together(store_target: str) -> None:
    store = Store(store_target)
    with pytest.raises(RuntimeError), store.transaction():
        store.audits.start("a1", judge_id="j", config={})
        AuditLog(store).append_many("a1", [("audit_started", {"n": 1})])
        store.outbox_put("audit", "a1", {"audit_id": "a1"})  # opens its own transaction inside
        raise RuntimeError("killed while starting")
    assert store.audits.get("a1") is None
    assert AuditLog(store).entries() == []
    assert store.outbox_status() == {"pending": 0, "delivered": 0}

    with store.transaction():
        store.audits.start("a2", judge_id="j", config={})
        AuditLog(store).append_many("a2", [("audit_started", {"n": 1})])
        store.outbox_put("audit", "a2", {"audit_id": "a2"})
    assert store.audits.get("a2") is not None
    assert [e.kind for e in AuditLog(store).entries("a2")] == ["audit_started"]
    assert store.outbox_status()["pending"] == 1
    assert AuditLog(store).verify().ok


def test_a_failed_inner_transaction_rolls_back_alone(store_target: str) -> None:
    store = Store(store_target)
    with store.transaction():
        store.outbox_put("audit", "kept", {})
        with pytest.raises(RuntimeError), store.transaction():
            store.outbox_put("audit", "dropped", {})
            raise RuntimeError("inner failure, handled by the caller")
    assert [r["entity_id"] for r in store.outbox_pending()] == ["kept"]
    assert not store.db.in_transaction
