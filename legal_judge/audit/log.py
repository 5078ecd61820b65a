"""The append-only, hash-chained audit log (table ``audit_log``).

Every entry's hash is ``sha256(prev_hash + "\\n" + canonical_json({seq, audit_id, kind, created_at,
payload}))``: it covers the previous entry's hash and the entry's own canonical content, including its
sequence number. Editing an entry breaks its hash; deleting, inserting or reordering entries breaks
the chain (the sequence or the ``prev_hash`` link). Deleting entries at the very end of the log leaves
a shorter valid chain, which only an anchor kept elsewhere detects: :meth:`AuditLog.verify` takes the
head hash a previous verification printed (``--expect-head``) and checks that it is still in the chain.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from typing import Any

from legal_judge.store import Store, canonical_json, utcnow

__all__ = ["GENESIS", "AuditLog", "LogEntry", "VerifyResult", "entry_hash", "report_digest"]

GENESIS = "0" * 64


@dataclass(frozen=True)
class LogEntry:
    """One log entry as stored."""

    seq: int
    audit_id: str
    kind: str
    payload: dict[str, Any]
    prev_hash: str
    hash: str
    created_at: str


@dataclass
class VerifyResult:
    """The outcome of a verification: ``ok`` and every problem found."""

    ok: bool
    entries: int
    head: str
    problems: list[str] = field(default_factory=list)


def entry_hash(prev_hash: str, *, seq: int, audit_id: str, kind: str, created_at: str,
               payload_json: str) -> str:
    """The hash of one entry (the payload as its stored canonical JSON text)."""
    body = canonical_json({"seq": seq, "audit_id": audit_id, "kind": kind,
                           "created_at": created_at, "payload": json.loads(payload_json)})
    return hashlib.sha256(f"{prev_hash}\n{body}".encode()).hexdigest()


def report_digest(report: dict[str, Any]) -> str:
    """The sha256 of a report's canonical JSON: what its ``audit_finished`` entry records (the
    stored report is that JSON; a report file read back gives the same digest unless edited)."""
    return hashlib.sha256(canonical_json(report).encode()).hexdigest()


class AuditLog:
    """Append and verify; there is no update or delete method on purpose."""

    def __init__(self, store: Store) -> None:
        self.store = store

    def append(self, audit_id: str, kind: str, payload: dict[str, Any]) -> LogEntry:
        """Append one entry in its own transaction."""
        return self.append_many(audit_id, [(kind, payload)])[-1]

    def append_many(self, audit_id: str, entries: list[tuple[str, dict[str, Any]]]) -> list[LogEntry]:
        """Append entries in one transaction (chained in the given order); inside the caller's
        open transaction, with the rows they describe, when one is open."""
        out: list[LogEntry] = []
        with self.store.transaction():
            last = self.store.audit_log.last()
            seq, prev = last if last is not None else (0, GENESIS)
            for kind, payload in entries:
                seq += 1
                created = utcnow()
                text = canonical_json(payload)
                h = entry_hash(prev, seq=seq, audit_id=audit_id, kind=kind, created_at=created,
                               payload_json=text)
                self.store.audit_log.insert(seq=seq, audit_id=audit_id, kind=kind,
                                            payload_json=text, prev_hash=prev, hash=h,
                                            created_at=created)
                out.append(LogEntry(seq, audit_id, kind, payload, prev, h, created))
                prev = h
        return out

    def entries(self, audit_id: str | None = None, *, kind: str | None = None) -> list[LogEntry]:
        """Entries in chain order, optionally of one audit and one kind."""
        rows = self.store.audit_log.rows(audit_id, kind=kind)
        return [LogEntry(r["seq"], r["audit_id"], r["kind"], json.loads(r["payload_json"]),
                         r["prev_hash"], r["hash"], r["created_at"]) for r in rows]

    def finished_report(self, audit_id: str) -> LogEntry | None:
        """The audit's last ``audit_finished`` entry (its payload's ``report_sha256`` is the
        digest of the report it stored), or None when it logged none."""
        done = self.entries(audit_id, kind="audit_finished")
        return done[-1] if done else None

    def head(self) -> str:
        """The hash of the last entry (GENESIS for an empty log): the anchor to keep elsewhere."""
        last = self.store.audit_log.last()
        return last[1] if last is not None else GENESIS

    def verify(self, *, expect_head: str | None = None) -> VerifyResult:
        """Recompute the whole chain; report every edited, missing, inserted or reordered entry.

        Args:
            expect_head: A head hash recorded earlier; it must still be an entry of the chain
                (catches entries deleted from the end, and a rewritten chain).
        """
        rows = self.store.audit_log.stored_order()
        problems: list[str] = []
        prev, expected_seq = GENESIS, 1
        hashes: set[str] = set()
        for r in rows:
            seq = int(r["seq"])
            if seq != expected_seq:
                problems.append(f"entry {seq}: expected sequence number {expected_seq} "
                                "(an entry was deleted, inserted or moved)")
            if r["prev_hash"] != prev:
                problems.append(f"entry {seq}: does not link to the previous entry's hash")
            try:
                recomputed = entry_hash(r["prev_hash"], seq=seq, audit_id=r["audit_id"],
                                        kind=r["kind"], created_at=r["created_at"],
                                        payload_json=r["payload_json"])
            except (ValueError, TypeError):
                recomputed = ""
            if recomputed != r["hash"]:
                problems.append(f"entry {seq}: content does not match its hash (edited)")
            hashes.add(str(r["hash"]))
            prev, expected_seq = str(r["hash"]), seq + 1
        if expect_head is not None and expect_head != GENESIS and expect_head not in hashes:
            problems.append(f"the expected head {expect_head[:16]}... is not in the log "
                            "(entries were removed from the end, or the chain was rewritten)")
        return VerifyResult(ok=not problems, entries=len(rows), head=prev, problems=problems)
