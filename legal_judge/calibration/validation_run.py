"""``calibrate validate``: score the labelled items with both judges, decide, store the result.

The report holds the verdict per rubric and overall, the allowed uses (what the candidate may gate
on, what it may not and why, what it was validated on, when to revalidate), the items the two
judges decided differently, and the policy it applied. It is stored with the candidate's judge id
(``store.validations``): a later gate asks for the validation of record of a judge id.
"""

from __future__ import annotations

import hashlib
from datetime import UTC, datetime, timedelta

from legal_judge.calibration.rescore import score_ref
from legal_judge.calibration.validate import PASS_FAIL_ROW, overall_verdict, validate_rubrics
from legal_judge.calibration.validation_data import JudgeScores, LawyerSet, load_lawyer_set
from legal_judge.calibration.validation_schema import (
    AllowedUses,
    CrossFit,
    DifferingItem,
    Fitness,
    RubricValidation,
    ValidationReport,
)
from legal_judge.policy import PolicyInForce
from legal_judge.providers.base import is_simulated_spec
from legal_judge.store import Store, canonical_json

__all__ = ["allowed_uses", "build_report", "save_validation", "validate_change"]


def _expiry(lawyers: LawyerSet, max_age_days: int) -> str | None:
    dates = []
    for cal in lawyers.calibrations:
        try:
            made = datetime.fromisoformat(cal.created_at)
        except ValueError:
            continue
        dates.append(made if made.tzinfo else made.replace(tzinfo=UTC))
    return (min(dates) + timedelta(days=max_age_days)).isoformat() if dates else None


def allowed_uses(rows: list[RubricValidation], lawyers: LawyerSet,
                 policy: PolicyInForce) -> AllowedUses:
    """What the candidate may gate on (and may not, with the reason) and when to revalidate."""
    max_age = policy.calibration.max_age_days
    expires = _expiry(lawyers, max_age)
    when = ["its judge_id changes: a new model, prompt or rubric version, debias mode or "
            "generation parameter",
            f"a calibration it was validated on is older than {max_age} days (policy "
            f"[calibration] max_age_days)" + (f": on {expires[:10]}" if expires else ""),
            "new lawyer labels disagree with it (calibrate compare says recalibrate)"]
    return AllowedUses(may_gate=[r.rubric for r in rows if r.may_gate],
                       may_not_gate={r.rubric: r.gate_reason for r in rows if not r.may_gate},
                       validated_on=lawyers.calibrations, revalidate_when=when,
                       expires_at=expires)


def _differing(lawyers: LawyerSet, cand: JudgeScores, inc: JudgeScores,
               limit: int = 25) -> list[DifferingItem]:
    out = []
    for key in lawyers.keys:
        c, i = cand.passed.get(key), inc.passed.get(key)
        if c is i:
            continue
        item = lawyers.items[key]
        scores = {r: col[key] for r, col in sorted(lawyers.humans.items()) if key in col}
        out.append(DifferingItem(item_id=item.id, run_id=lawyers.runs[key],
                                 answer=item.response[:600], candidate_pass=c, incumbent_pass=i,
                                 lawyers_pass=lawyers.lawyers_pass.get(key),
                                 lawyers_scores=scores, comment=lawyers.comments.get(key)))
    # The candidate's false passes first: the error that matters most to a legal team.
    out.sort(key=lambda d: (not (d.candidate_pass and d.lawyers_pass is False), d.item_id))
    return out[:limit]


def _headline(verdict: Fitness, rows: list[RubricValidation], cand: JudgeScores,
              uses: AllowedUses) -> str:
    pf = rows[0]
    fp_c, fp_i = pf.candidate.false_pass, pf.incumbent.false_pass
    said = (f"{verdict.upper()}: {cand.ref.name} passes {fp_c.k} of {fp_c.n} answers the lawyers "
            f"failed (the incumbent {fp_i.k})" if fp_c and fp_i and fp_c.n else
            f"{verdict.upper()}: {cand.ref.name}")
    diff = pf.false_pass_difference
    if diff is not None and diff.estimate is not None and diff.ci95 is not None:
        said += (f", false-pass rate {diff.estimate:+.2f} (95% CI {diff.ci95[0]:+.2f} to "
                 f"{diff.ci95[1]:+.2f})")
    gate = (f"it may gate on {', '.join(uses.may_gate)}" if uses.may_gate
            else "it may gate on nothing")
    return f"{said}; {gate}."


def build_report(lawyers: LawyerSet, candidate: JudgeScores, incumbent: JudgeScores,
                 policy: PolicyInForce, *, cross_fit: CrossFit | None = None,
                 notes: list[str] | None = None) -> ValidationReport:
    """The validation report of ``candidate`` against ``incumbent`` on the labelled items."""
    rows = validate_rubrics(lawyers, candidate, incumbent, policy.policy.validation)
    verdict, reasons = overall_verdict(rows)
    uses = allowed_uses(rows, lawyers, policy)
    created = datetime.now(UTC).isoformat(timespec="seconds")
    digest = hashlib.sha256(canonical_json([candidate.ref.judge_id, incumbent.ref.judge_id,
                                            [c.calibration_id for c in lawyers.calibrations],
                                            created, cross_fit is not None]).encode())
    simulated = any(is_simulated_spec(s) for s in (candidate.ref.spec, incumbent.ref.spec))
    return ValidationReport(
        validation_id=f"val-{digest.hexdigest()[:10]}", created_at=created,
        candidate=candidate.ref, incumbent=incumbent.ref, calibrations=lawyers.calibrations,
        n_items=len(lawyers.items), rubrics=rows, verdict=verdict,
        headline=_headline(verdict, rows, candidate, uses), reasons=reasons, allowed=uses,
        differing=_differing(lawyers, candidate, incumbent),
        policy=policy.as_dict("validation"), policy_line=policy.line("validation"),
        override_lines=policy.override_lines(), cross_fit=cross_fit, simulated=simulated,
        notes=list(notes or []))


def save_validation(store: Store, report: ValidationReport) -> None:
    """Keep the report with the candidate's judge id (append only)."""
    store.validations.save(report.validation_id, judge_id=report.candidate.judge_id,
                           candidate=report.candidate.spec,
                           incumbent_judge_id=report.incumbent.judge_id, verdict=report.verdict,
                           created_at=report.created_at, expires_at=report.allowed.expires_at,
                           report=report.model_dump(mode="json"))


def validate_change(store: Store, calibration_ids: list[str], candidate: str,
                    incumbent: str | None, policy: PolicyInForce) -> ValidationReport:
    """Validate ``candidate`` against ``incumbent`` (default: the calibrated runs' recorded
    ensemble results) on the labelled items of ``calibration_ids``, and store the result.

    Raises:
        NotFoundError: an unknown calibration.
        ConfigError: a files-only calibration, an invalid judge or ensemble.
    """
    lawyers = load_lawyer_set(store, calibration_ids)
    cand = score_ref(store, candidate, lawyers, name=candidate)
    notes = []
    if incumbent is None:
        assert lawyers.recorded is not None
        inc = lawyers.recorded
        notes.append("incumbent: the ensemble results stored with the calibrated run(s), read "
                     "back, not judged again")
    else:
        inc = score_ref(store, incumbent, lawyers, name=incumbent)
    if cand.ref.judge_id is not None and cand.ref.judge_id == inc.ref.judge_id:
        notes.append("the candidate and the incumbent have the same judge_id: nothing changed")
    report = build_report(lawyers, cand, inc, policy, notes=notes)
    save_validation(store, report)
    return report


def pass_fail_row(report: ValidationReport) -> RubricValidation:
    """The report's pass/fail row (always the first)."""
    row = report.rubric(PASS_FAIL_ROW)
    assert row is not None
    return row
