"""``legal-judge audit traffic``: disparities between groups of production scores
(observational; the experimental audit is ``audit run``)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click
from rich.console import Console

from legal_judge.commands.audit_render import write_report_json
from legal_judge.commands.json_out import json_option, json_output
from legal_judge.commands.tables import Col, print_table, styled
from legal_judge.errors import GateFailure
from legal_judge.store import Store

__all__ = ["traffic_cmd"]

console = Console()


@click.command("traffic")
@click.option("--since", default="7d", show_default=True, help="7d, 24h, 2w or an ISO date.")
@click.option("--attribute", required=True, help="metadata.client_region, jurisdiction, length_bucket...")
@click.option("--input", "input_file", type=click.Path(dir_okay=False, path_type=Path),
              help="JSONL export (e.g. Langfuse scores with trace metadata) instead of the store.")
@click.option("--rubric", help="Score one rubric instead of the mean.")
@click.option("--min-sample", default=50, show_default=True, type=int)
@click.option("--method", default="auto", type=click.Choice(["auto", "welch", "mann-whitney"]))
@click.option("--reference", help="Group the others are compared with (default: the largest).")
@click.option("--out", type=click.Path(dir_okay=False, path_type=Path))
@json_option
def traffic_cmd(since: str, attribute: str, input_file: Path | None, rubric: str | None,
                min_sample: int, method: str, reference: str | None, out: Path | None,
                as_json: bool) -> None:
    """Disparities between groups of production scores (observational)."""
    from legal_judge.audit.log import AuditLog
    from legal_judge.audit.traffic import (
        parse_since,
        traffic_audit,
        traffic_rows_from_file,
        traffic_rows_from_store,
    )

    start = parse_since(since)
    store = Store()
    rows = (traffic_rows_from_file(input_file, since=start) if input_file
            else traffic_rows_from_store(store, since=start, rubric=rubric))
    result = traffic_audit(rows, attribute=attribute, min_sample=min_sample, method=method,
                           reference=reference)
    result["since"] = start.isoformat()
    AuditLog(store).append(f"traffic-{start:%Y%m%d}", "traffic_audit", result)
    with json_output(as_json) as doc:
        doc.set(result)
        _print_traffic(result, attribute=attribute, start=start, out=out, min_sample=min_sample)


def _print_traffic(result: dict[str, Any], *, attribute: str, start: Any, out: Path | None,
                   min_sample: int) -> None:
    print_table(console, f"traffic audit by {attribute} since {start:%Y-%m-%d}",
                [Col("group", keep=True), Col("vs"), Col("n", numeric=True),
                 Col("mean", numeric=True), Col("diff", numeric=True), Col("95% CI"),
                 Col("test", optional=True), Col("p adj", numeric=True),
                 Col("effect", numeric=True), Col("flag", keep=True)],
                [[c["group"], c["versus"], str(c["n_x"]), f"{c['mean_x']:.2f}",
                  f"{c['mean_difference']:+.2f}", f"[{c['ci95'][0]:+.2f}, {c['ci95'][1]:+.2f}]",
                  c["test_used"], f"{c['p_value_adjusted']:.2g}", f"{c['effect_size']:+.2f}",
                  styled("FLAG", "red") if c["flagged"] else "ok"]
                 for c in result["comparisons"]])
    if result.get("reference"):
        ref = result["reference"]
        console.print(f"reference group: {ref} ({result['group_sizes'][ref]} items, "
                      f"{result['reference_why']}); each other group is compared with it",
                      markup=False)
    console.print(f"counting: {result['counting']}", markup=False)
    console.print(f"status: {result['status']}; {result['summary']}")
    write_report_json(result, out)
    if result["status"] != "complete":
        raise GateFailure(f"traffic audit: {result['summary']}",
                          fix=f"widen --since or lower the grouping granularity (min {min_sample})")
