"""``legal-judge runs``: list, show and export stored runs; finish and merge sharded runs."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from legal_judge.calibration.escalation import escalation_figures
from legal_judge.commands.ci_outputs import ci_options, write_ci_outputs
from legal_judge.commands.core import console, err_console, export_and_say
from legal_judge.commands.escalate import print_escalation_figures
from legal_judge.commands.json_out import JsonDocument, json_option, json_output
from legal_judge.commands.policy import policy_in_force, policy_options
from legal_judge.commands.run_render import print_run_gate, print_summary, run_document
from legal_judge.commands.shards import print_shards
from legal_judge.commands.tables import Col, echo_json, print_table
from legal_judge.errors import ConfigError
from legal_judge.policy import PolicyInForce
from legal_judge.reports.ci import run_suite
from legal_judge.run_owner import displayed_status, resume_command, run_owner
from legal_judge.store import Store

__all__ = ["COMMANDS", "runs"]


@click.group()
def runs() -> None:
    """List, show and export stored runs."""


@runs.command("list")
@click.option("--limit", default=20, show_default=True, type=click.IntRange(min=1))
@click.option("--all", "every_kind", is_flag=True,
              help="Also list calibration samples and stored pytest assertions.")
@click.option("--json", "as_json", is_flag=True, help="Print the runs as JSON.")
def runs_list(limit: int, every_kind: bool, as_json: bool) -> None:
    """Most recent runs (a run whose process is gone is shown interrupted)."""
    from legal_judge.benchmark.run_list import listed_runs

    store = Store()
    rows = listed_runs(store, limit=limit, every_kind=every_kind)
    owners = store.owners("run", [r["id"] for r in rows])
    for r in rows:
        r["status"] = _shown_status(r["status"], owners.get(r["id"], {}))
    resumable = [r["id"] for r in rows if r["status"] in _RESUMABLE]
    commands = {i: resume_command(store.get_run(i)) for i in resumable}
    if as_json:
        echo_json([{**r, "resume_command": commands.get(r["id"])} for r in rows])
        return
    print_table(console, "Runs",
                [Col("run id", keep=True), Col("kind", keep=True), Col("status", keep=True),
                 Col("pass rate", numeric=True), Col("items", numeric=True),
                 Col("dataset", keep=True, optional=True), Col("ensemble", keep=True,
                                                               optional=True),
                 Col("created", optional=True)],
                [[r["id"], r["kind"], _status_cell(r),
                  "n/a" if r["pass_rate"] is None else f"{r['pass_rate']:.1%}", str(r["items"]),
                  r["dataset"] or "", r["ensemble"] or "",
                  r["created_at"][:16].replace("T", " ")] for r in rows],
                empty="no runs yet: `legal-judge demo` makes one")
    if not every_kind:
        console.print("(calibration samples and pytest assertions: --all)", style="dim",
                      highlight=False, markup=False)
    shown = [c for c in commands.values() if c]
    if shown:
        console.print("unfinished runs can be finished (calls already made are not repeated):",
                      highlight=False)
        for command in shown:
            console.print(f"  {command}", soft_wrap=True, highlight=False, markup=False)
    waiting = [(r["id"], p) for r in rows if r["shards"] for p in r["shards"]["pending"]]
    if waiting:
        console.print("sharded runs complete when their last shard does (a shard rerun resumes "
                      "and pays no call twice; `legal-judge runs show ID` details them):",
                      highlight=False, soft_wrap=True)
        for run_id, shard in waiting:
            console.print(f"  {shard['command']}  ({run_id}: shard {shard['shard']} "
                          f"{shard['status']})", soft_wrap=True, highlight=False, markup=False)


def _status_cell(row: dict[str, Any]) -> str:
    """The status, and for a sharded run its shards' state (``shards 1/4 done, 3 pending``)."""
    shards = row.get("shards")
    if not shards:
        return str(row["status"])
    if row["status"] == "pending":
        return str(shards["state"])
    if not shards["pending"]:  # merged: every shard done
        return f"{row['status']} ({shards['n']} shards)"
    return f"{row['status']}, {shards['state']}"


#: Statuses ``run --resume`` finishes: a ``failed`` run (nothing scored: its failed calls are
#: made again) and a ``stopped`` one (its cost limit) as well as an interrupted one.
_RESUMABLE = ("interrupted", "stopped", "failed")


def _shown_status(status: str, owner_row: dict[str, Any]) -> str:
    return displayed_status(status, run_owner(owner_row))


@runs.command("show")
@click.argument("run_id")
@click.option("--json", "as_json", is_flag=True, help="Print the run (config and summary) as JSON.")
@click.option("--policy", "policy_file", type=click.Path(dir_okay=False, path_type=Path),
              default=None, help="The policy whose [calibration] age and label floor the "
                                 "corrected figures are checked against (default: "
                                 "./legal-judge.policy.toml, else the bundled default).")
@ci_options
def runs_show(run_id: str, as_json: bool, policy_file: Path | None, junit: Path | None = None,
              summary_md: Path | None = None) -> None:
    """A run's summary (a run whose process is gone is shown interrupted).

    Its figures corrected for judge error are the pinned ones (a later calibration never moves
    them); a newer calibration of its ensemble is mentioned with the command that would use it.
    """
    from legal_judge.benchmark.shards import shard_status, unmerged_run

    store = Store()
    unmerged = unmerged_run(store, run_id)
    if unmerged is not None:  # a sharded run whose shards are not all done yet
        if as_json:
            echo_json({**unmerged, "resume_command": None, "escalation": None})
        else:
            print_shards(console, store, run_id)
        return
    run = store.get_run(run_id)
    run["status"] = _shown_status(run["status"], run)
    resume = resume_command(run) if run["status"] in _RESUMABLE else None
    if run["summary"] is not None:
        # Labels and calibrations arrive after a run: the pinned estimate is read (and, the
        # first time, stored) when shown.
        from legal_judge.benchmark.summary import correction_fields
        from legal_judge.commands.policy import policy_in_force

        policy = policy_in_force(policy_file)
        run["summary"].update(correction_fields(store, run_id, run["summary"], policy=policy))
    # Lawyers' labels of the escalated items arrive after the escalation: split when shown.
    split = escalation_figures(store, run_id)
    if as_json:
        shards = shard_status(store, run_id) if run["config"].get("shards") else None
        echo_json({**run, "resume_command": resume,
                   "escalation": split.model_dump(mode="json") if split else None,
                   "shards": shards.as_dict() if shards else None})
    else:
        print_summary(run)
        if run["config"].get("shards"):
            print_shards(console, store, run_id)
        if split is not None:
            print_escalation_figures(split, console)
    # JUnit / step summary: one check per item, the split figures as facts and a lawyer review.
    write_ci_outputs(err_console if as_json else console,
                     lambda: run_suite(store, run_id, split=split), junit=junit,
                     summary_md=summary_md)
    if as_json:
        return
    if resume:
        console.print(f"finish it with: {resume}", soft_wrap=True, highlight=False, markup=False)


@runs.command("export")
@click.argument("run_id")
@click.option("--format", "fmt", type=click.Choice(["csv", "jsonl", "parquet"]), default=None,
              help="File format (default: from --out, else csv); parquet needs pyarrow.")
@click.option("--out", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="File to write (default: RUN_ID.<format> here).")
def runs_export(run_id: str, fmt: str | None, out: Path | None) -> None:
    """Write a stored run as one row per item: ensemble and per-judge scores, rationales, reasons."""
    store = Store()
    run = store.get_run(run_id)
    path = out or Path(f"{run_id}.{fmt or 'csv'}")
    export_and_say(store, run_id, path, fmt=fmt)
    if run["status"] != "completed":
        console.print(f"run {run_id} is {run['status']}: finish it with "
                      f"`legal-judge run --resume {run_id}`", soft_wrap=True, markup=False)


@runs.command("finish")
@click.argument("run_id")
@policy_options
@json_option
def runs_finish(run_id: str, policy_file: Path | None, overrides: tuple[str, ...],
                as_json: bool) -> None:
    """Merge the completed shards of RUN_ID into one run, summarise and sync it (once).

    Exits 1 when the run fails the policy's [run] gate, as `run` does.
    """
    from legal_judge.benchmark.shards import finish_sharded, shard_status

    policy = policy_in_force(policy_file, overrides)
    store = Store()
    with json_output(as_json) as doc:
        merged = finish_sharded(store, run_id)
        if merged is None:
            status = shard_status(store, run_id)
            raise ConfigError(f"run {run_id} cannot finish: {status.line() if status else ''}",
                              code="shards-pending",
                              fix=f"run each pending shard (legal-judge run DATASET --run-id "
                                  f"{run_id} --shard K/N), then `legal-judge runs finish` again")
        _gate_merged(merged, policy, doc)


@runs.command("merge")
@click.argument("run_id")
@click.argument("stores", nargs=-1, required=True,
                type=click.Path(exists=True, dir_okay=False, path_type=Path))
@policy_options
@json_option
def runs_merge(run_id: str, stores: tuple[Path, ...], policy_file: Path | None,
               overrides: tuple[str, ...], as_json: bool) -> None:
    """Bring the shards of RUN_ID from other SQLite store files into this store and finish it.

    Each CI runner with a store of its own ran one or more shards; overlapping or mismatched
    shards (another N, dataset or ensemble) are refused before anything is copied. Exits 1 when
    the run fails the policy's [run] gate, as `run` does.
    """
    from legal_judge.benchmark.shards import finish_sharded, import_shards

    policy = policy_in_force(policy_file, overrides)
    store = Store()
    with json_output(as_json) as doc:
        found = import_shards(store, run_id, list(stores))
        console.print(f"merged {found} shard run(s) into {store.path}", highlight=False,
                      soft_wrap=True, markup=False)
        merged = finish_sharded(store, run_id)
        if merged is None:
            print_shards(console, store, run_id)
            raise ConfigError(f"run {run_id} still has pending shards", code="shards-pending",
                              fix="merge the stores of the pending shards too")
        _gate_merged(merged, policy, doc, merged_shard_runs=found)


def _gate_merged(run: dict[str, Any], policy: PolicyInForce, doc: JsonDocument,
                 **extra: Any) -> None:
    """The merged run's summary and its [run] gate, decided as `run` decides it (exit 1)."""
    print_summary(run)
    gate = print_run_gate(run, policy)
    doc.set({**run_document(run, gate=gate, policy=policy), **extra})
    if gate is not None and not gate.passed:
        # Merged and completed: the gate failed. Exit 1 even when a judge's calls failed: the
        # merged run is not resumed as one, its shards' runs are.
        raise click.exceptions.Exit(1)


COMMANDS: list[click.Command] = [runs]
