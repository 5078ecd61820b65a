"""``legal-judge audit gate``, ``needed`` and ``review``: may this judge be used? The release gate on
an audit report, the check that every judge has an audit, and the human sign-off in the audit log."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click
from rich.console import Console

from legal_judge.commands.ci_outputs import write_ci_outputs
from legal_judge.commands.json_out import json_option, json_output
from legal_judge.commands.policy import (
    gate_options,
    policy_in_force,
    policy_options,
    print_policy,
)
from legal_judge.commands.tables import echo_json
from legal_judge.errors import GateFailure
from legal_judge.store import Store

if TYPE_CHECKING:
    from legal_judge.policy import PolicyInForce

__all__ = ["apply_gate", "gate_cmd", "gate_flags", "gate_policy", "needed_cmd", "review_cmd"]

console = Console()
err_console = Console(stderr=True)


@click.command("needed")
@click.option("--judge", "judge_config", required=True, help="Spec, ensemble TOML or target YAML.")
@click.option("--all-judges", is_flag=True,
              help="Kept for scripts: an ensemble's judges are always all checked.")
@click.option("--rubric", help="As given to audit run.")
@click.option("--require-validation", is_flag=True, default=None,
              help="Also require a validation of record for every judge (tightens the policy's "
                   "[validation] require_of_record).")
@json_option
@policy_options
def needed_cmd(judge_config: str, all_judges: bool, rubric: str | None,
               require_validation: bool | None, as_json: bool, policy_file: Path | None,
               overrides: tuple[str, ...]) -> None:
    """Exit 1 when a judge (its judge_id) has no audit that judged something.

    Every judge of an ensemble must be audited; an audit that stopped before any judge call
    (INSUFFICIENT_DATA) does not count. With the policy's [validation] require_of_record, every
    judge also needs a validation of record that lets it gate.
    """
    from legal_judge.audit.history import audit_coverage
    from legal_judge.audit.target import load_targets
    from legal_judge.calibration import validation_requirement

    del all_judges  # an ensemble always needs every judge audited
    policy = policy_in_force(policy_file, overrides,
                             {"validation.require_of_record": require_validation})
    store = Store()
    targets = load_targets(judge_config, store=store, rubric=rubric, all_judges=True)
    coverage = audit_coverage(store, [(t.judge_id, t.label) for t in targets])
    validation = validation_requirement(
        store, {t.label: t.judge_id for t in targets},
        required=policy.policy.validation.require_of_record)
    missing = [c for c in coverage if c.audit_id is None]
    fix = f"legal-judge audit run --judge {judge_config}"  # every judge of an ensemble
    if rubric:
        fix += f" --rubric {rubric}"
    if not validation["met"]:
        validate = "legal-judge calibrate validate --calibration CAL --candidate JUDGE"
        fix = f"{fix}; then validate each judge: {validate}" if missing else (
            f"validate each judge listed above with `{validate}`, or set [validation] "
            "require_of_record = false in the policy file")
    with json_output(as_json) as doc:
        doc.set({"passed": not missing and validation["met"], "judges": len(coverage),
                 "missing": len(missing),
                 "coverage": [{"label": c.label, "judge_id": c.judge_id, "audit_id": c.audit_id,
                               "audited": c.audit_id is not None, "note": c.note}
                              for c in coverage],
                 "validation": validation, "policy": policy.as_dict("validation"),
                 "fix": fix if missing or not validation["met"] else None})
        print_policy(console, policy, "validation")
        _print_needed(coverage, validation)
        if missing:
            also = "" if validation["met"] else f"; and {validation['reason']}"
            raise GateFailure(f"{len(missing)} of {len(coverage)} judge(s) have no audit that "
                              "judged something: "
                              f"{', '.join(f'{c.label} ({c.judge_id})' for c in missing)}" + also,
                              fix=fix)
        if not validation["met"]:
            raise GateFailure(f"audit needed: {validation['reason']}", fix=fix)


def _print_needed(coverage: list[Any], validation: dict[str, Any]) -> None:
    for c in coverage:
        mark = "[green]audited[/green]" if c.audit_id else "[red]missing[/red]"
        console.print(f"{mark} {c.label} ({c.judge_id}): {c.note}")
    if validation["required"]:
        for label, why in validation["lacking"].items():
            console.print(f"[red]unvalidated[/red] {label}: {why}", soft_wrap=True)
        console.print(f"{validation['name']}: {'met' if validation['met'] else 'NOT MET'}: "
                      f"{validation['reason']}", markup=False, highlight=False, soft_wrap=True)


def gate_flags(fn: Any) -> Any:
    """``--max-severity`` and ``--allow-inconclusive`` (``audit gate``, ``audit run``): they may
    only tighten the policy's [certification] section (see :func:`gate_policy`)."""
    fn = click.option(
        "--allow-inconclusive", is_flag=True, default=None,
        help="Allowed only where the policy already allows an inconclusive verdict; to allow "
             "it on purpose, --override allow_inconclusive=true.")(fn)
    return click.option(
        "--max-severity", default=None,
        type=click.Choice(["none", "low", "medium", "high", "critical"]),
        help="Gate under the policy (audit run: after the audit): exit 1 unless the judge is "
             "certified and its severity is at most this; it may only tighten the policy's "
             "max_severity (low; a higher one needs --override max_severity=...).")(fn)


@click.command("gate")
@click.argument("report_ref")
@gate_flags
@click.option("--high-stakes/--not-high-stakes", default=None,
              help="Override the report's high_stakes flag.")
@gate_options
def gate_cmd(report_ref: str, max_severity: str | None, allow_inconclusive: bool | None,
             high_stakes: bool | None, as_json: bool, policy_file: Path | None,
             overrides: tuple[str, ...], junit: Path | None, summary_md: Path | None) -> None:
    """Exit 1 unless the judge is certified (every probe passes, nothing flagged, every
    dimension equivalent) under settings at least as strict as the policy's [certification]
    section, by a judge of record (not simulated), the severity is at most the policy's, and a
    high-stakes judge's latest audit is approved."""
    from legal_judge.audit.history import load_report

    policy = gate_policy(policy_file, overrides, max_severity=max_severity,
                         allow_inconclusive=allow_inconclusive)
    store = Store()
    with json_output(as_json) as doc:
        apply_gate(load_report(report_ref, store=store), policy=policy, store=store,
                   high_stakes=high_stakes, junit=junit, summary_md=summary_md,
                   on_decision=doc.set)


def gate_policy(policy_file: Path | None, overrides: tuple[str, ...], *,
                max_severity: str | None, allow_inconclusive: bool | None) -> PolicyInForce:
    """The policy in force for the audit gate, with ``--max-severity`` and
    ``--allow-inconclusive`` as tightening flags (a loosening one is refused: exit 2).

    Raises:
        ConfigError: a flag loosens the policy, or an override names no setting.
    """
    return policy_in_force(policy_file, overrides, {
        "certification.max_severity": max_severity,
        "certification.allow_inconclusive": True if allow_inconclusive else None})


def apply_gate(report: dict[str, Any], *, policy: PolicyInForce, store: Store,
               high_stakes: bool | None = None, junit: Path | None = None,
               summary_md: Path | None = None,
               on_decision: Callable[[dict[str, Any]], None] | None = None) -> None:
    """Print the gate's decision on ``report`` (and its JUnit/summary files); raise when it fails.

    Used by ``audit gate`` and by ``audit run --max-severity``; under ``--json`` (see
    :func:`~legal_judge.commands.json_out.json_output`) the text goes to stderr and
    ``on_decision`` receives the decision as JSON-ready data before the gate may fail.

    Raises:
        GateFailure: the judge is not certified, was audited under settings weaker than the
            policy, is simulated, too severe, or a high-stakes audit is not approved.
    """
    from legal_judge.audit.certificate import SIMULATED
    from legal_judge.audit.gate import gate_decision, gate_report
    from legal_judge.reports.ci import audit_gate_suite

    decision = gate_decision(report, policy=policy, store=store, high_stakes=high_stakes)
    if on_decision is not None:
        on_decision(decision.as_dict())
    print_policy(console, policy, "certification")
    console.print(decision.sentence, markup=False)
    if decision.simulated:
        console.print(f"[yellow]{SIMULATED}[/yellow]"
                      + (" (allowed by the policy)" if policy.certification.allow_simulated
                         else ""))
    write_ci_outputs(console, lambda: audit_gate_suite(report, decision), junit=junit,
                     summary_md=summary_md)
    if not decision.passed:
        for check in decision.failed():
            if check.kind in ("probe", "dimension", "setting"):
                err_console.print(f"  {check.kind} {check.name}: {check.outcome}: {check.reason}",
                                  markup=False)
        gate_report(report, policy=policy, store=store, high_stakes=high_stakes)
    note = (" (allowed by the policy's allow_inconclusive)"
            if decision.verdict == "inconclusive" else "")
    console.print(f"[green]gate passed[/green]: verdict {decision.verdict}{note}, severity "
                  f"{decision.severity} <= {decision.max_severity}, settings meet the policy")


@click.command("review")
@click.argument("audit_id")
@click.option("--approve/--reject", required=True, help="Sign off or reject the findings.")
@click.option("--reviewer", required=True, help="Your name.")
@click.option("--note", default="", help="What you checked.")
@json_option
def review_cmd(audit_id: str, approve: bool, reviewer: str, note: str, as_json: bool) -> None:
    """Record a human sign-off of an audit's findings and test design in the audit log."""
    from legal_judge.audit.history import record_review

    out = record_review(Store(), audit_id, approve=approve, reviewer=reviewer, note=note)
    if as_json:
        echo_json({"audit_id": audit_id, "reviewer": reviewer, "note": note, **out})
        return
    console.print(f"{out['decision']} by {reviewer} (log entry {out['seq']})")
    if not approve:
        console.print("a high-stakes judge's gate now fails on this audit: address the findings, "
                      "re-audit with `legal-judge audit run`, then review the new audit",
                      soft_wrap=True, markup=False, highlight=False)
