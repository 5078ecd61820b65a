"""Sharded runs on the command line: ``run --shard K/N``, ``runs finish ID``, ``runs merge ID FILE...``.

The logic is :mod:`legal_judge.benchmark.shards`'s; this module reads the inputs, drives one
shard's run and says what is done and what is pending.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import click

from legal_judge.benchmark.inputs import ItemSelection
from legal_judge.benchmark.outcome import RunOutcome
from legal_judge.benchmark.shards import (
    SHARD_MARK,
    Shard,
    ShardedItems,
    check_compatible,
    finish_sharded,
    shard_status,
)
from legal_judge.commands.core import console
from legal_judge.errors import ConfigError
from legal_judge.store import Store

__all__ = ["print_shards", "run_shard_cli", "runs_finish", "runs_merge"]


def run_shard_cli(dataset: str | None, ensemble: str, *, run_id: str | None, shard: str,
                  no_cache: bool, calibration: str | None,
                  selection: ItemSelection | None) -> dict[str, Any] | None:
    """Judge one shard of the run ``run_id``; the merged run when this shard completed it.

    Returns:
        ``{"run", "outcome"}`` of the merged run when every shard is done, the shard's own when
        it did not complete, None when it completed and other shards are pending (said here).

    Raises:
        ConfigError: no --run-id, a selection, a different dataset/ensemble/N than the stored
            shards, a run id that is already a finished run.
    """
    from legal_judge.benchmark.inputs import resolve_inputs
    from legal_judge.benchmark.run_setup import refuse_reused_run_id
    from legal_judge.benchmark.runner import execute_plan, plan_run
    from legal_judge.benchmark.stored_results import StoredResults

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
            plan.start(extra_config={"dataset": dataset, "ensemble_path": ensemble,
                                     "shard": split.record(part, run_id)})
        outcome = asyncio.run(execute_plan(plan))
    if outcome.status != "completed":
        return {"run": store.get_run(own), "outcome": outcome}
    merged = finish_sharded(store, run_id)
    if merged is None:
        status = shard_status(store, run_id)
        console.print(f"shard {part} of {run_id} completed ({len(split.items)} of "
                      f"{split.total} items)", highlight=False)
        if status is not None:
            console.print(status.line(), highlight=False, soft_wrap=True)
        console.print(f"the run completes when the last shard does, or with `legal-judge runs "
                      f"finish {run_id}`", highlight=False, soft_wrap=True, markup=False)
        return None
    done = RunOutcome(run_id=run_id, status="completed", results=StoredResults(store, run_id),
                      progress=outcome.progress, warnings=merged["summary"].get("warnings", []))
    return {"run": merged, "outcome": done}


def print_shards(store: Store, run_id: str) -> bool:
    """Print the shards of ``run_id`` done and pending (``runs show``); False when unsharded."""
    status = shard_status(store, run_id)
    if status is None:
        return False
    console.print(status.line(), highlight=False, soft_wrap=True)
    if status.pending:
        console.print(f"each pending shard: legal-judge run DATASET --run-id {run_id} "
                      f"--shard K/{status.n} (a shard rerun resumes and pays no call twice)",
                      highlight=False, soft_wrap=True, markup=False)
    return True


@click.command("finish")
@click.argument("run_id")
def runs_finish(run_id: str) -> None:
    """Merge the completed shards of RUN_ID into one run, summarise and sync it (once)."""
    from legal_judge.commands.run_render import print_summary

    store = Store()
    merged = finish_sharded(store, run_id)
    if merged is None:
        status = shard_status(store, run_id)
        raise ConfigError(f"run {run_id} cannot finish: {status.line() if status else ''}",
                          code="shards-pending",
                          fix=f"run each pending shard (legal-judge run DATASET --run-id {run_id} "
                              "--shard K/N), then `legal-judge runs finish` again")
    print_summary(merged)


@click.command("merge")
@click.argument("run_id")
@click.argument("stores", nargs=-1, required=True,
                type=click.Path(exists=True, dir_okay=False, path_type=Path))
def runs_merge(run_id: str, stores: tuple[Path, ...]) -> None:
    """Bring the shards of RUN_ID from other SQLite store files into this store and finish it.

    Each CI runner with a store of its own ran one or more shards; overlapping or mismatched
    shards (another N, dataset or ensemble) are refused before anything is copied.
    """
    from legal_judge.commands.run_render import print_summary
    from legal_judge.store.transfer import copy_runs, runs_with_prefix

    store = Store()
    found: dict[str, tuple[Path, dict[str, Any]]] = {}
    sources = []
    for path in stores:
        source = Store(path)
        sources.append(source)
        for row in runs_with_prefix(source, run_id + SHARD_MARK):
            config = source.get_run(row["id"])["config"]
            if row["status"] != "completed":
                raise ConfigError(f"shard run {row['id']} in {path} is {row['status']}",
                                  code="shard-unfinished",
                                  fix=f"finish it first (LEGAL_JUDGE_STORE={path} legal-judge run "
                                      f"DATASET --run-id {run_id} --shard ...), then merge")
            if row["id"] in found:
                raise ConfigError(f"shard run {row['id']} is in both {found[row['id']][0]} and "
                                  f"{path}", code="shard-overlap",
                                  fix="give each shard's store once")
            shard = config["shard"]
            check_compatible(store, run_id, Shard(shard["k"], shard["n"]),
                             digest=shard["dataset_digest"], ensemble_id=config.get("judge_id", ""))
            for other_path, other in found.values():
                other_shard = other["shard"]
                if (other_shard["n"], other_shard["dataset_digest"], other.get("judge_id")) != (
                        shard["n"], shard["dataset_digest"], config.get("judge_id")):
                    raise ConfigError(f"the shards in {other_path} and {path} are of different "
                                      "runs (N, dataset or ensemble differ)",
                                      code="shard-mismatch",
                                      fix="merge only the stores of one sharded run")
            found[row["id"]] = (path, config)
    for source in sources:
        copy_runs(source, store, [i for i, (p, _) in found.items() if p == source.path])
        source.close()
    console.print(f"merged {len(found)} shard run(s) into {store.path}", highlight=False,
                  soft_wrap=True, markup=False)
    merged = finish_sharded(store, run_id)
    if merged is None:
        print_shards(store, run_id)
        raise ConfigError(f"run {run_id} still has pending shards", code="shards-pending",
                          fix="merge the stores of the pending shards too")
    print_summary(merged)
