"""What ``legal-judge run --batch`` calls (the ``run`` command itself lives in commands/core.py)."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from legal_judge.benchmark.inputs import ItemSelection
from legal_judge.store import Store

__all__ = ["run_batch_cli"]


def run_batch_cli(dataset: str | Path | None, ensemble: str, *, resume: str | None = None,
                  run_id: str | None = None, no_cache: bool = False, out: Path | None = None,
                  quiet: bool = True, wait: bool = True, poll_interval_s: float = 30.0,
                  online_threshold: int = 20, store: Store | None = None,
                  selection: ItemSelection | None = None,
                  release: str | None = None) -> dict[str, Any]:
    """Run (or resume) a batch run and return ``{"run": stored run row, "outcome": outcome}``.

    Args:
        dataset: The benchmark file (not needed with ``resume``).
        ensemble: Ensemble TOML path or bundled name.
        resume: A run id to pick up: stored batches are polled, not resubmitted.
        run_id: Id for a new run.
        no_cache: Do not read the provider cache.
        out: Also write results as .jsonl or .csv.
        quiet: No progress line on stderr.
        wait: False submits the batches and returns (status ``submitted``); resume later.
        poll_interval_s: Seconds between polls of open batches.
        online_threshold: Retry rounds smaller than this are sent online.
        store: The store (default: the user's).
        selection: Which items of DATASET to judge (``--limit``, ``--sample``, ``--ids``).
        release: The release this run judges (``run --release``), stored with the run.

    Raises:
        ConfigError: no dataset and no run to resume.
    """
    from legal_judge.batch.orchestrator import run_benchmark_batch
    from legal_judge.benchmark.inputs import resolve_inputs

    store = store or Store()
    inputs = resolve_inputs(store, str(dataset) if dataset is not None else None, ensemble,
                            resume=resume, selection=selection)
    extra = inputs.run_config(dataset, ensemble, release=release)
    progress = None if quiet else _printer()
    outcome = asyncio.run(run_benchmark_batch(
        inputs.items, inputs.config, store=store, run_id=resume or run_id, resume=bool(resume),
        use_cache=not no_cache, wait=wait, poll_interval_s=poll_interval_s,
        online_threshold=online_threshold, on_progress=progress, extra_config=extra,
    ))
    if out is not None and outcome.status == "completed":
        from legal_judge.benchmark.export import export_results

        export_results(store, outcome.run_id, out)
    return {"run": store.get_run(outcome.run_id), "outcome": outcome}


def _printer() -> Any:
    from rich.console import Console

    console = Console(stderr=True)
    state = {"done": -1}

    def show(p: Any) -> None:
        if p.items_done != state["done"] and p.items_done % 100 == 0:
            state["done"] = p.items_done
            console.print(f"merged {p.items_done}/{p.items_total} items, {p.calls} calls, "
                          f"${p.cost_usd:.4f}")

    return show
