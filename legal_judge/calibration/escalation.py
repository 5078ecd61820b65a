"""Decide what the judges can, escalate the rest to lawyers, with a guaranteed agreement level.

:func:`escalate` takes a run's items' confidences (:mod:`legal_judge.calibration.confidence`) and
the lawyers' labels of a random sample of the run, chooses the confidence threshold by
fixed-sequence testing with exact binomial bounds (:func:`legal_judge.stats.
fixed_sequence_threshold`) and stores the decision: the items at or above the threshold are
decided by the judges, the others go to a lawyer.

The guarantee ("on the answers the judges decided, they agree with your lawyers at least 90% of
the time, with 95% confidence") assumes the labelled items are exchangeable with the run's items:
a simple random sample of the same run, or a stratified sample. Drawn at the same rate in every
stratum (``calibrate sample --stratify`` allocates proportionally) it is self-weighting and the
exact test counts every label once. Labelled at unequal rates (the lawyers finished some strata
and not others), each label weighs its stratum's run items per labelled item, and the walk uses
Kish's effective sample size (:func:`legal_judge.stats.fixed_sequence_threshold`, ``weights``): the
guarantee is then approximate, and the report says so. A stratum with no label at all, or a
sample enriched with the items the judges disagreed on, is refused: nothing can stand for them. Labels from another run of the same
ensemble (the latest calibration of its judge_id) are *transported*, and the report says so.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from pathlib import Path

from scipy.stats import ks_2samp

from legal_judge.calibration.confidence import item_confidence
from legal_judge.calibration.data import (
    ComparisonData,
    ensemble_judge_id,
    human_scores,
    lawyers_pass,
)
from legal_judge.calibration.escalation_schema import (
    EscalationFigures,
    EscalationReport,
)
from legal_judge.calibration.labels import load_labels
from legal_judge.calibration.rubrics import rubric_specs, stored_rubric_set
from legal_judge.calibration.sample import item_strata, run_samples, write_template
from legal_judge.calibration.schema import SampledItem, SampleReport
from legal_judge.errors import ConfigError
from legal_judge.stats import ThresholdResult, fixed_sequence_threshold
from legal_judge.store import Store, canonical_json, utcnow
from legal_judge.sync.outbox import EntityKind, enqueue

__all__ = ["EXCHANGEABILITY_ALPHA", "MAX_RATE_RATIO", "check_levels", "escalate",
           "escalation_figures",
           "exchangeability_note", "guarantee_sentence", "write_escalation_sheet"]

#: Level of the two-sample Kolmogorov-Smirnov check of labelled vs run confidences.
EXCHANGEABILITY_ALPHA = 0.01

#: Largest ratio of two strata's sampling rates for a stratified sample to count as self-weighting
#: (proportional allocation rounds each stratum to whole items).
MAX_RATE_RATIO = 1.5
_FIX_SAMPLE = ("draw a simple random sample, have it labelled and import it: legal-judge "
               "calibrate sample RUN --n 100, then calibrate import FILLED.csv --run RUN")


def _pct(x: float) -> str:
    return f"{x:.0%}"


def _agreements(store: Store, run_id: str, rubric: str | None) -> dict[str, bool]:
    """For every lawyer-labelled item of the run: whether the ensemble agrees with the lawyers
    (their pass/fail decision; with ``rubric``, that rubric's score within one point)."""
    config = store.get_run(run_id)["config"]
    rset, specs = rubric_specs(stored_rubric_set(config))
    labels = load_labels(store, run_id, specs)
    if not labels:
        return {}
    humans = human_scores(labels, specs)
    results = store.load_results(run_id)
    out: dict[str, bool] = {}
    if rubric is None:
        lawyers, _ = lawyers_pass(ComparisonData(rset, specs, "store", run_id, labels), humans)
        for item_id, verdict in lawyers.items():
            overall = (results.get(item_id) or {}).get("overall")
            if verdict is not None and overall in ("pass", "fail"):
                out[item_id] = (overall == "pass") == verdict
        return out
    for item_id, human in humans.get(rubric, {}).items():
        judged = ((results.get(item_id) or {}).get("scores") or {}).get(rubric)
        if judged is not None and not isinstance(human, str):
            out[item_id] = abs(float(judged) - float(human)) <= 1.0
    return out


def _sample_check(store: Store, run_id: str, labelled: set[str], assume_random: bool,
                  ) -> tuple[str | None, str, set[str], list[str], dict[str, float] | None]:
    """The recorded sample the labels come from, its kind, the labelled items used, notes, and
    the labels' sampling weights (None: every label counts once).

    Raises:
        ConfigError: the sample is not one a guarantee can rest on (named, with the fix).
    """
    best = None
    for sample in run_samples(store, run_id):
        covered = labelled & set(sample.get("items") or [])
        if covered and (best is None or len(covered) > len(best[0])):
            best = (covered, sample)
    if best is None:
        if not assume_random:
            raise ConfigError(
                f"the {len(labelled)} lawyer-labelled items of run '{run_id}' match no sample "
                "drawn with `calibrate sample`: nothing shows they are a random sample of the "
                "run, and the guarantee rests on that", code="escalation-sample",
                fix=_FIX_SAMPLE + "; or, if they were drawn at random elsewhere, say so with "
                    "--assume-random (printed with the guarantee)")
        return None, "assumed random (--assume-random)", labelled, [
            "the labels match no recorded sample: they were taken as a simple random sample "
            "because --assume-random says so"], None
    used, sample = best
    sid = str(sample["sample_id"])
    if sample.get("enrich"):
        raise ConfigError(
            f"the labels come from sample {sid}, which reserved {sample['enrich']} slots for "
            "the items the judges disagreed on most: it is not a random sample of the run, so a "
            "threshold chosen on it carries no guarantee", code="escalation-sample",
            fix=_FIX_SAMPLE + " (without --enrich)")
    notes = []
    if labelled - used:
        notes.append(f"{len(labelled - used)} labelled items outside sample {sid} were left "
                     "out: only one random sample's labels are used")
    n_sampled = len(sample.get("items") or [])
    if len(used) < n_sampled:
        notes.append(f"the lawyers labelled {len(used)} of the sample's {n_sampled} items: if "
                     "they skipped items for a reason (too hard, too long), the guarantee may "
                     "not hold")
    if not sample.get("stratify"):
        return sid, "simple random sample", used, notes, None
    strata = item_strata(store, run_id, sample)
    size, got = Counter(strata.values()), Counter(strata[i] for i in used if i in strata)
    rates = {k: got[k] / n for k, n in size.items()}
    low, high = min(rates, key=rates.__getitem__), max(rates, key=rates.__getitem__)
    if rates[low] == 0:
        raise ConfigError(
            f"the labels of stratified sample {sid} cover no item of stratum '{low}' "
            f"({size[low]} items of the run): no label can stand for them",
            code="escalation-sample",
            fix="label the sample's items of that stratum, or " + _FIX_SAMPLE)
    if rates[high] / rates[low] <= MAX_RATE_RATIO:
        return (sid, f"stratified by {sample['stratify']}, proportional (self-weighting)", used,
                notes, None)
    weights = {i: size[strata[i]] / got[strata[i]] for i in used if i in strata}
    notes.append(f"the labels cover the strata of sample {sid} at unequal rates "
                 f"({_pct(rates[low])} of '{low}', {_pct(rates[high])} of '{high}'): each label "
                 "weighs its stratum's items per label, and the tests use the Kish effective "
                 "sample size, so the guarantee is approximate, not exact")
    return (sid, f"stratified by {sample['stratify']}, unequal rates: weighted (effective "
                 "sample size)", set(weights), notes, weights)


def _confidences(store: Store, run_id: str, rubric: str | None) -> dict[str, float | None]:
    """Every item's confidence (None: inconclusive, always escalated)."""
    config = store.get_run(run_id)["config"]
    rset, _ = rubric_specs(stored_rubric_set(config))
    results = store.load_results(run_id)
    out: dict[str, float | None] = {}
    for item in store.load_items(run_id):
        result = results.get(item["id"])
        got = item_confidence(result, rset, rubric=rubric) if result is not None else None
        out[item["id"]] = None if got is None else got.value
    return out


def _label_source(store: Store, run_id: str, judge_id: str, rubric: str | None
                  ) -> tuple[str, str | None, dict[str, bool]]:
    """The run whose labels choose the threshold: this run's, else the latest calibration's run
    of the same ensemble (transported)."""
    own = _agreements(store, run_id, rubric)
    if own:
        return run_id, None, own
    cal = store.calibrations.latest_report_of_judge(judge_id, not_of_run=run_id)
    other = cal.get("run_id") if cal else None
    if cal is None or not other or not store.run_exists(str(other)):
        raise ConfigError(
            f"run '{run_id}' has no lawyer labels, and no other run of its ensemble "
            f"(judge_id {judge_id}) has a calibration to transport", code="escalation-labels",
            fix=f"legal-judge calibrate sample {run_id} --n 100, have the sheet filled, then "
                f"calibrate import FILLED.csv --run {run_id}")
    return str(other), str(cal.get("calibration_id")), _agreements(store, str(other), rubric)


def exchangeability_note(labelled: list[float], run: list[float],
                         alpha: float = EXCHANGEABILITY_ALPHA) -> str | None:
    """A warning when the labelled items' confidences do not look like the run's items'.

    The one part of the exchangeability assumption the data can check: a two-sample
    Kolmogorov-Smirnov test (``scipy.stats.ks_2samp``) of the two confidence distributions. A
    pass proves nothing (labels can differ in ways the confidence does not show); a failure
    means the guarantee's assumption is visibly broken.
    """
    if len(labelled) < 2 or len(run) < 2:
        return None
    p = float(ks_2samp(labelled, run).pvalue)
    if p >= alpha:
        return None
    return (f"the labelled items do not look like the run's items: their confidences are "
            f"distributed differently (Kolmogorov-Smirnov p = {p:.2g}); the guarantee assumes "
            "they are exchangeable, so it may not hold here")


def guarantee_sentence(fs: ThresholdResult, n_labels: int) -> str:
    """The sentence a general counsel signs, or the honest "cannot guarantee" with labels needed."""
    level = f"{_pct(fs.target)} at {_pct(fs.confidence)} confidence"
    if fs.guaranteed:
        rest = (f"the other {_pct(1.0 - fs.coverage)} go to a lawyer" if fs.n_kept_items
                < fs.n_items else "no answer needs a lawyer")
        return (f"on the answers the judges decided, they agree with your lawyers at least "
                f"{_pct(fs.target)} of the time ({_pct(fs.confidence)} confidence); {rest}")
    head = f"cannot guarantee {level} with {n_labels} labels"
    best = ("" if fs.best_achievable is None
            else f": the best achievable is {fs.best_achievable:.0%}")
    if fs.more_labels is not None:
        return f"{head}{best}; about {fs.more_labels:,} more labels would be needed"
    return (f"{head}{best}; more labels of the same kind would not help: the judges disagree "
            f"with the lawyers on more than {_pct(1.0 - fs.target)} even of the items they are "
            "surest of. Every item goes to a lawyer")


def check_levels(target: float, confidence: float) -> None:
    """The guarantee's levels, as `calibrate escalate` and `calibrate plan` both take them.

    Raises:
        ConfigError: either level outside [0.5, 1).
    """
    if not (0.5 <= target < 1.0 and 0.5 <= confidence < 1.0):
        raise ConfigError(f"--target {target} and --confidence {confidence} must lie in [0.5, 1)",
                          code="escalation-args", fix="e.g. --target 0.90 --confidence 0.95")


def escalate(store: Store, run_id: str, *, target: float = 0.90, confidence: float = 0.95,
             rubric: str | None = None, assume_random: bool = False) -> EscalationReport:
    """Choose the escalation threshold of a run on lawyer labels and store the decision.

    Args:
        store: The store holding the run and the labels.
        run_id: The judged run.
        target: The agreement with the lawyers to guarantee on the judge-decided items.
        confidence: The probability of the guarantee.
        rubric: Agreement on this rubric within one point instead of the pass/fail decision.
        assume_random: Accept labels that match no recorded sample as a simple random sample.

    Returns:
        The stored :class:`EscalationReport`.

    Raises:
        NotFoundError: unknown run. ConfigError: no usable labels, a sample that is not random
        (named), or levels outside (0, 1).
    """
    check_levels(target, confidence)
    config = store.get_run(run_id)["config"]
    if rubric is not None:
        _, specs = rubric_specs(stored_rubric_set(config))
        numeric = sorted(n for n, spec in specs.items() if spec.kind == "numeric")
        if rubric not in numeric:
            raise ConfigError(f"--rubric {rubric} is not a numeric rubric of the run's rubric "
                              "set (agreement is a score within one point)",
                              code="escalation-args", fix=f"use one of: {', '.join(numeric)}; "
                              "or leave --rubric out for the pass/fail decision")
    judge_id = ensemble_judge_id(config)
    label_run, calibration_id, agrees = _label_source(store, run_id, judge_id, rubric)
    if not agrees:
        raise ConfigError(f"no lawyer label of run '{label_run}' gives a "
                          f"{rubric or 'pass/fail'} decision to compare with",
                          code="escalation-labels", fix="import the lawyers' filled sheet first")
    sample_id, kind, used, notes, weights = _sample_check(store, label_run, set(agrees),
                                                          assume_random)
    run_conf = _confidences(store, run_id, rubric)
    label_conf = run_conf if label_run == run_id else _confidences(store, label_run, rubric)
    used_ids = sorted(i for i in used if label_conf.get(i) is not None)
    fs = fixed_sequence_threshold([label_conf[i] for i in used_ids],  # type: ignore[misc]
                                  [agrees[i] for i in used_ids],
                                  [c if c is not None else -1.0 for c in run_conf.values()],
                                  target=target, confidence=confidence,
                                  weights=None if weights is None
                                  else [weights[i] for i in used_ids])
    warning = exchangeability_note([label_conf[i] for i in used_ids],  # type: ignore[misc]
                                   [c for c in run_conf.values() if c is not None])
    if warning is not None:
        notes.insert(0, warning)
    if label_run != run_id:
        notes.insert(0, f"transported from run {label_run} (calibration {calibration_id}): the "
                        "threshold was chosen on another run of the same ensemble; the guarantee "
                        "holds only if this run's answers are like that run's")
    labelled_here = set(_agreements(store, run_id, rubric)) if label_run != run_id else set(agrees)
    keep = {i for i, c in run_conf.items()
            if fs.threshold is not None and c is not None and c >= fs.threshold}
    below = [i for i in run_conf if i not in keep]
    results = store.load_results(run_id)
    passes = [results[i].get("overall") == "pass" for i in keep]
    created = utcnow()
    settings = {"run_id": run_id, "target": target, "confidence": confidence, "rubric": rubric,
                "created_at": created}
    report = EscalationReport(
        escalation_id="esc-" + hashlib.sha256(canonical_json(settings).encode()).hexdigest()[:12],
        run_id=run_id, created_at=created, target=target, confidence=confidence, rubric=rubric,
        agreement_on=f"{rubric} within ±1 point" if rubric else "the pass/fail decision",
        source="labels" if label_run == run_id else "transported", label_run_id=label_run,
        judge_id=judge_id, calibration_id=calibration_id, sample_id=sample_id, sample_kind=kind,
        n_labelled=fs.n_labelled, n_items=len(run_conf), min_start=fs.min_start,
        guaranteed=fs.guaranteed, threshold=fs.threshold, coverage=fs.coverage,
        observed_agreement=fs.observed_agreement, agreement_ci95=fs.agreement_ci,
        agreement_lower=fs.agreement_lower, best_achievable=fs.best_achievable,
        labels_needed=fs.labels_needed, more_labels=fs.more_labels,
        decided=sorted(keep), escalated=[i for i in below if i not in labelled_here],
        reviewed=[i for i in below if i in labelled_here],
        decided_pass_rate=sum(passes) / len(passes) if passes else None,
        steps=list(fs.steps),
        sentence=guarantee_sentence(fs, fs.n_labelled), notes=notes)
    store.escalations.save(report.escalation_id, run_id=run_id, created_at=created, target=target,
                           confidence=confidence, rubric=rubric, guaranteed=fs.guaranteed,
                           report=report.model_dump(mode="json"))
    # Langfuse: the run's split figures (run.pass_rate.judge_decided, run.pending_review) go
    # with the run's labels entity, resent whenever the labels change.
    enqueue(store, EntityKind.HUMAN_LABELS, run_id)
    return report


def write_escalation_sheet(store: Store, report: EscalationReport, path: Path) -> Path:
    """The lawyers' sheet of the escalated items: the format and guide of ``calibrate sample``."""
    config = store.get_run(report.run_id)["config"]
    sample = SampleReport(
        sample_id=report.escalation_id, run_id=report.run_id, seed=0,
        n_requested=len(report.escalated), n_eligible=report.n_items, stratify=None, enrich=0,
        items=[SampledItem(item_id=i, stratum="escalated", reason="escalated")
               for i in report.escalated])
    return write_template(store, sample, path,
                          rubric_set=stored_rubric_set(config))


def escalation_figures(store: Store, run_id: str) -> EscalationFigures | None:
    """The run's figures split by the newest escalation, or None when it was never escalated.

    The lawyers' decisions on the escalated items are read now, so the combined pass rate
    appears once every escalated item is labelled (the escalation itself is never rewritten).
    """
    stored = store.escalations.latest_of_run(run_id)
    if stored is None:
        return None
    esc = EscalationReport.model_validate(stored)
    config = store.get_run(run_id)["config"]
    rset, specs = rubric_specs(stored_rubric_set(config))
    labels = load_labels(store, run_id, specs)
    lawyers, _ = lawyers_pass(ComparisonData(rset, specs, "store", run_id, labels),
                              human_scores(labels, specs)) if labels else ({}, "rule")
    results = store.load_results(run_id)
    lawyer_items = [*esc.escalated, *esc.reviewed]
    got = {i: lawyers[i] for i in lawyer_items if lawyers.get(i) is not None}
    pending = len(lawyer_items) - len(got)
    judge_passes = sum(results.get(i, {}).get("overall") == "pass" for i in esc.decided)
    lawyer_rate = sum(bool(v) for v in got.values()) / len(got) if got else None
    combined = None
    if pending == 0 and esc.n_items:
        combined = (judge_passes + sum(bool(v) for v in got.values())) / esc.n_items
    label = (f"escalation {esc.escalation_id}: judges decide {len(esc.decided)} items "
             + (f"(agreement with the lawyers >= {_pct(esc.target)} at {_pct(esc.confidence)} "
                "confidence)" if esc.guaranteed else "(nothing guaranteed: all to lawyers)"))
    return EscalationFigures(
        escalation_id=esc.escalation_id, guaranteed=esc.guaranteed, target=esc.target,
        confidence=esc.confidence, n_items=esc.n_items, decided=len(esc.decided),
        decided_pass_rate=esc.decided_pass_rate, escalated=len(lawyer_items),
        reviewed=len(got), pending=pending, lawyer_pass_rate=lawyer_rate,
        combined_pass_rate=combined, label=label)
