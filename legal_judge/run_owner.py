"""Who is executing a run or an audit, and whether that process is still there.

A run (or audit) row says ``running`` from the moment it is created until its process finishes
it. A process that is killed (``kill -9``, a CI timeout, an out-of-memory kill, a closed laptop)
never gets to finish it, so the row alone cannot tell a live run from a dead one. The owning
process is recorded with the row (pid, host, a heartbeat every few seconds, ``m005_run_owner``
for runs, ``m007_audit_owner`` for audits), and a ``running`` one is shown ``interrupted``, with
its resume command, once its owner is gone:

- on this host, the owner is gone when its pid no longer exists (or its heartbeat stopped long
  ago: the pid was reused);
- on another host (a store on a shared disk), when its heartbeat stopped long ago;
- a run never claimed by a process (a store written before owners were recorded) has no live
  owner.
"""

from __future__ import annotations

import os
import socket
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from legal_judge.errors import ConfigError
from legal_judge.store import OwnedKind, Store

__all__ = ["HEARTBEAT_S", "STALE_AFTER_S", "RunOwner", "audit_resume_command", "displayed_status",
           "hold_run", "refuse_if_owned", "resume_command", "run_owner"]

#: Seconds between heartbeats of a running run.
HEARTBEAT_S = 10.0
#: A heartbeat older than this means the owner is gone, whatever its pid says.
STALE_AFTER_S = 600.0


@dataclass(frozen=True)
class RunOwner:
    """The process recorded as executing a run."""

    pid: int | None
    host: str | None
    heartbeat_at: str | None

    def heartbeat_age_s(self, now: datetime | None = None) -> float | None:
        """Seconds since the last heartbeat, or None when there never was one."""
        if not self.heartbeat_at:
            return None
        beat = datetime.fromisoformat(self.heartbeat_at)
        return ((now or datetime.now(UTC)) - beat).total_seconds()

    def alive(self, *, now: datetime | None = None) -> bool:
        """Whether the owning process is (as far as can be told) still executing the run."""
        if self.pid is None or self.host is None:
            return False
        age = self.heartbeat_age_s(now)
        if age is None or age > STALE_AFTER_S:
            return False
        if self.host != this_host():
            return True  # a recent heartbeat from another host is all that can be known
        return _pid_exists(self.pid)

    def describe(self) -> str:
        """``pid 123 on host build-7`` (or that no owner was recorded)."""
        if self.pid is None:
            return "no owner recorded"
        return f"pid {self.pid} on host {self.host}"


def this_host() -> str:
    """The name this machine records as a run's host."""
    return socket.gethostname()


def _pid_exists(pid: int) -> bool:
    if pid == os.getpid():
        return True
    if os.name != "posix":  # no signal 0 elsewhere: trust the heartbeat
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # another user's live process
    except OSError:
        return False
    return _not_zombie(pid)


def _not_zombie(pid: int) -> bool:
    # A killed child whose parent has not reaped it yet still answers signal 0.
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii", errors="replace") as fh:
            return fh.read().rsplit(")", 1)[-1].split()[0] != "Z"
    except OSError:
        return True


def run_owner(run: dict[str, Any]) -> RunOwner:
    """The owner recorded in a row (``Store.get_run`` or ``Store.owners`` values)."""
    return RunOwner(pid=run.get("owner_pid", run.get("pid")),
                    host=run.get("owner_host", run.get("host")),
                    heartbeat_at=run.get("heartbeat_at"))


def displayed_status(status: str, owner: RunOwner) -> str:
    """The status to show: a ``running`` run whose owner is gone is ``interrupted``."""
    if status == "running" and not owner.alive():
        return "interrupted"
    return status


def resume_command(run: dict[str, Any]) -> str | None:
    """The command that finishes an unfinished benchmark run, or None for other kinds."""
    if run.get("kind") != "run":
        return None
    config = run.get("config") or {}
    return f"legal-judge run --resume {run['id']}" + (" --batch" if config.get("batch") else "")


def audit_resume_command(audit_id: str) -> str:
    """The command that finishes an unfinished audit (a batch audit resumes as a batch)."""
    return f"legal-judge audit run --resume {audit_id}"


def refuse_if_owned(store: Store, entity_id: str, *, kind: OwnedKind = "run") -> None:
    """Refuse to resume a run (or audit) another live process is executing.

    Raises:
        NotFoundError: no such run (runs only: an audit's absence is its resume plan's to report).
        ConfigError: ``run-in-progress`` (``audit-in-progress``) naming the process, when its owner
            is alive.
    """
    if kind == "run":
        store.get_run(entity_id)  # an unknown run id is reported as such
    row = store.owners(kind, [entity_id]).get(entity_id)
    if row is None:
        return
    owner = run_owner(row)
    if row["status"] != "running" or owner.pid == os.getpid() or not owner.alive():
        return
    age = owner.heartbeat_age_s()
    resume = f"legal-judge run --resume {entity_id}" if kind == "run" else \
        audit_resume_command(entity_id)
    raise ConfigError(
        f"{kind} {entity_id} is still being executed by {owner.describe()} (last heartbeat "
        f"{age:.0f}s ago)", code=f"{kind}-in-progress",
        fix=f"wait for it to finish, or stop that process (kill {owner.pid}) and resume with "
            f"`{resume}`")


@contextmanager
def hold_run(store: Store, entity_id: str, *, kind: OwnedKind = "run",
             interval_s: float = HEARTBEAT_S) -> Iterator[None]:
    """Own a run (or audit) for the duration of the block: claim it, and keep a heartbeat going.

    The heartbeat is a daemon thread so that it beats while the event loop waits on a provider
    and stops when the process dies, whatever kills it.
    """
    pid = os.getpid()
    store.claim_owner(kind, entity_id, pid=pid, host=this_host())
    stop = threading.Event()

    def beat() -> None:
        while not stop.wait(interval_s):
            try:
                store.beat_owner(kind, entity_id, pid=pid)
            except Exception:  # noqa: BLE001 - a missed beat must never break the run itself
                continue

    thread = threading.Thread(target=beat, name=f"heartbeat {entity_id}", daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join(timeout=5)
