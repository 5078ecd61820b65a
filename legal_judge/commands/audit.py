"""``legal-judge audit``: the group, and measuring a judge: run, stats, traffic, dimensions.

The release decisions (gate, needed, review) are in commands/audit_gate.py, the stored history
(list, diff, verify-log) in commands/audit_history.py, the printed report in commands/audit_render.py.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click
from rich.console import Console

from legal_judge.commands.audit_gate import (
    apply_gate,
    gate_cmd,
    gate_flags,
    gate_policy,
    needed_cmd,
    review_cmd,
)
from legal_judge.commands.audit_history import diff_cmd, list_cmd, verify_log_cmd
from legal_judge.commands.audit_options import audit_settings, stat_options
from legal_judge.commands.audit_render import print_outcomes, print_report, write_report_json
from legal_judge.commands.audit_traffic import traffic_cmd
from legal_judge.commands.batches import batch_options, check_no_wait
from legal_judge.commands.json_out import json_option, json_output
from legal_judge.commands.policy import policy_options
from legal_judge.commands.tables import Col, echo_json, print_table
from legal_judge.errors import ConfigError, GateFailure, LegalJudgeError
from legal_judge.files import check_writable
from legal_judge.store import Store

if TYPE_CHECKING:
    from legal_judge.commands.json_out import JsonDocument
    from legal_judge.policy import PolicyInForce

console = Console()
err_console = Console(stderr=True)


@click.group(short_help="Audit a judge: can it tell good from bad, is it biased, what is ruled out.")
def audit() -> None:
    """Audit a judge: can it tell good answers from bad, does an irrelevant attribute move it,
    and how large a bias is ruled out (a JSON report, a verdict, a CI gate)."""


# Subcommands with their own modules: the release decisions and the stored history.
for _command in (gate_cmd, needed_cmd, review_cmd, diff_cmd, list_cmd, verify_log_cmd,
                 traffic_cmd):
    audit.add_command(_command)


@audit.command("run")
@click.option("--judge", "judge_config", help="Judge spec, ensemble TOML or target YAML.")
@click.option("--items", type=click.Path(dir_okay=False, path_type=Path),
              help="Base items (JSONL/CSV); default: the bundled sample.")
@click.option("--out", type=click.Path(dir_okay=False, path_type=Path), help="Report JSON file.")
@stat_options
@click.option("--seed", type=int, help="Design seed (recorded in the report).")
@click.option("--noise-pairs", type=int, help="Pairs per dimension judged twice (20).")
@click.option("--concurrency", type=int, help="Judge calls in flight (16).")
@click.option("--rubric", help="Score one rubric instead of the mean of numeric rubrics.")
@click.option("--llm-variants", help="Auditor model spec: LLM-written paraphrase variants.")
@click.option("--all-judges", is_flag=True, hidden=True,
              help="Kept for scripts: every judge of an ensemble is always audited.")
@click.option("--no-cache", is_flag=True, help="Do not read the provider cache.")
@gate_flags
@batch_options("the judge calls (OpenAI, Anthropic; other judges run online)",
               "half price, results within 24 h", "--resume AUDIT_ID")
@click.option("--resume", "resume_id", metavar="AUDIT_ID",
              help="Continue an interrupted or --no-wait audit with its stored judge, items and "
                   "settings; stored batches are polled, not resubmitted.")
@click.option("--poll-interval", type=float, default=30.0, show_default=True,
              help="With --batch: seconds between polls of the open batches.")
@policy_options
@json_option
def run_cmd(judge_config: str | None, items: Path | None, out: Path | None, config_file: Path | None,
            all_judges: bool, no_cache: bool, max_severity: str | None,
            allow_inconclusive: bool | None, batch: bool, no_wait: bool, resume_id: str | None,
            poll_interval: float, policy_file: Path | None, overrides: tuple[str, ...],
            as_json: bool, **options: Any) -> None:
    """Run a bias audit of a judge and write the report.

    With --batch the command waits until every batch has ended (batch ids are stored under the
    audit id: legal-judge batches status AUDIT_ID), unless --no-wait. An audit stopped for any
    reason (--no-wait, Ctrl-C, a closed laptop, a provider outage) continues with
    --resume AUDIT_ID: judgments already made come from the cache and are not paid twice.

    With --max-severity (or --policy / --override) the report then goes through the audit gate
    under the policy, exactly as `legal-judge audit gate REPORT` would.
    """
    check_no_wait(no_wait, batch or resume_id is not None, code="audit-no-wait")
    # Loaded before any judge call: a loosening flag is refused (exit 2) before anything is paid.
    policy = (gate_policy(policy_file, overrides, max_severity=max_severity,
                          allow_inconclusive=allow_inconclusive)
              if max_severity or allow_inconclusive or policy_file or overrides else None)
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
        from legal_judge.audit.resume import resume_plan

        plan = resume_plan(store, resume_id)
        # The report goes where the audit was started to write it, unless --out says otherwise.
        out = out or (Path(plan.source["out"]) if plan.source.get("out") else None)
        if out is not None:
            check_writable(out, option="--out")
        with json_output(as_json) as doc:
            outcome = asyncio.run(_resume_one(plan, store, batch=batch, wait=not no_wait,
                                              poll_interval=poll_interval))
            _conclude([outcome], out, policy, store, doc)
        return
    from legal_judge.audit.resume import audit_source
    from legal_judge.audit.target import load_targets
    from legal_judge.dataset import load_dataset, sample_dataset_path

    settings, extra = audit_settings(config_file, options)
    _check_selection(settings)
    judge_config = judge_config or extra.get("judge")
    if not judge_config:
        raise ConfigError("no judge to audit", code="audit-judge-missing",
                          fix="pass --judge simulated:demo-openai (or an ensemble TOML / target YAML)")
    items_path = items or (Path(extra["items"]) if extra.get("items") else sample_dataset_path())
    out = out or (Path(extra["out"]) if extra.get("out") else None)
    if out is not None:
        check_writable(out, option="--out")  # before any audit row or judge call
    base_items = load_dataset(items_path)
    # Every judge of an ensemble: each judge gates the ensemble's verdicts (only the first was
    # audited, and nothing said so). --all-judges is kept for scripts.
    del all_judges
    targets = load_targets(judge_config, store=store, rubric=settings.rubric,
                           use_cache=not no_cache, request_seed=settings.request_seed)
    if len(targets) > 1:
        err_console.print(f"auditing all {len(targets)} judges of {judge_config}, one audit "
                          f"each: {', '.join(t.label for t in targets)}", soft_wrap=True,
                          markup=False, highlight=False)
    runner = _auditor(batch, wait=not no_wait, poll_interval=poll_interval)
    source = audit_source(judge_config, batch=batch, use_cache=not no_cache)
    with json_output(as_json) as doc:
        outcomes = [asyncio.run(_run_one(runner, target, base_items, settings, store,
                                         source=_with_out(source, out, target, len(targets))))
                    for target in targets]
        _conclude(outcomes, out, policy, store, doc)


def _with_out(source: dict[str, Any], out: Path | None, target: Any, n: int) -> dict[str, Any]:
    """The audit's ``source`` with the report file it writes (absolute), so that ``--resume``
    writes it too."""
    file = _out_file(out, target.judge_id, n)
    return source if file is None else {**source, "out": str(file.resolve())}


def _check_selection(settings: Any) -> None:
    """Every option is checked before any audit row exists: a user mistake leaves no
    ``interrupted`` audit whose resume fails the same way."""
    from legal_judge.audit.execute import check_settings, close_provider

    asyncio.run(close_provider(check_settings(settings)))


def _auditor(batch: bool, *, wait: bool, poll_interval: float) -> Any:
    """``run_audit`` (or its batch form) with the options every target shares."""
    import functools

    if batch:
        from legal_judge.batch.audit import run_audit_batch

        return functools.partial(run_audit_batch, poll_interval_s=poll_interval, wait=wait)
    from legal_judge.audit.execute import run_audit

    return run_audit


async def _resume_one(plan: Any, store: Store, *, batch: bool, wait: bool,
                      poll_interval: float) -> Any:
    from legal_judge.audit.resume import resume_target

    if batch and not plan.batch:
        err_console.print(f"audit {plan.audit_id} was started online; it continues in batch mode")
    batch = batch or plan.batch
    target = await resume_target(plan, store)
    runner = _auditor(batch, wait=wait, poll_interval=poll_interval)
    return await _run_one(runner, target, plan.items, plan.settings, store,
                          audit_id=plan.audit_id, resume=True,
                          source={**plan.source, "batch": batch})


def _conclude(outcomes: list[Any], out: Path | None, policy: PolicyInForce | None,
              store: Store, doc: JsonDocument) -> None:
    """Print (and write) each audit's report, then gate each under ``policy`` when one is given;
    ``doc`` gets every audit with its report and gate decision (``audit run --json``)."""
    audits: list[dict[str, Any]] = []
    doc.set({"audits": audits})
    for outcome in outcomes:
        entry: dict[str, Any] = {"audit_id": outcome.audit_id, "judge_id": outcome.judge_id,
                                 "status": outcome.status, "report_file": None,
                                 "report": None, "gate": None}
        audits.append(entry)
        if outcome.status == "submitted":
            entry["resume_command"] = f"legal-judge audit run --resume {outcome.audit_id}"
            console.print(f"audit {outcome.audit_id}: batches submitted and still running. "
                          f"See `legal-judge batches status {outcome.audit_id}`; finish with "
                          f"`legal-judge audit run --resume {outcome.audit_id}`")
            continue
        entry["report"] = outcome.report
        print_report(outcome.report)
        if policy is None:
            entry["weaker_than_policy"] = _certified_under_weaker(outcome.report)
        out_file = _out_file(out, outcome.judge_id, len(outcomes))
        write_report_json(outcome.report, out_file)
        entry["report_file"] = None if out_file is None else str(out_file)
    if len(outcomes) > 1:
        print_outcomes(outcomes, [_out_file(out, o.judge_id, len(outcomes)) for o in outcomes])
    bad = [o for o in outcomes if o.status not in ("complete", "submitted")]
    if bad:
        raise GateFailure(f"audit {bad[0].audit_id} ended with status {bad[0].status}",
                          fix=bad[0].report["overall_assessment"]["summary"])
    if policy is not None:
        for o, entry in zip(outcomes, audits, strict=True):
            if o.status == "complete":
                apply_gate(o.report, policy=policy, store=store, on_decision=_setter(entry))


def _certified_under_weaker(report: dict[str, Any]) -> list[str] | None:
    """Say so when the verdict reads "certified" but the audit gate of record would refuse the
    report for its settings (the audit's flags are its own; the policy decides what certifies).

    Returns:
        Each reason (empty: none), or None when the verdict is not certified or the policy
        cannot be read.
    """
    from legal_judge.audit.certificate import weaker_than_policy
    from legal_judge.policy import load_policy

    if (report.get("extensions") or {}).get("verdict") != "certified":
        return None
    try:
        policy = load_policy()
    except LegalJudgeError:
        return None  # a broken policy file is `audit gate`'s to report, with its lines
    weaker = weaker_than_policy(report, policy.certification)
    if weaker:
        console.print(f"not a certificate of record under the {policy.line('certification')}: "
                      f"{'; '.join(weaker)}; `legal-judge audit gate` refuses it",
                      style="yellow", markup=False, highlight=False)
    return weaker


def _setter(entry: dict[str, Any]) -> Callable[[dict[str, Any]], None]:
    """Stores a gate decision in ``entry`` (an audit of ``audit run --json``)."""
    def put(decision: dict[str, Any]) -> None:
        entry["gate"] = decision
    return put


def _out_file(out: Path | None, judge_id: str, n: int) -> Path | None:
    """``--out`` for one of ``n`` judges: the file itself, or ``STEM.JUDGE_ID.json`` for each of
    several."""
    if out is None or n == 1:
        return out
    return out.with_name(f"{out.stem}.{judge_id}{out.suffix}")


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
@stat_options
@json_option
def stats_cmd(pairs_file: Path, out: Path | None, config_file: Path | None, as_json: bool,
              **options: Any) -> None:
    """Compute the bias report from pairs scored elsewhere (JSONL rows).

    Dimension rows name a ``dimension``; discrimination-probe rows name a ``probe`` and an
    ``expected_direction`` (drop or rise) instead, with A the original answer and B the degraded
    one. The same rules apply, so a judge scored elsewhere gets the same verdict.
    """
    from legal_judge.audit.pairs_io import read_pairs
    from legal_judge.audit.report import build_report

    settings, _ = audit_settings(config_file, options)
    rows = read_pairs(pairs_file)
    dims = [d for d in settings.dimensions or [] if any(r.dimension == d for r in rows)] or None
    report = build_report(rows, settings, dimensions=dims)
    with json_output(as_json) as doc:
        doc.set(report)
        print_report(report)
        write_report_json(report, out)


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
