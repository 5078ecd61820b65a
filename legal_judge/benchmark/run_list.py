"""What ``runs list`` shows: each run's kind, dataset, ensemble and pass rate.

A store holds more than benchmark runs: a calibration sample is stored as a run (its items are
the sampled answers), and ``assert_judged(..., save=True)`` stores each pytest assertion as a
one-item run. Listed as runs they read as 0- and 1-item runs; they get their own kinds here,
derived from what each row already records (the row's ``kind``; the ``source`` a single judged
answer writes in its config), and are hidden unless asked for.
"""

from __future__ import annotations

from itertools import islice
from pathlib import PurePath
from typing import Any

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
        dataset, ensemble, pass_rate`` (``pass_rate`` None until a run has a summary).
    """
    out = []
    rows = (r for r in store.iter_runs() if every_kind or shown_kind(r) not in HIDDEN_KINDS)
    for row in islice(rows, limit):
        config, summary = row.pop("config"), row.pop("summary") or {}
        out.append({**row, "stored_kind": row["kind"], "kind": shown_kind({**row, "config": config}),
                    "dataset": _dataset(config), "ensemble": _ensemble(config),
                    "pass_rate": summary.get("pass_rate")})
    return out
