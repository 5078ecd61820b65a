"""``legal-judge audit``: run, stats, verify-log, diff, needed, gate, review, traffic, list."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import click
import yaml
from pydantic import ValidationError
from rich.console import Console

from legal_judge.commands.audit_render import print_report
from legal_judge.commands.ci_outputs import ci_options, write_ci_outputs
from legal_judge.commands.tables import Col, echo_json, print_table, styled, wrote
from legal_judge.errors import ConfigError, GateFailure, InputError, Problem
from legal_judge.store import Store

console = Console()
err_console = Console(stderr=True)

_STAT_OPTIONS = [
    click.option("--config", "config_file", type=click.Path(dir_okay=False, path_type=Path),
                 help="YAML file with any of these options (command-line values win)."),
    click.option("--dimensions", help="Comma-separated dimensions (default: all built-in)."),
    click.option("--dimensions-file", help="YAML file with extra dimensions."),
    click.option("--pairs", type=int, help="Test pairs per dimension (default 60)."),
    click.option("--disparity-threshold", type=float, help="Flag pairs with |A-B| above (0.5)."),
    click.option("--significance", type=float, help="Significance threshold (0.05)."),
    click.option("--min-effect", type=float, help="Minimum |effect size| to flag (0.2)."),
    click.option("--min-complete-pairs", type=int, help="Fewer: 'insufficient data' (10)."),
    click.option("--min-sample", type=int, help="Per demographic subgroup, else stop (50)."),
    click.option("--method", type=click.Choice(["auto", "t-test", "wilcoxon"])),
    click.option("--correction", type=click.Choice(["holm", "bh", "none"])),
    click.option("--probes", help="Comma-separated discrimination probes (default: all built-in; "
                                  "'none' runs none, and nothing is then certified)."),
    click.option("--probes-file", help="YAML file with extra probes."),
    click.option("--probe-pairs", type=int, help="At most this many pairs per probe (60)."),
    click.option("--min-sensitivity", type=float,
                 help="Share of probe pairs that must move by a scale step (0.7)."),
    click.option("--equivalence-margin", type=float,
                 help="TOST margin in points (default: the disparity threshold)."),
]


def _stat_options(fn: Any) -> Any:
    for option in reversed(_STAT_OPTIONS):
        fn = option(fn)
    return fn


def _settings(config_file: Path | None, cli_values: dict[str, Any]) -> Any:
    from legal_judge.audit.design import AuditSettings

    base: dict[str, Any] = {}
    if config_file is not None:
        try:
            loaded = yaml.safe_load(config_file.read_text(encoding="utf-8")) or {}
        except (OSError, yaml.YAMLError) as exc:
            raise InputError([Problem(str(config_file), None, None, f"cannot read: {exc}")]) from None
        if not isinstance(loaded, dict):
            raise InputError([Problem(str(config_file), 1, None, "expected a mapping of options")])
        base = {k.replace("-", "_"): v for k, v in loaded.items()}
    values = {**base, **{k: v for k, v in cli_values.items() if v is not None}}
    for key in ("dimensions", "probes"):
        if isinstance(values.get(key), str):
            values[key] = [d.strip() for d in values[key].split(",") if d.strip()]
    if values.get("probes") == ["none"]:
        values["probes"] = []
    extra = {k: values.pop(k) for k in ("judge", "items", "out") if k in values}
    try:
        return AuditSettings.model_validate(values), extra
    except ValidationError as exc:
        raise InputError([Problem(str(config_file or "command line"), None,
                                  ".".join(str(p) for p in e["loc"]) or None, e["msg"])
                          for e in exc.errors()]) from None


def _write(report: dict[str, Any], out: Path | None) -> None:
    if out is not None:
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(json.dumps(report, indent=2, ensure_ascii=False), encoding="utf-8")
        wrote(console, out, what="report JSON")


@click.group(short_help="Audit a judge: can it tell good from bad, is it biased, what is ruled out.")
def audit() -> None:
    """Audit a judge: can it tell good answers from bad, does an irrelevant attribute move it,
    and how large a bias is ruled out (a JSON report, a verdict, a CI gate)."""


@audit.command("run")
@click.option("--judge", "judge_config", help="Judge spec, ensemble TOML or target YAML.")
@click.option("--items", type=click.Path(dir_okay=False, path_type=Path),
              help="Base items (JSONL/CSV); default: the bundled sample.")
@click.option("--out", type=click.Path(dir_okay=False, path_type=Path), help="Report JSON file.")
@_stat_options
@click.option("--seed", type=int, help="Design seed (recorded in the report).")
@click.option("--noise-pairs", type=int, help="Pairs per dimension judged twice (20).")
@click.option("--concurrency", type=int, help="Judge calls in flight (16).")
@click.option("--rubric", help="Score one rubric instead of the mean of numeric rubrics.")
@click.option("--llm-variants", help="Auditor model spec: LLM-written paraphrase variants.")
@click.option("--all-judges", is_flag=True, help="Audit every judge of an ensemble.")
@click.option("--no-cache", is_flag=True, help="Do not read the provider cache.")
@click.option("--max-severity", type=click.Choice(["none", "low", "medium", "high", "critical"]),
              help="Also gate: exit 1 unless the judge is certified and the severity is at most "
                   "this.")
@click.option("--allow-inconclusive", is_flag=True,
              help="With --max-severity: an inconclusive verdict passes the gate too.")
@click.option("--batch", is_flag=True,
              help="Send the judge calls as provider batch jobs (OpenAI, Anthropic; half price, "
                   "results within 24 h); other judges run online.")
@click.option("--no-wait", is_flag=True,
              help="With --batch: submit, merge what has ended, and return; finish later with "
                   "--resume AUDIT_ID.")
@click.option("--resume", "resume_id", metavar="AUDIT_ID",
              help="Continue an interrupted or --no-wait audit with its stored judge, items and "
                   "settings; stored batches are polled, not resubmitted.")
@click.option("--poll-interval", type=float, default=30.0, show_default=True,
              help="With --batch: seconds between polls of the open batches.")
def run_cmd(judge_config: str | None, items: Path | None, out: Path | None, config_file: Path | None,
            all_judges: bool, no_cache: bool, max_severity: str | None, allow_inconclusive: bool,
            batch: bool, no_wait: bool, resume_id: str | None, poll_interval: float,
            **options: Any) -> None:
    """Run a bias audit of a judge and write the report.

    With --batch the command waits until every batch has ended (batch ids are stored under the
    audit id: legal-judge batches status AUDIT_ID), unless --no-wait. An audit stopped for any
    reason (--no-wait, Ctrl-C, a closed laptop, a provider outage) continues with
    --resume AUDIT_ID: judgments already made come from the cache and are not paid twice.
    """
    if no_wait and not (batch or resume_id):
        raise ConfigError("--no-wait needs --batch", code="audit-no-wait",
                          fix="add --batch, or drop --no-wait")
    store = Store()
    if resume_id is not None:
        given = [name for name, value in (("--judge", judge_config), ("--items", items),
                                          ("--config", config_file), ("--all-judges", all_judges),
                                          ("--no-cache", no_cache))
                 if value] + [f"--{k.replace('_', '-')}" for k, v in options.items()
                              if v is not None]
        if given:
            raise ConfigError(f"--resume continues the audit as it was started; {', '.join(given)} "
                              "cannot change it", code="audit-resume-options",
                              fix=f"run `legal-judge audit run --resume {resume_id}` without them")
        outcome = asyncio.run(_resume_one(resume_id, store, batch=batch, wait=not no_wait,
                                          poll_interval=poll_interval))
        _conclude([outcome], out, max_severity, store, allow_inconclusive=allow_inconclusive)
        return
    from legal_judge.audit.resume import audit_source
    from legal_judge.audit.target import load_targets
    from legal_judge.dataset import load_dataset, sample_dataset_path

    settings, extra = _settings(config_file, options)
    _check_selection(settings)
    judge_config = judge_config or extra.get("judge")
    if not judge_config:
        raise ConfigError("no judge to audit", code="audit-judge-missing",
                          fix="pass --judge simulated:demo-openai (or an ensemble TOML / target YAML)")
    items_path = items or (Path(extra["items"]) if extra.get("items") else sample_dataset_path())
    out = out or (Path(extra["out"]) if extra.get("out") else None)
    base_items = load_dataset(items_path)
    targets = load_targets(judge_config, store=store, rubric=settings.rubric, all_judges=all_judges,
                           use_cache=not no_cache, request_seed=settings.request_seed)
    runner = _auditor(batch, wait=not no_wait, poll_interval=poll_interval,
                      source=audit_source(judge_config, batch=batch))
    outcomes = [asyncio.run(_run_one(runner, target, base_items, settings, store))
                for target in targets]
    _conclude(outcomes, out, max_severity, store, allow_inconclusive=allow_inconclusive)


def _check_selection(settings: Any) -> None:
    """Unknown dimensions or probes (and unreadable files of them) fail before any audit starts."""
    from legal_judge.audit.dimensions import resolve_dimensions
    from legal_judge.audit.probes import resolve_probes

    resolve_dimensions(settings.dimensions, extra_file=settings.dimensions_file)
    resolve_probes(settings.probes, extra_file=settings.probes_file)


def _auditor(batch: bool, *, wait: bool, poll_interval: float, source: dict[str, Any]) -> Any:
    """``run_audit`` (or its batch form) with the options every target shares."""
    import functools

    if batch:
        from legal_judge.batch.audit import run_audit_batch

        return functools.partial(run_audit_batch, poll_interval_s=poll_interval, wait=wait,
                                 source=source)
    from legal_judge.audit.execute import run_audit

    return functools.partial(run_audit, source=source)


async def _resume_one(audit_id: str, store: Store, *, batch: bool, wait: bool,
                      poll_interval: float) -> Any:
    from legal_judge.audit.resume import resume_plan, resume_target

    plan = resume_plan(store, audit_id)
    if batch and not plan.batch:
        err_console.print(f"audit {audit_id} was started online; it continues in batch mode")
    batch = batch or plan.batch
    target = await resume_target(plan, store)
    runner = _auditor(batch, wait=wait, poll_interval=poll_interval,
                      source={**plan.source, "batch": batch})
    return await _run_one(runner, target, plan.items, plan.settings, store, audit_id=audit_id,
                          resume=True)


def _conclude(outcomes: list[Any], out: Path | None, max_severity: str | None,
              store: Store, *, allow_inconclusive: bool = False) -> None:

    for outcome in outcomes:
        if outcome.status == "submitted":
            console.print(f"audit {outcome.audit_id}: batches submitted and still running. "
                          f"See `legal-judge batches status {outcome.audit_id}`; finish with "
                          f"`legal-judge audit run --resume {outcome.audit_id}`")
            continue
        print_report(outcome.report)
        target_out = out if len(outcomes) == 1 or out is None else \
            out.with_name(f"{out.stem}.{outcome.judge_id}{out.suffix}")
        _write(outcome.report, target_out)
    bad = [o for o in outcomes if o.status not in ("complete", "submitted")]
    if bad:
        raise GateFailure(f"audit {bad[0].audit_id} ended with status {bad[0].status}",
                          fix=bad[0].report["overall_assessment"]["summary"])
    if max_severity is not None:
        for o in outcomes:
            if o.status == "complete":
                _gate(o.report, max_severity=max_severity, store=store,
                      allow_inconclusive=allow_inconclusive)


async def _run_one(run_audit: Any, target: Any, items: Any, settings: Any, store: Store,
                   **kwargs: Any) -> Any:
    from rich.progress import Progress

    from legal_judge.audit.execute import new_audit_id

    kwargs.setdefault("audit_id", new_audit_id())
    # Printed first: the id is what `--resume` needs if this process does not see the end.
    err_console.print(f"audit {kwargs['audit_id']} of {target.label}"
                      + (" resumed" if kwargs.get("resume") else "")
                      + f" (if it stops: legal-judge audit run --resume {kwargs['audit_id']})")
    with Progress(console=err_console, transient=True) as progress:
        task = progress.add_task(f"auditing {target.label}", total=None)

        def tick(done: int, total: int) -> None:
            progress.update(task, completed=done, total=total)

        try:
            return await run_audit(target, items, settings, store=store, progress=tick, **kwargs)
        finally:
            await target.aclose()


@audit.command("stats")
@click.argument("pairs_file", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--out", type=click.Path(dir_okay=False, path_type=Path), help="Report JSON file.")
@_stat_options
def stats_cmd(pairs_file: Path, out: Path | None, config_file: Path | None, **options: Any) -> None:
    """Compute the bias report from pairs scored elsewhere (JSONL rows).

    Dimension rows name a ``dimension``; discrimination-probe rows name a ``probe`` and an
    ``expected_direction`` (drop or rise) instead, with A the original answer and B the degraded
    one. The same rules apply, so a judge scored elsewhere gets the same verdict.
    """
    from legal_judge.audit.pairs_io import read_pairs
    from legal_judge.audit.report import build_report

    settings, _ = _settings(config_file, options)
    rows = read_pairs(pairs_file)
    dims = [d for d in settings.dimensions or [] if any(r.dimension == d for r in rows)] or None
    report = build_report(rows, settings, dimensions=dims)
    print_report(report)
    _write(report, out)


@audit.command("verify-log")
@click.option("--expect-head", help="A head hash printed by an earlier verification.")
def verify_log_cmd(expect_head: str | None) -> None:
    """Verify the audit log's hash chain; exit 1 on any edited, deleted or reordered entry."""
    from legal_judge.audit.log import AuditLog

    result = AuditLog(Store()).verify(expect_head=expect_head)
    if not result.ok:
        for p in result.problems[:50]:
            err_console.print(f"[red]{p}[/red]")
        raise GateFailure(f"the audit log is not intact ({len(result.problems)} problems)",
                          fix="restore the store from a backup; the log must never be edited")
    console.print(f"[green]audit log intact[/green]: {result.entries} entries, head {result.head}")


@audit.command("diff")
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


@audit.command("needed")
@click.option("--judge", "judge_config", required=True, help="Spec, ensemble TOML or target YAML.")
@click.option("--all-judges", is_flag=True,
              help="Kept for scripts: an ensemble's judges are always all checked.")
@click.option("--rubric", help="As given to audit run.")
def needed_cmd(judge_config: str, all_judges: bool, rubric: str | None) -> None:
    """Exit 1 when a judge (its judge_id) has no audit that judged something.

    Every judge of an ensemble must be audited; an audit that stopped before any judge call
    (INSUFFICIENT_DATA) does not count.
    """
    from legal_judge.audit.history import audit_coverage
    from legal_judge.audit.target import load_targets

    del all_judges  # an ensemble always needs every judge audited
    store = Store()
    targets = load_targets(judge_config, store=store, rubric=rubric, all_judges=True)
    coverage = audit_coverage(store, [(t.judge_id, t.label) for t in targets])
    for c in coverage:
        mark = "[green]audited[/green]" if c.audit_id else "[red]missing[/red]"
        console.print(f"{mark} {c.label} ({c.judge_id}): {c.note}")
    missing = [c for c in coverage if c.audit_id is None]
    if missing:
        fix = f"legal-judge audit run --judge {judge_config}"
        if len(targets) > 1:
            fix += " --all-judges"
        if rubric:
            fix += f" --rubric {rubric}"
        raise GateFailure(f"{len(missing)} of {len(coverage)} judge(s) have no audit that judged "
                          f"something: {', '.join(f'{c.label} ({c.judge_id})' for c in missing)}",
                          fix=fix)


@audit.command("gate")
@click.argument("report_ref")
@click.option("--max-severity", default="low", show_default=True,
              type=click.Choice(["none", "low", "medium", "high", "critical"]))
@click.option("--allow-inconclusive", is_flag=True,
              help="Let an inconclusive verdict pass (an audit that judged nothing never does).")
@click.option("--high-stakes/--not-high-stakes", default=None,
              help="Override the report's high_stakes flag.")
@ci_options
def gate_cmd(report_ref: str, max_severity: str, allow_inconclusive: bool,
             high_stakes: bool | None, junit: Path | None, summary_md: Path | None) -> None:
    """Exit 1 unless the judge is certified (every probe passes, nothing flagged, every
    dimension equivalent), the severity is at most the threshold, and a high-stakes judge's
    latest audit is approved."""
    from legal_judge.audit.history import load_report

    store = Store()
    _gate(load_report(report_ref, store=store), max_severity=max_severity, store=store,
          allow_inconclusive=allow_inconclusive, high_stakes=high_stakes, junit=junit,
          summary_md=summary_md)


def _gate(report: dict[str, Any], *, max_severity: str, store: Store, allow_inconclusive: bool,
          high_stakes: bool | None = None, junit: Path | None = None,
          summary_md: Path | None = None) -> None:
    from legal_judge.audit.gate import gate_decision, gate_report
    from legal_judge.reports.ci import audit_gate_suite

    decision = gate_decision(report, max_severity=max_severity,
                             allow_inconclusive=allow_inconclusive, store=store,
                             high_stakes=high_stakes)
    console.print(decision.sentence, markup=False)
    write_ci_outputs(console, lambda: audit_gate_suite(report, decision), junit=junit,
                     summary_md=summary_md)
    if not decision.passed:
        for check in decision.failed():
            if check.kind in ("probe", "dimension"):
                err_console.print(f"  {check.kind} {check.name}: {check.outcome}: {check.reason}",
                                  markup=False)
        gate_report(report, max_severity=max_severity, allow_inconclusive=allow_inconclusive,
                    store=store, high_stakes=high_stakes)
    note = " (allowed by --allow-inconclusive)" if decision.verdict == "inconclusive" else ""
    console.print(f"[green]gate passed[/green]: verdict {decision.verdict}{note}, severity "
                  f"{decision.severity} <= {max_severity}")


@audit.command("review")
@click.argument("audit_id")
@click.option("--approve/--reject", required=True, help="Sign off or reject the findings.")
@click.option("--reviewer", required=True, help="Your name.")
@click.option("--note", default="", help="What you checked.")
def review_cmd(audit_id: str, approve: bool, reviewer: str, note: str) -> None:
    """Record a human sign-off of an audit's findings and test design in the audit log."""
    from legal_judge.audit.history import record_review

    out = record_review(Store(), audit_id, approve=approve, reviewer=reviewer, note=note)
    console.print(f"{out['decision']} by {reviewer} (log entry {out['seq']})")


@audit.command("traffic")
@click.option("--since", default="7d", show_default=True, help="7d, 24h, 2w or an ISO date.")
@click.option("--attribute", required=True, help="metadata.client_region, jurisdiction, length_bucket...")
@click.option("--input", "input_file", type=click.Path(dir_okay=False, path_type=Path),
              help="JSONL export (e.g. Langfuse scores with trace metadata) instead of the store.")
@click.option("--rubric", help="Score one rubric instead of the mean.")
@click.option("--min-sample", default=50, show_default=True, type=int)
@click.option("--method", default="auto", type=click.Choice(["auto", "welch", "mann-whitney"]))
@click.option("--reference", help="Group the others are compared with (default: the largest).")
@click.option("--out", type=click.Path(dir_okay=False, path_type=Path))
def traffic_cmd(since: str, attribute: str, input_file: Path | None, rubric: str | None,
                min_sample: int, method: str, reference: str | None, out: Path | None) -> None:
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
    _write(result, out)
    if result["status"] != "complete":
        raise GateFailure(f"traffic audit: {result['summary']}",
                          fix=f"widen --since or lower the grouping granularity (min {min_sample})")


@audit.command("list")
@click.option("--limit", default=20, show_default=True, type=int)
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
        audits.append({**r, "status": status,
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


@audit.command("dimensions")
@click.option("--dimensions-file", type=click.Path(exists=True, dir_okay=False, path_type=Path),
              default=None, help="Also list the dimensions of this YAML file.")
@click.option("--probes-file", type=click.Path(exists=True, dir_okay=False, path_type=Path),
              default=None, help="Also list the discrimination probes of this YAML file.")
@click.option("--json", "as_json", is_flag=True, help="Print the listing as JSON.")
def dimensions_cmd(dimensions_file: Path | None, probes_file: Path | None, as_json: bool) -> None:
    """The bias dimensions and discrimination probes an audit measures."""
    from legal_judge.audit.catalogue import catalogue_rows

    rows = catalogue_rows(dimensions_file, probes_file)
    if as_json:
        echo_json(rows)
        return
    print_table(console, "what an audit measures",
                [Col("kind", keep=True), Col("name", keep=True), Col("type", optional=True),
                 Col("perturbation", optional=True), Col("source", optional=True),
                 Col("description")],
                [[r["kind"], r["name"], r["type"], r["perturbation"], r["source"],
                  r["description"]] for r in rows])


COMMANDS: list[click.Command] = [audit]
