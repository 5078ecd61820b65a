"""Reading what a report shows from the store: which kind an id is, and its stored numbers.

Nothing is computed here: run summaries come from :func:`legal_judge.benchmark.summary.summarize_run` (the
same function the run stored its summary with), each item's outcome from
:func:`legal_judge.benchmark.item_outcomes.item_outcomes`, audits, calibrations and debias experiments from
their stored ``report_json``, calibration trends from
:func:`legal_judge.calibration.calibration_history`, a comparison of two runs from
:func:`legal_judge.benchmark.compare.compare_runs` and :func:`legal_judge.benchmark.item_outcomes.paired_outcomes`.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from legal_judge.errors import NotFoundError
from legal_judge.store import Store

if TYPE_CHECKING:
    from legal_judge.policy import PolicyInForce

__all__ = ["Kind", "ReportData", "detect_kind", "load_comparison_data", "load_report_data"]

Kind = Literal["run", "audit", "calibration", "debias", "comparison"]

_STORED_KINDS: tuple[Kind, ...] = ("run", "audit", "calibration", "debias")


def _has(store: Store, kind: Kind, entity_id: str) -> bool:
    exists = {"run": store.run_exists, "audit": store.audits.exists,
              "calibration": store.calibrations.exists,
              "debias": store.debias_experiments.exists}[kind]
    return exists(entity_id)


@dataclass
class ReportData:
    """Everything one report shows, as stored."""

    kind: Kind
    id: str
    report: dict[str, Any]
    extra: dict[str, Any] = field(default_factory=dict)


def detect_kind(store: Store, entity_id: str) -> Kind:
    """Which table holds ``entity_id``.

    Raises:
        NotFoundError: no run, audit, calibration or debias experiment has this id.
    """
    for kind in _STORED_KINDS:
        if _has(store, kind, entity_id):
            return kind
    from legal_judge.benchmark.shards import shard_status

    shards = shard_status(store, entity_id)
    if shards is not None:  # listed by `runs list`, but not whole yet: say so, not "no run"
        raise NotFoundError(
            f"run '{entity_id}' is judged in shards and has no report until its last shard "
            f"completes: {shards.line()}",
            fix=f"run each pending shard ({shards.command('K')}; a shard rerun resumes), then "
                f"report it; a shard's own run has a report now: "
                f"{', '.join(shards.runs[k] for k in sorted(shards.runs))}")
    raise NotFoundError(
        f"no run, audit, calibration or debias experiment '{entity_id}' in {store.path}",
        fix="`legal-judge runs list` shows runs; check LEGAL_JUDGE_HOME points at the right store",
    )


def load_report_data(store: Store, entity_id: str) -> ReportData:
    """Load the stored numbers of ``entity_id`` (kind detected)."""
    kind = detect_kind(store, entity_id)
    loader = {"run": _run, "audit": _audit, "calibration": _calibration, "debias": _debias}[kind]
    return loader(store, entity_id)


def _run(store: Store, run_id: str) -> ReportData:
    from legal_judge.benchmark.item_outcomes import item_outcomes
    from legal_judge.benchmark.summary import summarize_run

    run = store.get_run(run_id)
    # A run interrupted before its summary was written still gets a report from what is stored.
    summary = run["summary"] or summarize_run(store, run_id)
    if run["summary"]:
        from legal_judge.benchmark.summary import correction_fields

        # Labels and calibrations arrive after the run: the corrected figures are the pinned
        # ones (stored the first time they are shown), never recomputed with a later calibration.
        summary = {**summary, **correction_fields(store, run_id, summary)}
    from legal_judge.calibration.escalation import escalation_figures

    results, verdicts = store.load_results(run_id), store.load_verdicts(run_id)
    items = store.load_items(run_id)
    # Lawyers' labels of escalated items arrive after the run: the split is read when shown.
    split = escalation_figures(store, run_id)
    return ReportData("run", run_id, summary, extra={
        "run": {k: v for k, v in run.items() if k != "summary"},
        "escalation": split.facts() if split is not None else None,
        "results": results, "verdicts": verdicts, "items": items,
        "outcomes": item_outcomes(items, results, verdicts),
    })


def load_comparison_data(store: Store, run_a: str, run_b: str, *,
                         policy: PolicyInForce | None = None, threshold: float | None = None,
                         alpha: float = 0.05) -> ReportData:
    """Run B against baseline run A: the release decision, the statistics and both verdicts per
    item. ``policy`` is the policy in force (its ``[release]`` section decides; the bundled
    defaults when None); ``threshold`` is the deprecated alias of ``rubric_margin``.

    Raises:
        NotFoundError: an id is in no table.
        ConfigError: an id is not a run, or the runs share no scored item.
    """
    from legal_judge.benchmark.compare import compare_runs
    from legal_judge.benchmark.item_outcomes import paired_outcomes, transition_counts
    from legal_judge.errors import ConfigError

    for rid in (run_a, run_b):
        kind = detect_kind(store, rid)
        if kind != "run":
            raise ConfigError(f"{rid} is {'an' if kind[0] in 'ae' else 'a'} {kind}, not a run",
                              code="report-compare-kind",
                              fix="a comparison report takes two run ids: `legal-judge runs list`")
    result = compare_runs(store, run_a, run_b, policy=policy.release if policy else None,
                          threshold=threshold, alpha=alpha,
                          require_validation=bool(policy and
                                                  policy.policy.validation.require_of_record),
                          run_policy=policy.run if policy else None)
    if policy is not None:
        result["policy"] = policy.as_dict("release")
    pairs = paired_outcomes(store, run_a, run_b)
    runs = {rid: {k: v for k, v in store.get_run(rid).items() if k != "summary"}
            for rid in (run_a, run_b)}
    return ReportData("comparison", f"{run_a} vs {run_b}", result, extra={
        "runs": runs, "pairs": pairs, "transitions": transition_counts(pairs), "alpha": alpha,
        "policy_line": policy.line("release") if policy else None,
        "override_lines": policy.override_lines() if policy else []})


def _stored(row: dict[str, Any] | None, entity_id: str) -> dict[str, Any]:
    if row is None:  # removed since detect_kind found it
        raise NotFoundError(f"no stored '{entity_id}'", fix="run the command again")
    out = dict(row)
    raw = out.pop("report_json", None)
    out["report"] = json.loads(raw) if raw else {}
    return out


def _audit(store: Store, audit_id: str) -> ReportData:
    # The prior audit and the drift are the audit module's: the latest earlier audit of the same
    # base judge (provider, model, rubric set; any debias mode). The report only shows them.
    from legal_judge.audit.history import diff_reports, prior_audit

    row = _stored(store.audits.get(audit_id), audit_id)
    report = row.pop("report")
    prior_data = prior_audit(store, audit_id)
    drift = diff_reports(prior_data["report"], report) if prior_data is not None else None
    return ReportData("audit", audit_id, report,
                      extra={"row": row, "prior": prior_data, "drift": drift})


def _calibration(store: Store, calibration_id: str) -> ReportData:
    from legal_judge.calibration import calibration_history

    row = _stored(store.calibrations.get(calibration_id), calibration_id)
    history = [h.model_dump(mode="json") for h in calibration_history(store)]
    return ReportData("calibration", calibration_id, row.pop("report"),
                      extra={"row": row, "history": history})


def _debias(store: Store, experiment_id: str) -> ReportData:
    row = _stored(store.debias_experiments.get(experiment_id), experiment_id)
    return ReportData("debias", experiment_id, row.pop("report"), extra={"row": row})
