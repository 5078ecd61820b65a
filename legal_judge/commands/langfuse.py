"""``legal-judge prompts ...``, ``sync`` and ``datasets push``: thin wrappers over the Langfuse sync."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence

import click
from rich.console import Console
from rich.table import Table

from legal_judge.assets import load_assets
from legal_judge.errors import SyncError
from legal_judge.store import Store

__all__ = ["COMMANDS", "datasets", "prompts", "sync"]

_console = Console()


def _table(title: str, rows: Sequence[Mapping[str, object]], columns: list[str]) -> None:
    table = Table(title=title)
    for col in columns:
        table.add_column(col)
    for row in rows:
        table.add_row(*("" if row.get(c) is None else str(row.get(c)) for c in columns))
    _console.print(table)


@click.group()
def prompts() -> None:
    """Versioned judge prompts and rubrics (repository = source of truth, Langfuse = copy)."""


@prompts.command("list")
def prompts_list() -> None:
    """Every template and rubric in the repository with kind, name, version and sha256."""
    _table("prompts and rubrics", load_assets().listing(), ["kind", "name", "version", "sha256"])


@prompts.command("push")
@click.option("--label", default=None, help="label for new versions, e.g. staging")
def prompts_push(label: str | None) -> None:
    """Create a Langfuse version for each prompt whose content hash changed."""
    from legal_judge.langfuse_sync import push_prompts

    _table("prompt push", push_prompts(label=label), ["name", "kind", "action", "version"])


@prompts.command("pull")
@click.argument("name")
@click.option("--label", default="production", show_default=True)
@click.option("--version", "version", type=int, default=None, help="a version instead of a label")
def prompts_pull(name: str, label: str, version: int | None) -> None:
    """Fetch one Langfuse prompt (references resolved) and print it."""
    from legal_judge.langfuse_sync import pull_prompt

    got = pull_prompt(name, label=label, version=version)
    _console.print(f"[bold]{got['name']}[/] v{got['version']} labels={','.join(got['labels'])}")
    _console.print(got["prompt"], markup=False, highlight=False)
    _console.print(json.dumps(got["config"], indent=2), markup=False)


@prompts.command("promote")
@click.argument("name")
@click.argument("version", type=int)
@click.option("--label", default="production", show_default=True)
def prompts_promote(name: str, version: int, label: str) -> None:
    """Move a label (default production) to a prompt version."""
    from legal_judge.langfuse_sync import promote_prompt

    labels = promote_prompt(name, version, label=label)
    _console.print(f"{name} v{version}: {', '.join(labels)}")


@prompts.command("diff")
@click.option("--label", default="latest", show_default=True)
def prompts_diff(label: str) -> None:
    """Repository prompts against the Langfuse version with LABEL."""
    from legal_judge.langfuse_sync import diff_prompts

    _table(f"repository vs Langfuse ({label})", diff_prompts(label=label),
           ["name", "status", "remote_version", "local_sha256", "remote_sha256"])


@click.command("sync")
@click.option("--status", "status_only", is_flag=True, help="only show what is pending")
@click.option("--timeout", "timeout_s", type=float, default=30.0, show_default=True)
def sync(status_only: bool, timeout_s: float) -> None:
    """Deliver the outbox (runs, audits, calibrations, labels) to Langfuse."""
    store = Store()
    try:
        if status_only:
            counts = store.outbox_status()
            rows = store.outbox_pending()
            _console.print(f"pending: {counts['pending']}  delivered: {counts['delivered']}")
            _table("pending", [{"kind": r["entity_kind"], "id": r["entity_id"],
                                "attempts": r["attempts"], "last error": r["last_error"]}
                               for r in rows], ["kind", "id", "attempts", "last error"])
            return
        from legal_judge.sink import sync_now

        report = sync_now(store, timeout_s=timeout_s)
        _console.print(f"delivered {report.delivered}, failed {report.failed}, "
                       f"pending {report.pending} ({report.elapsed_s:.1f} s)")
        for note in report.notes:
            _console.print(f"note: {note}", markup=False)
        if report.failed:
            raise SyncError("some entities were not delivered: " + "; ".join(report.errors[:3]),
                            fix="check Langfuse is reachable, then run `legal-judge sync` again")
    finally:
        store.close()


@click.group()
def datasets() -> None:
    """Benchmark datasets in Langfuse."""


@datasets.command("push")
@click.argument("file", type=click.Path(exists=True, dir_okay=False))
@click.option("--name", required=True, help="the Langfuse dataset name")
def datasets_push(file: str, name: str) -> None:
    """Upload a JSONL/CSV/JSON benchmark as a Langfuse dataset (masked)."""
    from legal_judge.langfuse_sync import push_dataset

    n = push_dataset(file, name=name)
    # The dataset is `run`'s positional DATASET argument (there is no --dataset option).
    _console.print(f"pushed {n} items to Langfuse dataset {name}; score it with\n"
                   f"  legal-judge run langfuse:{name}\n(add --ensemble FILE to choose the judges)")


COMMANDS: list[click.Command] = [prompts, sync, datasets]
