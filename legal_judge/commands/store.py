"""``legal-judge store copy SRC DST``: move a store between SQLite and PostgreSQL."""

from __future__ import annotations

from pathlib import Path

import click

from legal_judge.commands.core import console
from legal_judge.commands.json_out import json_option, json_output
from legal_judge.commands.tables import Col, print_table
from legal_judge.config import check_store_address, is_postgres_url, mask_url
from legal_judge.errors import ConfigError, GateFailure
from legal_judge.store import Store
from legal_judge.store.transfer import copy_store, row_counts

__all__ = ["COMMANDS", "store"]


def _shown(target: str) -> str:
    return mask_url(target) if is_postgres_url(target) else target


@click.group()
def store() -> None:
    """Copy a store between SQLite and PostgreSQL."""


@store.command("copy")
@click.argument("source")
@click.argument("target")
@json_option
def store_copy(source: str, target: str, as_json: bool) -> None:
    """Copy every row of SOURCE into TARGET (a SQLite file or a postgresql:// URL).

    Ids are kept (the audit log's chain arrives as it was); rows TARGET already holds are left
    alone, so the copy can be rerun. Then the row counts and the audit log's head are compared:
    exit 1 when they differ (TARGET held other rows before).
    """
    from legal_judge.audit.log import AuditLog

    check_store_address(source, named="SOURCE")
    check_store_address(target, named="TARGET")
    if not is_postgres_url(source) and not Path(source).is_file():
        # Opening a missing file would create an empty store and "copy" nothing.
        raise ConfigError(f"no store at {source}", code="store-missing",
                          fix="give an existing store file or a postgresql:// URL as SOURCE")
    with json_output(as_json) as doc:
        src, dst = Store(source), Store(target)
        copy_store(src, dst)
        counts = (row_counts(src), row_counts(dst))
        heads = (AuditLog(src).head(), AuditLog(dst).head())
        same = counts[0] == counts[1] and heads[0] == heads[1]
        doc.set({"source": _shown(source), "target": _shown(target), "passed": same,
                 "tables": {t: {"source": counts[0][t], "target": counts[1].get(t),
                                "same": counts[0][t] == counts[1].get(t)} for t in counts[0]},
                 "audit_log_head": {"source": heads[0], "target": heads[1],
                                    "same": heads[0] == heads[1]}})
        _say(source, target, counts, heads)


def _say(source: str, target: str, counts: tuple[dict[str, int], dict[str, int]],
         heads: tuple[str, str]) -> None:
    rows = [[table, str(counts[0][table]), str(counts[1][table]),
             "ok" if counts[0][table] == counts[1][table] else "differs"] for table in counts[0]]
    # The addresses on a line of their own, wrapped by the terminal: as a centred table title a
    # URL longer than the table was cut in the middle (`...postgres?o` / `ptions=...`).
    console.print(f"copy: {_shown(source)} -> {_shown(target)}", highlight=False, soft_wrap=True,
                  markup=False)
    print_table(console, "Rows per table",
                [Col("table", keep=True), Col("source", numeric=True),
                 Col("target", numeric=True), Col("check", keep=True)], rows)
    console.print(f"audit log head: source {heads[0][:16]}..., target {heads[1][:16]}..."
                  f" ({'same' if heads[0] == heads[1] else 'different'})", highlight=False)
    if counts[0] != counts[1] or heads[0] != heads[1]:
        raise GateFailure("the target does not hold exactly the source's rows",
                          fix="copy into an empty store (a new database or schema, or a new "
                              "file), or compare the tables marked 'differs'")
    console.print(f"copied: {_shown(target)} holds every row of {_shown(source)}",
                  highlight=False, soft_wrap=True, markup=False)


COMMANDS: list[click.Command] = [store]
