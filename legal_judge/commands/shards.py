"""Sharded runs on the command line: ``run --shard K/N`` and the shard lines of ``runs``.

The logic is :mod:`legal_judge.benchmark.shards`'s; this module reads the inputs, drives one
shard's run and says what is done and what is pending.
"""

from __future__ import annotations

import asyncio
from typing import Any

from rich.console import Console

from legal_judge.benchmark.inputs import ItemSelection
from legal_judge.benchmark.outcome import RunOutcome
from legal_judge.benchmark.shards import (
    Shard,
    ShardedItems,
    check_compatible,
    finish_sharded,
    shard_status,
)
from legal_judge.errors import ConfigError
from legal_judge.store import Store

__all__ = ["print_shards", "run_shard_cli"]


def run_shard_cli(console: Console, dataset: str | None, ensemble: str, *, run_id: str | None,
                  shard: str,
                  no_cache: bool, calibration: str | None,
                  selection: ItemSelection | None,
                  release: str | None = None) -> dict[str, Any]:
    """Judge one shard of the run ``run_id``; the merged run when this shard completed it.

    Returns:
        ``{"run", "outcome"}`` of the merged run when every shard is done, the shard's own when
        it did not complete; when it completed and other shards are pending (said here), the
        shard's own with ``"pending": True``.

    Raises:
        ConfigError: no --run-id, a selection, a different dataset/ensemble/N than the stored
            shards, a run id that is already a finished run.
    """
    from legal_judge.benchmark.inputs import resolve_inputs
    from legal_judge.benchmark.outcome import StoredResults
    from legal_judge.benchmark.run_setup import refuse_reused_run_id
    from legal_judge.benchmark.runner import execute_plan, plan_run

    part = Shard.parse(shard)
    if not run_id:
        raise ConfigError("--shard needs --run-id: every shard names the same run",
                          code="shard-run-id", fix=f"add --run-id ID to each of the {part.n} "
                                                   "shard commands")
    if selection is not None and not selection.everything:
        raise ConfigError("--shard judges its part of the whole dataset; "
                          f"{selection.describe()} cannot narrow it", code="shard-selection",
                          fix="drop --limit/--sample/--ids, or run without --shard")
    store = Store()
    refuse_reused_run_id(store, run_id)  # the sharded run is finished (or an ordinary run)
    inputs = resolve_inputs(store, dataset, ensemble, resume=None)
    split = ShardedItems.split(inputs.items, part)
    own = part.run_id(run_id)
    resume = store.run_exists(own)
    plan = plan_run(split.items, inputs.config, store=store, run_id=own, resume=resume,
                    use_cache=not no_cache, calibration=calibration)
    check_compatible(store, run_id, part, digest=split.digest, ensemble_id=plan.ensemble_id)
    if resume and store.get_run(own)["status"] == "completed":
        console.print(f"shard {part} of {run_id} was already done", highlight=False)
        outcome = RunOutcome(run_id=own, status="completed", results=StoredResults(store, own),
                             progress=plan.progress)
    else:
        if not resume:
            extra: dict[str, Any] = {"dataset": dataset, "ensemble_path": ensemble,
                                     "shard": split.record(part, run_id)}
            if release is not None:  # the merged run keeps the first shard's config
                from legal_judge.sync.plan_tags import RELEASE_KEY

                extra[RELEASE_KEY] = release
            plan.start(extra_config=extra)
        outcome = asyncio.run(execute_plan(plan))
    if outcome.status != "completed":
        return {"run": store.get_run(own), "outcome": outcome}
    merged = finish_sharded(store, run_id, merge_only=True)
    if merged is None:
        status = shard_status(store, run_id)
        console.print(f"shard {part} of {run_id} completed ({len(split.items)} of "
                      f"{split.total} items)", highlight=False)
        if store.run_exists(run_id):  # two last shards at once: the other merged the run
            console.print(f"run {run_id} was completed by another shard: `legal-judge runs show "
                          f"{run_id}`", highlight=False, soft_wrap=True, markup=False)
        else:
            if status is not None:
                console.print(status.line(), highlight=False, soft_wrap=True)
            console.print(f"the run completes when the last shard does, or with `legal-judge "
                          f"runs finish {run_id}`", highlight=False, soft_wrap=True, markup=False)
        return {"run": store.get_run(own), "outcome": outcome, "pending": True}
    done = RunOutcome(run_id=run_id, status="completed", results=StoredResults(store, run_id),
                      progress=outcome.progress, warnings=merged["summary"].get("warnings", []))
    return {"run": merged, "outcome": done}


def print_shards(console: Console, store: Store, run_id: str) -> bool:
    """Print the shards of ``run_id`` done and pending (``runs show``); False when unsharded."""
    status = shard_status(store, run_id)
    if status is None:
        return False
    console.print(status.line(), highlight=False, soft_wrap=True)
    for k in range(1, status.n + 1):
        if k in status.runs:
            console.print(f"  shard {k}/{status.n}: {status.runs[k]} {status.states[k]}, "
                          f"{status.results.get(k, 0)} of {status.items.get(k, 0)} items judged",
                          highlight=False, soft_wrap=True, markup=False)
        else:
            console.print(f"  shard {k}/{status.n}: not started", highlight=False)
    if status.pending:
        console.print(f"each pending shard: {status.command('K')} (a shard rerun resumes and "
                      "pays no call twice)",
                      highlight=False, soft_wrap=True, markup=False)
    return True
