"""What ``runs list`` shows: each run's kind, dataset, ensemble and pass rate.

A store holds more than benchmark runs: a calibration sample is stored as a run (its items are
the sampled answers), and ``assert_judged(..., save=True)`` stores each pytest assertion as a
one-item run. Listed as runs they read as 0- and 1-item runs; they get their own kinds here,
derived from what each row already records (the row's ``kind``; the ``source`` a single judged
answer writes in its config), and are hidden unless asked for.

A sharded run (``run --shard K/N``) is stored as one run per shard (``ID~shard-K-of-N``) and,
once its last shard completes, the merged run ``ID``. It is listed once, as ``ID``, with its
shards' state (``shards``); before the merge, the row is built from the shards
(:func:`~legal_judge.benchmark.shards.unmerged_run`). ``runs show ID`` details each shard.
"""

from __future__ import annotations

from pathlib import PurePath
from typing import Any

from legal_judge.benchmark.shards import shard_status, sharded_run_of, unmerged_run
from legal_judge.calibration.sample import SAMPLE_KIND
from legal_judge.store import Store

__all__ = ["HIDDEN_KINDS", "listed_runs", "shown_kind"]

#: Kinds ``runs list`` leaves out unless ``--all``.
HIDDEN_KINDS = ("sample", "assertion")


def shown_kind(row: dict[str, Any]) -> str:
    """``run``, ``single`` (``legal-judge judge --save`` or the API), ``assertion`` (pytest
    plugin) or ``sample`` (``calibrate sample``)."""
    if row["kind"] == SAMPLE_KIND:
        return "sample"
    source = (row.get("config") or {}).get("source")
    if source == "pytest":
        return "assertion"
    if source in ("api", "cli"):
        return "single"
    return str(row["kind"])


def _dataset(config: dict[str, Any]) -> str | None:
    dataset = config.get("dataset")
    return PurePath(str(dataset)).name if dataset else None


def _ensemble(config: dict[str, Any]) -> str | None:
    ensemble = config.get("ensemble")
    if isinstance(ensemble, dict) and ensemble.get("name"):
        return str(ensemble["name"])
    path = config.get("ensemble_path")
    return PurePath(str(path)).name if path else None


def listed_runs(store: Store, *, limit: int, every_kind: bool = False) -> list[dict[str, Any]]:
    """The most recent ``limit`` runs shown, newest first, each with its listing fields.

    Args:
        store: The store.
        limit: How many rows at most.
        every_kind: Include samples and assertions (``--all``).

    Returns:
        Rows with ``id, kind, stored_kind, status, created_at, finished_at, items, results,
        dataset, ensemble, pass_rate, shards`` (``pass_rate`` None until a run has a summary;
        ``shards`` None unless the run was run in shards, else its shards' state).
    """
    out: list[dict[str, Any]] = []
    sharded: set[str] = set()
    rows = (r for r in store.iter_runs() if every_kind or shown_kind(r) not in HIDDEN_KINDS)
    for row in rows:
        if len(out) >= limit:
            break
        base = sharded_run_of(row["config"])
        if base is not None:
            # One row per run id: a shard is listed as its run (once), never on its own.
            unmerged = None if base in sharded else unmerged_run(store, base)
            sharded.add(base)
            if unmerged is not None:
                out.append(_listed({**unmerged, "stored_kind": None}))
            continue
        status = shard_status(store, row["id"]) if row["config"].get("shards") else None
        if status is not None:
            sharded.add(row["id"])
        out.append(_listed({**row, "stored_kind": row["kind"],
                            "shards": status.as_dict() if status else None}))
    return out


def _listed(row: dict[str, Any]) -> dict[str, Any]:
    config, summary = row.pop("config"), row.pop("summary", None) or {}
    for key in ("owner_pid", "owner_host", "heartbeat_at"):
        row.pop(key, None)
    return {**row, "kind": shown_kind({**row, "config": config}), "dataset": _dataset(config),
            "ensemble": _ensemble(config), "pass_rate": summary.get("pass_rate")}
