"""Item 8: any edit, deletion, insertion or reordering of the audit log is detected by verification.

Hypothesis builds a log of random entries and applies one random tamper operation straight in SQLite
(as someone with the file would). ``AuditLog.verify(expect_head=<head printed earlier>)`` must fail
for every operation, including a rewrite that recomputes every hash after the edit; without the
anchor, everything except dropping entries from the very end (or a full rewrite) is still detected.
The CLI (``audit verify-log --expect-head``) is checked on one example of each kind.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from legal_judge.audit.log import GENESIS, AuditLog, entry_hash
from legal_judge.cli import cli
from legal_judge.store import Store, canonical_json

JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers(-10**6, 10**6) | st.text(max_size=12),
    lambda children: st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=6), children,
                                                                      max_size=3),
    max_leaves=8)
PAYLOADS = st.dictionaries(st.text(min_size=1, max_size=8), JSON_VALUES, min_size=1, max_size=4)
ENTRIES = st.lists(st.tuples(st.sampled_from(["audit_started", "dimension_result", "audit_finished",
                                              "review"]), PAYLOADS), min_size=2, max_size=8)
COLUMNS = ("audit_id", "kind", "payload_json", "created_at", "prev_hash", "hash")


def _build(store: Store, entries: list[tuple[str, dict[str, Any]]]) -> str:
    log = AuditLog(store)
    for k, (kind, payload) in enumerate(entries):
        log.append(f"audit-{k % 3}", kind, payload)
    return log.head()


def _rows(store: Store) -> list[dict[str, Any]]:
    return [dict(r) for r in store.db.execute("SELECT * FROM audit_log ORDER BY seq")]


def _rewrite_chain(store: Store) -> None:
    """What a careful forger does after an edit: recompute every link and hash."""
    prev = GENESIS
    for r in _rows(store):
        h = entry_hash(prev, seq=r["seq"], audit_id=r["audit_id"], kind=r["kind"],
                       created_at=r["created_at"], payload_json=r["payload_json"])
        store.db.execute("UPDATE audit_log SET prev_hash = ?, hash = ? WHERE seq = ?",
                         (prev, h, r["seq"]))
        prev = h


def _changed(column: str, old: str, draw: Any, *, valid_json: bool) -> str:
    if column == "payload_json":
        payload = json.loads(old)
        new = draw(PAYLOADS.filter(lambda p: p != payload))
        if valid_json or draw(st.booleans()):  # a forger who rehashes must write valid JSON
            return canonical_json(new)
        return draw(st.text(min_size=1, max_size=20))
    return draw(st.text(min_size=1, max_size=70).filter(lambda v: v != old))


def _tamper(store: Store, draw: Any) -> str:
    rows = _rows(store)
    n = len(rows)
    op = draw(st.sampled_from(["edit", "edit+rewrite", "delete", "insert", "swap", "renumber"]))
    i = draw(st.integers(0, n - 1))
    seq = rows[i]["seq"]
    db = store.db
    if op.startswith("edit"):
        column = draw(st.sampled_from(COLUMNS if op == "edit" else COLUMNS[:4]))
        db.execute(f"UPDATE audit_log SET {column} = ? WHERE seq = ?",  # noqa: S608
                   (_changed(column, rows[i][column], draw, valid_json=op != "edit"), seq))
        if op == "edit+rewrite":
            _rewrite_chain(store)
    elif op == "delete":
        db.execute("DELETE FROM audit_log WHERE seq = ?", (seq,))
    elif op == "insert":  # make room at seq, then a forged entry linked to its predecessor
        for r in reversed(rows[i:]):
            db.execute("UPDATE audit_log SET seq = seq + 1 WHERE seq = ?", (r["seq"],))
        prev = rows[i]["prev_hash"]
        payload = canonical_json(draw(PAYLOADS))
        h = entry_hash(prev, seq=seq, audit_id="forged", kind="review", created_at="2026-01-01",
                       payload_json=payload)
        db.execute("INSERT INTO audit_log (seq, audit_id, kind, payload_json, prev_hash, hash,"
                   " created_at) VALUES (?, 'forged', 'review', ?, ?, ?, '2026-01-01')",
                   (seq, payload, prev, h))
    elif op == "swap":  # two entries exchange places (their contents move, the seqs stay)
        j = draw(st.integers(0, n - 1).filter(lambda j: j != i))
        a, b = rows[i], rows[j]
        for src, dst in ((a, b), (b, a)):
            db.execute("UPDATE audit_log SET audit_id = ?, kind = ?, payload_json = ?, prev_hash = ?,"
                       " hash = ?, created_at = ? WHERE seq = ?",
                       (*(src[c] for c in COLUMNS[:2]), src["payload_json"], src["prev_hash"],
                        src["hash"], src["created_at"], dst["seq"]))
    else:  # renumber: move an entry to the end of the table
        db.execute("UPDATE audit_log SET seq = ? WHERE seq = ?", (rows[-1]["seq"] + 1, seq))
    return op


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(entries=ENTRIES, data=st.data())
def test_every_tamper_is_detected(entries: list[tuple[str, dict[str, Any]]], data: Any) -> None:
    store = Store(Path(":memory:"))
    head = _build(store, entries)
    assert AuditLog(store).verify(expect_head=head).ok
    before = _rows(store)
    op = _tamper(store, data.draw)
    if _rows(store) == before:  # e.g. a swap of identical entries: nothing changed
        return
    result = AuditLog(store).verify(expect_head=head)
    assert not result.ok and result.problems, op
    tail_delete = op == "delete" and len(_rows(store)) == len(before) - 1 and all(
        a == b for a, b in zip(_rows(store), before, strict=False))
    if not tail_delete and op != "edit+rewrite":
        assert not AuditLog(store).verify().ok, op  # detected even without the anchor


def _cli_verify(home: Path, head: str) -> tuple[int, str]:
    result = CliRunner().invoke(cli, ["audit", "verify-log", "--expect-head", head],
                                env={"LEGAL_JUDGE_HOME": str(home)})
    return result.exit_code, result.output


@pytest.mark.parametrize("op", ["edit", "delete-last", "insert", "swap", "rewrite"])
def test_verify_log_cli_exits_1_on_tampering(op: str, tmp_path: Path) -> None:
    store = Store(tmp_path / "store.sqlite3")
    head = _build(store, [("audit_started", {"judge": "j"}), ("dimension_result", {"d": 0.4}),
                          ("audit_finished", {"severity": "high"})])
    assert _cli_verify(tmp_path, head) == (0, _cli_verify(tmp_path, head)[1])
    db = store.db
    if op == "edit":
        db.execute("UPDATE audit_log SET payload_json = '{\"severity\":\"none\"}' WHERE seq = 3")
    elif op == "delete-last":
        db.execute("DELETE FROM audit_log WHERE seq = 3")
    elif op == "insert":
        db.execute("UPDATE audit_log SET seq = 4 WHERE seq = 3")
        db.execute("INSERT INTO audit_log VALUES (3, 'x', 'review', '{}', 'p', 'h', '2026')")
    elif op == "swap":
        db.execute("UPDATE audit_log SET seq = 9 WHERE seq = 1")
        db.execute("UPDATE audit_log SET seq = 1 WHERE seq = 2")
        db.execute("UPDATE audit_log SET seq = 2 WHERE seq = 9")
    else:
        db.execute("UPDATE audit_log SET payload_json = '{\"severity\":\"none\"}' WHERE seq = 3")
        _rewrite_chain(store)
    store.close()
    code, output = _cli_verify(tmp_path, head)
    assert code == 1, output
    assert "not intact" in output
