"""Sharded runs: one run judged in N deterministic parts by N processes (CI runners), then one run.

``legal-judge run DATASET --run-id ID --shard K/N`` judges the items whose stable hash (of the item
id: :func:`shard_of`) falls in shard K, as a run of its own, ``ID~shard-K-of-N``, with everything an
ordinary run has: each call committed as it completes, its process as the owner, a rerun after a
crash that resumes it without paying a call twice. The shard run records the whole dataset's digest,
N, and the global positions of its items; a shard started with another dataset, ensemble or N than
the shards already stored is refused naming the difference.

When the last shard completes (whichever process that is), or on ``runs finish ID``, the shard runs'
rows are merged under ``ID`` in one transaction, with the items in dataset order: ``ID`` is then an
ordinary completed run (summary, gates, Langfuse sync once, for ``ID`` only; a shard run is never
synced). Two shards finishing at once merge once: the merge runs in a write transaction (the
store's lock) and finds the run there the second time.
"""

from __future__ import annotations

import hashlib
import shlex
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from legal_judge.errors import ConfigError, NotFoundError
from legal_judge.models import BenchmarkItem
from legal_judge.store import Store, canonical_json
from legal_judge.store.transfer import merge_run_rows, runs_with_prefix

__all__ = ["SHARD_MARK", "Shard", "ShardedItems", "ShardStatus", "check_compatible",
           "finish_sharded", "import_shards", "shard_of", "shard_status", "sharded_run_of",
           "unmerged_run"]

#: Between the run id and the shard in a shard run's id: ``ID~shard-2-of-4``.
SHARD_MARK = "~shard-"


def shard_of(item_id: str, n: int) -> int:
    """The shard (1..n) of an item: a hash of its id, the same on every machine and version."""
    digest = hashlib.sha256(item_id.encode("utf-8")).digest()
    return 1 + int.from_bytes(digest[:8], "big") % n


@dataclass(frozen=True)
class Shard:
    """Shard ``k`` of ``n`` (1-based)."""

    k: int
    n: int

    @classmethod
    def parse(cls, text: str) -> Shard:
        """``K/N`` as given to ``--shard``.

        Raises:
            ConfigError: not two whole numbers with 1 <= K <= N.
        """
        try:
            k, n = (int(part) for part in text.split("/"))
        except ValueError:
            k = n = 0
        if not 1 <= k <= n:
            raise ConfigError(f"--shard {text!r} is not K/N with 1 <= K <= N", code="shard-invalid",
                              fix="give the shard as K/N, e.g. --shard 2/4 for the second of four")
        return cls(k, n)

    def run_id(self, base: str) -> str:
        """The id of this shard's own run."""
        return f"{base}{SHARD_MARK}{self.k}-of-{self.n}"

    def __str__(self) -> str:
        return f"{self.k}/{self.n}"


@dataclass
class ShardedItems:
    """The dataset read once: its digest, and this shard's items with their global positions."""

    digest: str
    items: list[BenchmarkItem] = field(default_factory=list)
    positions: list[int] = field(default_factory=list)
    total: int = 0

    @classmethod
    def split(cls, items: Iterable[BenchmarkItem], shard: Shard) -> ShardedItems:
        """Keep ``shard``'s items of ``items`` (the whole dataset, in order)."""
        hasher = hashlib.sha256()
        out = cls(digest="")
        for position, item in enumerate(items):
            hasher.update(canonical_json(item.model_dump(mode="json")).encode())
            out.total += 1
            if shard_of(item.id, shard.n) == shard.k:
                out.items.append(item)
                out.positions.append(position)
        out.digest = hasher.hexdigest()[:16]
        return out

    def record(self, shard: Shard, base: str) -> dict[str, Any]:
        """What the shard run stores about itself (its config's ``shard``)."""
        return {"of": base, "k": shard.k, "n": shard.n, "dataset_digest": self.digest,
                "dataset_items": self.total, "positions": self.positions}


def sharded_run_of(config: dict[str, Any] | None) -> str | None:
    """The sharded run whose shard a stored run is (its config's ``shard.of``), else None: a
    listing shows the run once, never its shards one by one."""
    shard = (config or {}).get("shard")
    return str(shard["of"]) if isinstance(shard, dict) and shard.get("of") else None


def _shard_runs(store: Store, base: str) -> list[dict[str, Any]]:
    rows = runs_with_prefix(store, base + SHARD_MARK)
    for row in rows:
        row["config"] = store.get_run(row["id"])["config"]
    return [r for r in rows if isinstance(r["config"].get("shard"), dict)]


def check_compatible(store: Store, base: str, shard: Shard, *, digest: str,
                     ensemble_id: str) -> None:
    """Refuse a shard whose dataset, ensemble or N differs from the shards already stored.

    Raises:
        ConfigError: ``shard-mismatch``, naming the difference and the stored shard.
    """
    for row in _shard_runs(store, base):
        mine = row["config"]["shard"]
        theirs = {"N (the number of shards)": (mine["n"], shard.n),
                  "dataset": (mine["dataset_digest"], digest),
                  "ensemble": (row["config"].get("judge_id"), ensemble_id)}
        for what, (stored, given) in theirs.items():
            if stored != given:
                raise ConfigError(
                    f"shard {shard} of run '{base}' differs from the stored shard "
                    f"{mine['k']}/{mine['n']} ({row['id']}) in its {what}: stored {stored}, "
                    f"given {given}", code="shard-mismatch",
                    fix="run every shard with the same dataset file, ensemble and --shard K/N, "
                        "or give this run another --run-id")


@dataclass
class ShardStatus:
    """Which shards of a sharded run are done, and which are not (with their states)."""

    base: str
    n: int
    states: dict[int, str]
    #: Each started shard's own run: its id, and its stored items and results.
    runs: dict[int, str] = field(default_factory=dict)
    items: dict[int, int] = field(default_factory=dict)
    results: dict[int, int] = field(default_factory=dict)
    #: The dataset the shards were given, and its size (every shard records both).
    dataset: str | None = None
    dataset_items: int = 0
    #: The ensemble the shards were given (a TOML path or a bundled name; None: the default).
    ensemble: str | None = None

    @property
    def done(self) -> list[int]:
        """Shards whose run completed."""
        return [k for k in range(1, self.n + 1) if self.states.get(k) == "completed"]

    @property
    def pending(self) -> list[int]:
        """Shards not started or not completed."""
        return [k for k in range(1, self.n + 1) if self.states.get(k) != "completed"]

    def line(self) -> str:
        """One line: ``shards: 3/4 done; pending: 2 (interrupted)``."""
        pending = ", ".join(f"{k} ({self.states.get(k, 'not started')})" for k in self.pending)
        return (f"shards of {self.base}: {len(self.done)}/{self.n} done"
                + (f"; pending: {pending}" if pending else ""))

    def brief(self) -> str:
        """The shard state in a few words (``runs list``): ``shards 1/4 done, 3 pending``."""
        return (f"shards {len(self.done)}/{self.n} done"
                + (f", {len(self.pending)} pending" if self.pending else ""))

    def command(self, k: int | str) -> str:
        """The command that runs (or resumes) shard ``k`` (``"K"``: any shard)."""
        # Every shard must name the same ensemble: a command without it would be refused.
        ensemble = ("" if self.ensemble in (None, "default")
                    else f" --ensemble {shlex.quote(str(self.ensemble))}")
        dataset = shlex.quote(self.dataset) if self.dataset else "DATASET"
        return (f"legal-judge run {dataset}{ensemble} --run-id {self.base} "
                f"--shard {k}/{self.n}")

    def as_dict(self) -> dict[str, Any]:
        """``--json``: N, the shards done and pending, and each started shard's own run."""
        return {"n": self.n, "state": self.brief(), "done": self.done,
                "pending": [{"shard": k, "status": self.states.get(k, "not started"),
                             "command": self.command(k)} for k in self.pending],
                "runs": [{"shard": k, "id": self.runs[k], "status": self.states[k],
                          "items": self.items.get(k, 0), "results": self.results.get(k, 0)}
                         for k in sorted(self.runs)]}


def shard_status(store: Store, base: str) -> ShardStatus | None:
    """The shards of ``base`` (None when it was not run in shards)."""
    from legal_judge.run_owner import displayed_status, run_owner

    rows = _shard_runs(store, base)
    if not rows:
        return None
    first = rows[0]["config"]
    status = ShardStatus(base, int(first["shard"]["n"]), {}, dataset=first.get("dataset"),
                         dataset_items=int(first["shard"].get("dataset_items") or 0),
                         ensemble=first.get("ensemble_path"))
    owners = store.owners("run", [r["id"] for r in rows])
    for row in rows:
        k = int(row["config"]["shard"]["k"])
        status.states[k] = displayed_status(row["status"], run_owner(owners.get(row["id"], {})))
        status.runs[k] = row["id"]
        status.items[k] = store.item_count(row["id"])
        status.results[k] = store.result_count(row["id"])
    return status


def unmerged_run(store: Store, base: str) -> dict[str, Any] | None:
    """The sharded run ``base`` before its last shard completes, shaped as a stored run row
    (``runs list``, ``runs show --json``): None when ``base`` is stored or has no shards.

    Its status is ``running`` while a shard's process runs, else ``pending``; its items are the
    whole dataset's, its results the shards' so far; ``shards`` details each shard.
    """
    if store.run_exists(base):
        return None
    status = shard_status(store, base)
    if status is None:
        return None
    rows = _shard_runs(store, base)
    config = {k: v for k, v in rows[0]["config"].items() if k != "shard"}
    return {"id": base, "kind": "run",
            "status": "running" if "running" in status.states.values() else "pending",
            "created_at": min(r["created_at"] for r in rows), "finished_at": None,
            "owner_pid": None, "owner_host": None, "heartbeat_at": None,
            "config": config, "summary": None, "items": status.dataset_items,
            "results": sum(status.results.values()), "shards": status.as_dict()}


def finish_sharded(store: Store, base: str, *, sync: bool = True,
                   merge_only: bool = False) -> dict[str, Any] | None:
    """Merge the completed shards of ``base`` into the run ``base`` (once) and summarise it.

    Args:
        store: The store holding the shard runs.
        base: The sharded run's id.
        sync: Sync the merged run to Langfuse (when configured).
        merge_only: Return None, not the stored run, when another process merged it already:
            a shard's process then does not print the run's summary and gate a second time.

    Returns:
        The run ``base`` (already merged by another process: as stored, unless
        ``merge_only``), or None while a shard is pending.

    Raises:
        NotFoundError: ``base`` was not run in shards.
    """
    from legal_judge.benchmark.run_setup import sync_run_at_end
    from legal_judge.benchmark.summary import summarize_run

    status = shard_status(store, base)
    if status is None:
        raise NotFoundError(f"no shards of a run '{base}' in {store.path}",
                            fix="`legal-judge runs list` shows the runs in this store")
    if status.pending:
        return None
    rows = _shard_runs(store, base)
    warnings: list[str] = []
    with store.transaction():
        if store.run_exists(base):  # the other last shard merged it first
            return None if merge_only else store.get_run(base)
        placed: list[tuple[int, dict[str, Any]]] = []
        for row in rows:
            positions = row["config"]["shard"]["positions"]
            placed += zip(positions, store.load_items(row["id"]), strict=True)
        placed.sort(key=lambda pair: pair[0])
        first = rows[0]["config"]
        config = {k: v for k, v in first.items() if k != "shard"}
        config["shards"] = {"n": status.n, "runs": [r["id"] for r in rows],
                            "dataset_digest": first["shard"]["dataset_digest"]}
        store.create_run(base, kind="run", config=config, items=[it for _, it in placed])
        merge_run_rows(store, base, [r["id"] for r in rows])
        for row in rows:
            warnings += (store.get_run(row["id"])["summary"] or {}).get("warnings", [])
        summary = summarize_run(store, base)
        summary["warnings"] = sorted(set(warnings))
        store.finish_run(base, status="completed", summary=summary)
    if sync:
        sync_run_at_end(store, base, warnings)
        if len(warnings) > len(summary["warnings"]):
            summary["warnings"] = warnings
            store.finish_run(base, status="completed", summary=summary)
    return store.get_run(base)


def import_shards(store: Store, base: str, paths: list[Path]) -> int:
    """Copy the completed shard runs of ``base`` from other SQLite stores into ``store``.

    Everything is checked before anything is copied; a shard run already in ``store`` is skipped.

    Returns:
        How many shard runs the files hold.

    Raises:
        ConfigError: a shard run unfinished (``shard-unfinished``), in two files
            (``shard-overlap``), or of another N, dataset or ensemble (``shard-mismatch``).
    """
    from legal_judge.store.transfer import copy_runs

    found: dict[str, tuple[Path, dict[str, Any]]] = {}
    for path in paths:
        source = Store(path)
        try:
            for row in runs_with_prefix(source, base + SHARD_MARK):
                config = source.get_run(row["id"])["config"]
                if row["status"] != "completed":
                    raise ConfigError(f"shard run {row['id']} in {path} is {row['status']}",
                                      code="shard-unfinished",
                                      fix=f"finish it first (LEGAL_JUDGE_STORE={path} legal-judge "
                                          f"run DATASET --run-id {base} --shard K/N), then merge")
                if row["id"] in found:
                    raise ConfigError(f"shard run {row['id']} is in both {found[row['id']][0]} "
                                      f"and {path}", code="shard-overlap",
                                      fix="give each shard's store once")
                shard = config["shard"]
                check_compatible(store, base, Shard(shard["k"], shard["n"]),
                                 digest=shard["dataset_digest"],
                                 ensemble_id=config.get("judge_id", ""))
                for other_path, other in found.values():
                    if (other["shard"]["n"], other["shard"]["dataset_digest"],
                            other.get("judge_id")) != (shard["n"], shard["dataset_digest"],
                                                       config.get("judge_id")):
                        raise ConfigError(f"the shards in {other_path} and {path} are of "
                                          "different runs (N, dataset or ensemble differ)",
                                          code="shard-mismatch",
                                          fix="merge only the stores of one sharded run")
                found[row["id"]] = (path, config)
        finally:
            source.close()
    for path in paths:
        source = Store(path)
        try:
            copy_runs(source, store, [i for i, (p, _) in found.items() if p == path])
        finally:
            source.close()
    return len(found)
