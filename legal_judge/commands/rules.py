"""``legal-judge rules``: what each rule-based finding does to an item's decision."""

from __future__ import annotations

import json

import click
from rich.console import Console

from legal_judge.commands.tables import Col, print_table

__all__ = ["COMMANDS"]

console = Console()


@click.command()
@click.option("--json", "as_json", is_flag=True, help="Print the table as JSON.")
def rules(as_json: bool) -> None:
    """Each rule-based finding and its effect on a decision (cap, fail, review, info)."""
    from legal_judge.benchmark.answer_rules import ANSWER_RULES_PATH, rules_table

    rows = rules_table()
    if as_json:
        click.echo(json.dumps({"table": str(ANSWER_RULES_PATH), "rules": rows}, indent=2))
        return
    print_table(console, f"Answer rules ({ANSWER_RULES_PATH.name})",
                [Col("finding", keep=True), Col("effect", keep=True), Col("caps"), Col("rule"),
                 Col("reason")],
                [[r["kind"], r["effect"],
                  ", ".join(f"{k} <= {v:g}" for k, v in r["caps"].items()) or "-",
                  r["rule"], r["reason"]] for r in rows])
    console.print("cap: the rubric is capped (the judges' figure stays in raw_scores); a cap that "
                  "meets the pass/fail rule fails the item with the reason. fail: the item fails. "
                  "review: flagged for human review. info: shown, changes nothing.")


COMMANDS: list[click.Command] = [rules]
