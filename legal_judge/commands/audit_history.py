"""``legal-judge audit list``, ``diff`` and ``verify-log``: the audits the store holds, how two audits of
the same judge differ, and whether the audit log's hash chain is intact."""

from __future__ import annotations

import json
from typing import Any

import click
from rich.console import Console

from legal_judge.commands.json_out import json_option, json_output
from legal_judge.commands.tables import Col, echo_json, print_table
from legal_judge.errors import ConfigError, GateFailure
from legal_judge.store import Store

__all__ = ["diff_cmd", "list_cmd", "verify_log_cmd"]

console = Console()
err_console = Console(stderr=True)


@click.command("verify-log")
@click.option("--expect-head", help="A head hash printed by an earlier verification.")
@json_option
def verify_log_cmd(expect_head: str | None, as_json: bool) -> None:
    """Verify the audit log's hash chain; exit 1 on any edited, deleted or reordered entry."""
    from legal_judge.audit.log import AuditLog

    result = AuditLog(Store()).verify(expect_head=expect_head)
    with json_output(as_json) as doc:
        doc.set({"intact": result.ok, "entries": result.entries, "head": result.head,
                 "expected_head": expect_head, "problems": list(result.problems)})
        _say_verified(result)


def _say_verified(result: Any) -> None:
    if not result.ok:
        for p in result.problems[:50]:
            err_console.print(f"[red]{p}[/red]")
        raise GateFailure(f"the audit log is not intact ({len(result.problems)} problems)",
                          fix="restore the store from a backup; the log must never be edited")
    console.print(f"[green]audit log intact[/green]: {result.entries} entries, head {result.head}")


@click.command("diff")
@click.argument("old")
@click.argument("new")
@click.option("--json", "as_json", is_flag=True, help="Print the comparison as JSON.")
@click.option("--force", is_flag=True,
              help="Compare audits of different base judges anyway (the statuses then compare "
                   "two judges, not a judge over time).")
def diff_cmd(old: str, new: str, as_json: bool, force: bool) -> None:
    """Compare two audits of the same base judge (ids or report files) per dimension.

    The base judge is the provider, model, rubric set (and --rubric); the debias mode may differ,
    which is how a mitigation is re-audited. Different base judges: exit 2 unless --force.
    """
    from legal_judge.audit.history import (
        base_judge_of_report,
        check_comparable,
        diff_reports,
        load_report,
    )

    store = Store()
    before, after = load_report(old, store=store), load_report(new, store=store)
    forced = False
    try:
        check_comparable(before, after, old_ref=old, new_ref=new)
    except ConfigError as exc:
        if not force:
            raise
        forced = True
        err_console.print(f"warning: {exc} (--force: compared anyway)")
    rows = diff_reports(before, after)
    if as_json:
        click.echo(json.dumps(rows, indent=2))
        return
    def fmt(v: float | None) -> str:
        return "-" if v is None else f"{v:+.2f}"

    base = base_judge_of_report(after)
    title = f"{old} -> {new}" + ("" if forced or base is None else f" ({base['key']})")
    print_table(console, title,
                [Col("dimension", keep=True), Col("effect old", numeric=True),
                 Col("effect new", numeric=True), Col("change", numeric=True),
                 Col("status", keep=True), Col("over-correction")],
                [[r["dimension"], fmt(r["effect_old"]), fmt(r["effect_new"]),
                  fmt(r["effect_change"]), r["status"], "yes" if r["sign_flip"] else ""]
                 for r in rows])
    worse = [r for r in rows if r["worse"]]
    if worse:
        alpha = (after.get("audit_metadata") or {}).get("significance_threshold") or 0.05
        console.print("worse: the bias moved away from zero, one-sided p below the new audit's "
                      f"significance {alpha:g} ("
                      + ", ".join(f"{r['dimension']} p = {r['moved_away_p']:.2g}" for r in worse)
                      + ")", markup=False, highlight=False)


@click.command("list")
@click.option("--limit", default=20, show_default=True, type=click.IntRange(min=1))
@click.option("--json", "as_json", is_flag=True, help="Print the audits as JSON.")
def list_cmd(limit: int, as_json: bool) -> None:
    """The most recent audits in the store (an audit whose process is gone is shown interrupted)."""
    from legal_judge.audit.execute import RESUMABLE
    from legal_judge.audit.history import review_state
    from legal_judge.run_owner import audit_resume_command, displayed_status, run_owner

    store = Store()
    rows = store.audits.recent(limit=limit)
    owners = store.owners("audit", [r["id"] for r in rows])
    audits = []
    for r in rows:
        state = review_state(store, r["id"])
        status = displayed_status(r["status"], run_owner(owners.get(r["id"], {})))
        # Running (its process is alive) is not resumable; interrupted, failed, submitted are.
        resume = audit_resume_command(r["id"]) if status in RESUMABLE and status != "running" \
            else None
        audits.append({**dict(r), "status": status,
                       "review": state["decision"] if state else None, "resume_command": resume})
    if as_json:
        echo_json(audits)
        return
    print_table(console, "audits",
                [Col("audit", keep=True), Col("created", optional=True), Col("judge_id", keep=True),
                 Col("status", keep=True), Col("severity", keep=True), Col("review", keep=True)],
                [[a["id"], a["created_at"][:19].replace("T", " "), a["judge_id"], a["status"],
                  a["severity"] or "", a["review"] or ""] for a in audits],
                empty="no audits yet: `legal-judge audit run --judge SPEC` makes one")
    unfinished = [a["resume_command"] for a in audits if a["resume_command"]]
    if unfinished:
        console.print("unfinished audits can be finished (judgments made are not repeated):",
                      highlight=False)
        for command in unfinished:
            console.print(f"  {command}", soft_wrap=True, highlight=False, markup=False)
