"""``legal-judge prompts ...``, ``sync`` and ``datasets push``: thin wrappers over the Langfuse sync."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

import click
from rich.console import Console

from legal_judge.assets.catalogue import load_assets
from legal_judge.commands.json_out import JsonDocument, json_option, json_output
from legal_judge.commands.tables import Col, echo_json, print_table
from legal_judge.errors import LegalJudgeError, SyncAuthError, SyncError
from legal_judge.store import Store
from legal_judge.sync.langfuse_errors import KEYS_FIX

__all__ = ["COMMANDS", "datasets", "prompts", "sync"]

_console = Console()


# Names, ids, versions, actions and statuses are what a user acts on: never cut.
_KEEP = {"name", "id", "version", "action", "status", "kind", "remote_version"}


def _table(title: str, rows: Sequence[Mapping[str, object]], columns: list[str], *,
           optional: Sequence[str] = ()) -> None:
    print_table(_console, title, [Col(c, keep=c in _KEEP, optional=c in optional)
                                  for c in columns],
                [["" if row.get(c) is None else str(row.get(c)) for c in columns] for row in rows])


@click.group(short_help="Versioned judge prompts and rubrics (the repository is the source of truth).")
def prompts() -> None:
    """Versioned judge prompts and rubrics (repository = source of truth, Langfuse = copy)."""


@prompts.command("list")
@json_option
def prompts_list(as_json: bool) -> None:
    """Every template and rubric in the repository with kind, name, version and sha256."""
    rows = load_assets().listing()
    if as_json:
        echo_json(rows)
        return
    _table("prompts and rubrics", rows, ["kind", "name", "version", "sha256"])


@prompts.command("push")
@click.option("--label", default=None,
              help="label to set, e.g. staging (only this label; the judge prompt's rubric "
                   "references follow it; without one they follow latest)")
@json_option
def prompts_push(label: str | None, as_json: bool) -> None:
    """Create a Langfuse version for each prompt whose content hash changed.

    Only LABEL is set: on each new version, and moved to an unchanged version that holds the
    repository's content. The judge prompt references its rubrics with the same label.
    """
    from legal_judge.sync.langfuse_prompts import push_prompts

    rows = push_prompts(label=label)
    if as_json:
        echo_json(rows)
        return
    _table("prompt push", rows, ["name", "kind", "action", "version"])


@prompts.command("pull")
@click.argument("name")
@click.option("--label", default="production", show_default=True)
@click.option("--version", "version", type=int, default=None, help="a version instead of a label")
@json_option
def prompts_pull(name: str, label: str, version: int | None, as_json: bool) -> None:
    """Fetch one Langfuse prompt (references resolved) and print it.

    The judge prompt's rubric references are resolved by the server; the versions they resolved
    to are listed first.
    """
    from legal_judge.sync.langfuse_prompts import pull_prompt

    got = pull_prompt(name, label=label, version=version)
    if as_json:
        echo_json(got)
        return
    _console.print(f"[bold]{got['name']}[/] v{got['version']} labels={','.join(got['labels'])}")
    for ref in got["references"]:
        how = f"label {ref['label']}" if ref["label"] else "pinned"
        _echo(f"  resolved {ref['name']} ({how}) -> "
              + (f"v{ref['version']}" if ref["version"] is not None else "not found"))
    _console.print(got["prompt"], markup=False, highlight=False)
    _console.print(json.dumps(got["config"], indent=2), markup=False)


@prompts.command("promote")
@click.argument("name")
@click.argument("version", type=int)
@click.option("--label", default="production", show_default=True)
@json_option
def prompts_promote(name: str, version: int, label: str, as_json: bool) -> None:
    """Move a label (default production) to a prompt version."""
    from legal_judge.sync.langfuse_prompts import promote_prompt

    labels = promote_prompt(name, version, label=label)
    if as_json:
        echo_json({"name": name, "version": version, "label": label, "labels": labels})
        return
    _console.print(f"{name} v{version}: {', '.join(labels)}")


@prompts.command("diff")
@click.option("--label", default="latest", show_default=True)
@json_option
def prompts_diff(label: str, as_json: bool) -> None:
    """Repository prompts against the Langfuse version with LABEL.

    The sha256 columns are the repository assets' (as `prompts list` shows them) and the ones
    the Langfuse version was pushed from.
    """
    from legal_judge.sync.langfuse_prompts import diff_prompts

    rows = diff_prompts(label=label)
    if as_json:
        echo_json(rows)
        return
    # Two whole sha256 never fit 80 columns: they give way (the status says whether they differ)
    # so the rest stays a table, not a key:value list of 60-84 lines.
    _table(f"repository vs Langfuse ({label})", rows,
           ["name", "asset", "status", "remote_version", "sha256", "remote_sha256"],
           optional=("asset", "sha256", "remote_sha256"))


def _plural(n: int, one: str, many: str) -> str:
    return f"{n} {one if n == 1 else many}"


def _echo(text: str) -> None:
    # Not wrapped by rich: a reason or a fix stays one line a log search finds.
    _console.print(text, markup=False, highlight=False, soft_wrap=True)


_RETRY = {"sync": "retried by every sync",
          "upgrade": "retried by a new legal-judge version or `sync --retry-parked`"}


def _print_parked(parked: Sequence[Mapping[str, Any]], *, details: bool) -> None:
    """Parked entities, one line each (``details``: since when, by which version, reason, fix)."""
    for p in parked[:20]:
        name = f"  {p['entity_kind']} {p['entity_id']}"
        if not details:
            _echo(f"{name}: {p['park_reason']}")
            continue
        _echo(f"{name} (since {str(p['parked_at'])[:16].replace('T', ' ')} UTC, "
              f"legal-judge {p['parked_by']}; {_RETRY.get(str(p['park_retry']), 'retried on request')})")
        _echo(f"    reason: {p['park_reason']}")
        _echo(f"    fix: {p['park_fix']}")
    if len(parked) > 20:
        _echo(f"  ... and {len(parked) - 20} more (`legal-judge sync --status` lists them all)")


def _print_fixes(parked: Sequence[Mapping[str, Any]]) -> None:
    """Each distinct fix once, with the entities it applies to."""
    by_fix: dict[str, list[str]] = {}
    for p in parked:
        by_fix.setdefault(str(p["park_fix"]), []).append(f"{p['entity_kind']} {p['entity_id']}")
    for fix, names in by_fix.items():
        more = f" and {len(names) - 3} more" if len(names) > 3 else ""
        _echo(f"fix ({', '.join(names[:3])}{more}): {fix}")


def _status(store: Store, doc: JsonDocument) -> None:
    counts = store.outbox_status()
    rows = store.outbox_pending()
    parked = store.outbox_parked()
    doc.set({"action": "status", "pending": counts["pending"], "delivered": counts["delivered"],
             "pending_entities": [{k: v for k, v in r.items()
                                   if k not in ("payload", "payload_json")} for r in rows],
             "parked": parked})
    _console.print(f"pending: {counts['pending']}  delivered: {counts['delivered']}  "
                   f"parked: {len(parked)}")
    if rows:
        _table("pending", [{"kind": r["entity_kind"], "id": r["entity_id"],
                            "attempts": r["attempts"], "last error": r["last_error"]}
                           for r in rows], ["kind", "id", "attempts", "last error"])
    if parked:
        _echo("parked (not delivered, kept in the outbox, never holding up the others):")
        _print_parked(parked, details=True)


def _drop(store: Store, ids: Sequence[str], every: bool, doc: JsonDocument) -> None:
    parked = store.outbox_parked()
    chosen = parked if every else [p for p in parked if p["entity_id"] in ids]
    unknown = sorted(set(ids) - {p["entity_id"] for p in parked})
    if unknown:
        raise LegalJudgeError(f"not parked: {', '.join(unknown)}",
                              fix="`legal-judge sync --status` lists the parked entities")
    store.outbox_drop([p["id"] for p in chosen])
    doc.set({"action": "drop", "dropped": chosen})
    _echo(f"dropped {_plural(len(chosen), 'parked entity', 'parked entities')} from the outbox "
          "(the store keeps what they refer to; queue one again to resend it)")
    _print_parked(chosen, details=False)


@click.command("sync")
@click.option("--status", "status_only", is_flag=True,
              help="only show what is pending and what is parked")
@click.option("--timeout", "timeout_s", type=click.FloatRange(min=0, min_open=True), default=30.0,
              show_default=True, help="Seconds the delivery may take (a rerun resumes).")
@click.option("--retry-parked", is_flag=True,
              help="retry every parked entity too (after applying its fix)")
@click.option("--drop", "drop_ids", multiple=True, metavar="ID",
              help="remove this parked entity from the outbox (repeatable; the store keeps it)")
@click.option("--drop-parked", is_flag=True,
              help="remove every parked entity from the outbox (the store keeps them)")
@json_option
def sync(status_only: bool, timeout_s: float, retry_parked: bool, drop_ids: tuple[str, ...],
         drop_parked: bool, as_json: bool) -> None:
    """Deliver the outbox (runs, audits, calibrations, labels) to Langfuse.

    Debias experiments are delivered too, as traces and scores like audits. An entity that cannot
    be delivered as stored is parked with its reason and fix; it never holds up the others. Exit
    0 when everything else was delivered, 2 when this sync parked an entity or Langfuse refused
    the keys, 3 when Langfuse failed (a rerun resumes).
    """
    store = Store()
    try:
        with json_output(as_json) as doc:
            if status_only:
                _status(store, doc)
            elif drop_ids or drop_parked:
                _drop(store, drop_ids, drop_parked, doc)
            else:
                _sync(store, timeout_s=timeout_s, retry_parked=retry_parked, doc=doc)
    finally:
        store.close()


def _sync(store: Store, *, timeout_s: float, retry_parked: bool, doc: JsonDocument) -> None:
    """Deliver the outbox and say what happened; raise when something was not delivered."""
    from legal_judge.sync.sink import sync_now

    report = sync_now(store, timeout_s=timeout_s, retry_parked=retry_parked)
    doc.set({"action": "sync", "configured": report.configured,
             "delivered": report.delivered, "failed": report.failed,
             "pending": report.pending, "newly_parked": report.newly_parked,
             "retried": report.retried, "timed_out": report.timed_out,
             "elapsed_s": round(report.elapsed_s, 3), "errors": report.errors,
             "notes": report.notes, "parked": report.parked})
    _console.print(f"delivered {report.delivered}, failed {report.failed}, "
                   f"pending {report.pending}, parked {len(report.parked)} "
                   f"({report.elapsed_s:.1f} s)")
    for note in report.notes:
        _echo(f"note: {note}")
    if report.parked:
        new = f"{report.newly_parked} new" if report.newly_parked else "none new"
        _echo(f"parked, not delivered ({new}):")
        _print_parked(report.parked, details=False)
        _print_fixes(report.parked)
    if report.keys_refused:
        raise SyncAuthError("some entities were not delivered: " + "; ".join(report.errors[:3]),
                            fix=f"{KEYS_FIX}; then run `legal-judge sync` again (the outbox "
                                "keeps everything)")
    if report.failed:
        raise SyncError("some entities were not delivered: " + "; ".join(report.errors[:3]),
                        fix="check Langfuse is reachable, then run `legal-judge sync` again")
    if report.newly_parked:
        raise LegalJudgeError(
            f"{_plural(report.newly_parked, 'entity', 'entities')} could not be delivered as "
            f"stored and {'was' if report.newly_parked == 1 else 'were'} parked; "
            + (f"the other {report.delivered} delivered" if report.delivered
               else "nothing else was waiting"),
            fix="apply the fix named above for each parked entity "
                "(`legal-judge sync --status` lists them again)")


@click.group()
def datasets() -> None:
    """Benchmark datasets in Langfuse."""


@datasets.command("push")
@click.argument("file", type=click.Path(exists=True, dir_okay=False))
@click.option("--name", required=True, help="the Langfuse dataset name")
@json_option
def datasets_push(file: str, name: str, as_json: bool) -> None:
    """Upload a JSONL/CSV/JSON benchmark as a Langfuse dataset (masked)."""
    from legal_judge.sync.langfuse_datasets import push_dataset

    with json_output(as_json) as doc:
        n = push_dataset(file, name=name)
        doc.set({"file": file, "name": name, "items": n,
                 "run_command": f"legal-judge run langfuse:{name}"})
    if as_json:
        return
    # The dataset is `run`'s positional DATASET argument (there is no --dataset option).
    _console.print(f"pushed {n} items to Langfuse dataset {name}; score it with\n"
                   f"  legal-judge run langfuse:{name}\n(add --ensemble FILE to choose the judges)")


COMMANDS: list[click.Command] = [prompts, sync, datasets]
