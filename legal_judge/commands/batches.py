"""``legal-judge batches status [RUN_ID]``: the provider batches of a run, from the store."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import click
from rich.console import Console

from legal_judge.commands.tables import Col, echo_json, print_table
from legal_judge.errors import ConfigError
from legal_judge.store import Store

__all__ = ["COMMANDS", "batch_options", "check_no_wait"]

console = Console()


def batch_options(what: str, price: str, finish: str) -> Callable[[Any], Any]:
    """``--batch`` and ``--no-wait`` for ``run`` and ``audit run``: ``what`` is sent as provider
    batch jobs at ``price``, and ``finish`` is the command that collects a ``--no-wait`` one."""
    def add(fn: Any) -> Any:
        fn = click.option("--no-wait", is_flag=True,
                          help=f"With --batch: submit, merge what has ended, and return; finish "
                               f"later with {finish}.")(fn)
        return click.option("--batch", is_flag=True,
                            help=f"Send {what} as provider batch jobs ({price}); collect later "
                                 f"with {finish}.")(fn)
    return add


def check_no_wait(no_wait: bool, batch: bool, code: str) -> None:
    """Refuse ``--no-wait`` without ``--batch`` (before anything is stored or paid).

    Raises:
        ConfigError: ``--no-wait`` was given alone.
    """
    if no_wait and not batch:
        raise ConfigError("--no-wait needs --batch", code=code,
                          fix="add --batch, or drop --no-wait")


@click.group()
def batches() -> None:
    """Provider batch jobs of `run --batch` runs and `audit run --batch` audits."""


@batches.command("status")
@click.argument("run_id", required=False)
@click.option("--json", "as_json", is_flag=True, help="Print the rows as JSON.")
def batches_status(run_id: str | None, as_json: bool) -> None:
    """Batches of RUN_ID, a run or an audit (default: all), as last seen.

    `run --resume RUN_ID --batch` or `audit run --resume AUDIT_ID` polls and collects them.
    """
    from legal_judge.batch.records import batch_rows

    store = Store()
    is_audit = run_id is not None and store.audits.exists(run_id)
    if run_id is not None and not is_audit:
        store.get_run(run_id)  # a clear "no run" error with the fix
    rows = batch_rows(store, run_id=run_id, with_ids=False)
    if as_json:
        echo_json(rows)
        return
    if not rows:
        console.print("no batches" + (f" for run {run_id}" if run_id else ""))
        return
    cells = []
    for r in rows:
        meta = r["meta"]
        counts = meta.get("counts") or {}
        cells.append([r["id"], r["run_id"], r["provider"], str(meta.get("judge", "")),
                      str(meta.get("requests", "")), str(meta.get("provider_status", "")),
                      ", ".join(f"{k} {v}" for k, v in counts.items() if v), r["status"],
                      r["updated_at"][:19].replace("T", " ")])
    print_table(console, f"Batches of {run_id}" if run_id else "Batches",
                [Col("batch id", keep=True), Col("run", keep=True), Col("provider", optional=True),
                 Col("judge", keep=True), Col("requests", numeric=True),
                 Col("provider status", keep=True), Col("counts", optional=True),
                 Col("state", keep=True), Col("updated", optional=True)], cells)
    pending = sorted({r["run_id"] for r in rows if r["status"] == "submitted"})
    audits = store.audits.ids() if pending else set()
    for rid in pending:
        if rid in audits:
            console.print(f"audit {rid} has batches in flight: collect them with "
                          f"`legal-judge audit run --resume {rid}`", soft_wrap=True)
        else:
            console.print(f"run {rid} has batches in flight: collect them with "
                          f"`legal-judge run --resume {rid} --batch`", soft_wrap=True)


COMMANDS: list[click.Command] = [batches]
