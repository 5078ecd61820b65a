"""The quarterly comparison: per rubric and per judge, how far the judges are from the lawyers.

Numeric rubrics: signed divergence (judge - human) with its 95% t CI, mean absolute divergence,
Cohen's kappa (unweighted, linear, quadratic) and ordinal alpha on scores rounded to the scale's
levels, interval alpha and Spearman on the raw scores (``legal_judge.stats.agreement_summary``).
Categorical rubrics (hallucination) use severity indexes for kappa and alpha; a mean divergence
is not defined there, so kappa is their rule. The human score of an item is the annotators' mean
(mode for a category). The verdict (``recalibrate`` with its reasons, ``ok``, ``insufficient``) is
decided in :mod:`legal_judge.calibration.verdict`; the panel's real size in
:mod:`legal_judge.calibration.panel`.
"""

from __future__ import annotations

import re
import uuid
from dataclasses import asdict
from datetime import UTC, datetime

import numpy as np

from legal_judge.calibration.data import ENSEMBLE, ComparisonData, human_scores, lawyers_pass
from legal_judge.calibration.panel import panel_rows
from legal_judge.calibration.robust import ordinal_fields, pass_fail_fields
from legal_judge.calibration.rubrics import RubricSpec
from legal_judge.calibration.schema import (
    AgreementRow,
    CalibrationReport,
    DisagreementItem,
    InterAnnotator,
    LawyerComment,
    Pair,
    PassFailMiss,
    PassFailRow,
    Reason,
    RubricComparison,
)
from legal_judge.calibration.verdict import (
    decide,
    divergence_reason,
    false_pass_reason,
    headline,
    kappa_reason,
    loa_reason,
)
from legal_judge.errors import ConfigError
from legal_judge.policy import CalibrationPolicy, PolicyInForce, load_policy
from legal_judge.stats import (
    agreement_summary,
    cohen_kappa,
    confusion_matrix_pf,
    kappa_ci,
    krippendorff_alpha,
    limits_of_agreement,
    proportion_ci,
    spearman,
)
from legal_judge.store import Store, utcnow
from legal_judge.sync.outbox import EntityKind, enqueue

__all__ = ["compare", "current_quarter", "save_calibration"]

_QUARTER = re.compile(r"^\d{4}-Q[1-4]$")
Score = float | str


def current_quarter(now: datetime | None = None) -> str:
    """``YYYY-Qn`` of ``now`` (UTC today by default)."""
    now = now or datetime.now(UTC)
    return f"{now.year}-Q{(now.month - 1) // 3 + 1}"


def check_quarter(quarter: str) -> str:
    """Validate a ``YYYY-Qn`` quarter label."""
    if not _QUARTER.match(quarter):
        raise ConfigError(f"bad quarter '{quarter}'", code="calibration-quarter",
                          fix="write the quarter as YYYY-Qn, e.g. 2026-Q4")
    return quarter


def _vectors(spec: RubricSpec, judge: dict[str, Score], human: dict[str, Score],
             items: list[str]) -> tuple[list[float | None], list[float]]:
    j = [spec.code(judge[i]) if i in judge else None for i in items]
    return j, [spec.code(human[i]) for i in items]


def _empty_row(judge: str, judge_id: str | None, n_unpaired: int) -> AgreementRow:
    return AgreementRow(judge=judge, judge_id=judge_id, n=0, n_unpaired=n_unpaired,
                        mean_divergence=None, ci95=None, mean_abs_divergence=None, kappa=None,
                        kappa_linear=None, kappa_quadratic=None, alpha_ordinal=None,
                        alpha_interval=None, spearman=None, spearman_p=None, recalibrate=False)


def _raw_agreement(j: list[float], h: list[float]) -> float | None:
    """Share of items with the same (rounded) score: what kappa corrects for chance."""
    if not j:
        return None
    return float(np.mean(np.rint(np.asarray(j)) == np.rint(np.asarray(h))))


def _paired(j: list[float | None], h: list[float]) -> tuple[list[float], list[float]]:
    keep = [(a, b) for a, b in zip(j, h, strict=True) if a is not None]
    return [a for a, _ in keep], [b for _, b in keep]


def _numeric_row(spec: RubricSpec, judge: str, judge_id: str | None, j: list[float | None],
                 h: list[float], th: CalibrationPolicy) -> AgreementRow:
    s = agreement_summary(j, h, labels=[int(v) for v in spec.scale])
    d = s.divergence
    ja, ha = _paired(j, h)
    kci = kappa_ci(np.rint(ja).astype(int).tolist(), np.rint(ha).astype(int).tolist(),
                   weights="quadratic", labels=[int(v) for v in spec.scale])
    loa = limits_of_agreement(ja, ha)
    raw = _raw_agreement(ja, ha)
    robust = ordinal_fields(np.rint(ja).astype(int).tolist(), np.rint(ha).astype(int).tolist(),
                            [int(v) for v in spec.scale])
    verdict, reasons, note = decide(s.n, [
        divergence_reason(d.mean_signed, th),
        kappa_reason(kci.kappa, kci.ci, raw, th, robust=("AC2", robust["ac2"])),
        loa_reason(loa.lower, loa.upper, th)], th)
    return AgreementRow(
        judge=judge, judge_id=judge_id, n=s.n, n_unpaired=len(h) - s.n,
        mean_divergence=d.mean_signed, ci95=d.ci95, mean_abs_divergence=d.mean_absolute,
        kappa=s.kappa, kappa_linear=s.kappa_linear, kappa_quadratic=s.kappa_quadratic,
        alpha_ordinal=s.alpha_ordinal, alpha_interval=s.alpha_interval,
        spearman=s.spearman_rho, spearman_p=s.spearman_p,
        recalibrate=verdict == "recalibrate", raw_agreement=raw, kappa_quadratic_ci95=kci.ci,
        loa=(loa.lower, loa.upper) if loa.lower is not None and loa.upper is not None else None,
        verdict=verdict, reasons=reasons, note=note, **robust,  # type: ignore[arg-type]
    )


def _categorical_row(spec: RubricSpec, judge: str, judge_id: str | None, j: list[float | None],
                     h: list[float], th: CalibrationPolicy) -> AgreementRow:
    levels = [float(i) for i in range(len(spec.values))]
    ja, ha = _paired(j, h)
    rho = spearman(ja, ha)
    kci = kappa_ci(ja, ha, weights="quadratic", labels=levels)
    raw = _raw_agreement(ja, ha)
    # A category has no mean divergence or limits of agreement: kappa is its rule.
    verdict, reasons, note = decide(len(ja), [kappa_reason(kci.kappa, kci.ci, raw, th)], th)
    return AgreementRow(
        judge=judge, judge_id=judge_id, n=len(ja), n_unpaired=len(h) - len(ja),
        mean_divergence=None, ci95=None, mean_abs_divergence=None,
        kappa=cohen_kappa(ja, ha, labels=levels),
        kappa_linear=cohen_kappa(ja, ha, weights="linear", labels=levels),
        kappa_quadratic=kci.kappa,
        alpha_ordinal=krippendorff_alpha([ja, ha], level="ordinal"),
        alpha_interval=None,  # the categories are ordered, not evenly spaced
        alpha_nominal=krippendorff_alpha([ja, ha], level="nominal"),
        spearman=rho.rho, spearman_p=rho.p_value, recalibrate=verdict == "recalibrate",
        raw_agreement=raw, kappa_quadratic_ci95=kci.ci, verdict=verdict,  # type: ignore[arg-type]
        reasons=reasons, note=note, **ordinal_fields(ja, ha, levels),
    )


def _inter_annotator(data: ComparisonData, spec: RubricSpec) -> InterAnnotator | None:
    labels = [x for x in data.labels if x.rubric == spec.name]
    annotators = sorted({x.annotator for x in labels})
    items = sorted({x.item_id for x in labels})
    if len(annotators) < 2:
        return None
    matrix = np.full((len(annotators), len(items)), np.nan)
    for x in labels:
        matrix[annotators.index(x.annotator), items.index(x.item_id)] = spec.code(x.score)
    multi = int(np.sum(np.sum(~np.isnan(matrix), axis=0) >= 2))
    if multi == 0:
        return None
    numeric = spec.kind == "numeric"
    return InterAnnotator(
        annotators=annotators, items_multi=multi,
        alpha_ordinal=krippendorff_alpha(matrix, level="ordinal"),
        alpha_interval=krippendorff_alpha(matrix, level="interval") if numeric else None,
        alpha_nominal=krippendorff_alpha(matrix, level="nominal"),
    )


def _rubric_verdict(rows: list[AgreementRow]) -> str:
    verdicts = {r.verdict for r in rows}
    if "recalibrate" in verdicts:
        return "recalibrate"
    return "ok" if "ok" in verdicts else "insufficient"


def _rubric(data: ComparisonData, spec: RubricSpec, human: dict[str, Score],
            th: CalibrationPolicy) -> tuple[RubricComparison, list[Pair]]:
    items = sorted(human)
    rows, pairs = [], []
    for judge in data.judges:
        col = data.scores[judge].get(spec.name, {})
        j, h = _vectors(spec, col, human, items)
        pairs += [Pair(item_id=i, rubric=spec.name, judge=judge, judge_score=a, human_score=b)
                  for i, a, b in zip(items, j, h, strict=True)]
        if all(a is None for a in j):
            if col or judge == ENSEMBLE:
                rows.append(_empty_row(judge, data.judge_ids.get(judge), len(items)))
            continue
        rows.append(_numeric_row(spec, judge, data.judge_ids.get(judge), j, h, th)
                    if spec.kind == "numeric"
                    else _categorical_row(spec, judge, data.judge_ids.get(judge), j, h, th))
    verdict = _rubric_verdict(rows) if rows else "insufficient"
    comp = RubricComparison(
        rubric=spec.name, kind="numeric" if spec.kind == "numeric" else "categorical",
        scale=spec.scale, n_labelled=len(items), judges=rows,
        inter_annotator=_inter_annotator(data, spec), recalibrate=verdict == "recalibrate",
        verdict=verdict,  # type: ignore[arg-type]
    )
    return comp, pairs


def _pass_fail(data: ComparisonData, humans: dict[str, dict[str, Score]],
               th: CalibrationPolicy) -> dict[str, PassFailRow]:
    lawyers, lawyer_source = lawyers_pass(data, humans)
    items = sorted(i for i, v in lawyers.items() if v is not None)
    out = {}
    for judge in data.judges:
        decided = data.judge_pass.get(judge, {})
        j = [decided.get(i) for i in items]
        if not any(v is not None for v in j):
            continue
        c = confusion_matrix_pf(j, [lawyers[i] for i in items])
        fails = c.judge_pass_human_fail + c.both_fail
        fp_ci = proportion_ci(c.judge_pass_human_fail, fails, method="exact") if fails else None
        jb = [v for v, i in zip(j, items, strict=True) if v is not None]
        hb = [lawyers[i] for v, i in zip(j, items, strict=True) if v is not None]
        kci = kappa_ci(jb, hb, weights=None, labels=[False, True])
        robust = pass_fail_fields(jb, hb)  # type: ignore[arg-type]
        verdict, reasons, note = decide(c.n, [
            false_pass_reason(c.judge_pass_human_fail, fails, fp_ci, th),
            kappa_reason(c.kappa, kci.ci, c.agreement, th, kind="pass/fail kappa",
                         robust=("AC1", robust["ac1"]))], th)
        out[judge] = PassFailRow(
            **asdict(c), source=data.pass_source,
            false_pass_rate=c.judge_pass_human_fail / fails if fails else None,
            false_pass_ci95=fp_ci, kappa_ci95=kci.ci, lawyer_source=lawyer_source,  # type: ignore[arg-type]
            verdict=verdict, reasons=reasons, note=note, **robust,  # type: ignore[arg-type]
        )
    return out


def _comments_by_item(data: ComparisonData) -> dict[str, list[LawyerComment]]:
    """The lawyers' comments on the labelled items, by item."""
    labelled = {x.item_id for x in data.labels}
    out: dict[str, list[LawyerComment]] = {}
    for c in data.comments:
        if c.item_id in labelled:
            out.setdefault(c.item_id, []).append(c)
    return out


def _misses(data: ComparisonData, humans: dict[str, dict[str, Score]],
            comments: dict[str, list[LawyerComment]]) -> list[PassFailMiss]:
    """The answers the ensemble (else the first judge) and the lawyers decided differently:
    the false passes first (the worse error for a legal answer), then the false fails."""
    lawyers, _ = lawyers_pass(data, humans)
    judge = ENSEMBLE if ENSEMBLE in data.judge_pass else next(iter(data.judges), None)
    if judge is None:
        return []
    decided = data.judge_pass.get(judge, {})
    out = [PassFailMiss(item_id=i, judge=judge, judge_pass=bool(decided[i]),
                        lawyers_pass=bool(lawyers[i]), comments=comments.get(i, []))
           for i in sorted(lawyers) if lawyers[i] is not None and decided.get(i) is not None
           and decided[i] != lawyers[i]]
    return sorted(out, key=lambda m: not m.judge_pass)


def _largest(pairs: list[Pair], data: ComparisonData, top: int,
             comments: dict[str, list[LawyerComment]]) -> list[DisagreementItem]:
    numeric = {r for r, s in data.specs.items() if s.kind == "numeric"}
    focus = ENSEMBLE if any(p.judge == ENSEMBLE for p in pairs) else None
    scored = [p for p in pairs if p.judge_score is not None and p.rubric in numeric
              and (focus is None or p.judge == focus)]
    scored.sort(key=lambda p: (-abs(p.judge_score - p.human_score), p.item_id, p.rubric, p.judge))  # type: ignore[operator]
    return [DisagreementItem(item_id=p.item_id, rubric=p.rubric, judge=p.judge,
                             judge_score=p.judge_score, human_score=p.human_score,  # type: ignore[arg-type]
                             difference=p.judge_score - p.human_score,  # type: ignore[operator]
                             comments=comments.get(p.item_id, []))
            for p in scored[:top]]


_FLAT = ("n", "mean_divergence", "mean_abs_divergence", "kappa", "kappa_linear", "kappa_quadratic",
         "alpha_ordinal", "alpha_interval", "spearman", "recalibrate", "raw_agreement")


def _flat(rubrics: list[RubricComparison]) -> dict[str, dict[str, float | bool | None]]:
    """``rubric -> {"<judge>.<metric>": value}``: the shape the Langfuse sync turns into scores."""
    return {c.rubric: {f"{row.judge}.{m}": getattr(row, m) for row in c.judges for m in _FLAT}
            for c in rubrics}


def _findings(rubrics: list[RubricComparison], pass_fail: dict[str, PassFailRow]
              ) -> list[tuple[str, Reason, tuple[int, int] | None]]:
    """The reasons of the ensemble (or, without one, of every judge) for the headline."""
    out: list[tuple[str, Reason, tuple[int, int] | None]] = []
    for comp in rubrics:
        rows = [r for r in comp.judges if r.judge == ENSEMBLE] or comp.judges
        out += [(comp.rubric, reason, None) for r in rows for reason in r.reasons]
    pf_rows = [pass_fail[ENSEMBLE]] if ENSEMBLE in pass_fail else list(pass_fail.values())
    for pf in pf_rows:
        counts = (pf.judge_pass_human_fail, pf.judge_pass_human_fail + pf.both_fail)
        out += [("pass/fail", reason, counts) for reason in pf.reasons]
    return out


def _overall(rubrics: list[RubricComparison], pass_fail: dict[str, PassFailRow]) -> str:
    verdicts = {c.verdict for c in rubrics} | {p.verdict for p in pass_fail.values()}
    if "recalibrate" in verdicts:
        return "recalibrate"
    return "ok" if "ok" in verdicts else "insufficient"


def compare(data: ComparisonData, *, quarter: str | None = None,
            policy: PolicyInForce | None = None, top: int = 10) -> CalibrationReport:
    """Compare judges with lawyers on every labelled rubric and decide the verdict.

    Args:
        data: Scores and labels from :func:`~legal_judge.calibration.data.from_store` or
            :func:`~legal_judge.calibration.data.from_files`.
        quarter: ``YYYY-Qn``; the current quarter by default.
        policy: The policy in force; its ``[calibration]`` section holds every threshold of
            the verdict (divergence, kappa, limits of agreement, false-pass rate, the labels a
            ``recalibrate`` and an ``ok`` need). The policy found from the working directory
            when None.
        top: How many (item, rubric) pairs with the largest ensemble disagreement to list.

    Returns:
        A :class:`CalibrationReport` (not yet stored: see :func:`save_calibration`), which
        records the thresholds, the policy and its overrides.

    Raises:
        ConfigError: no label matches a judged item, or a bad quarter.
    """
    quarter = check_quarter(quarter or current_quarter())
    policy = policy or load_policy()
    th = policy.calibration
    humans = human_scores(data.labels, data.specs)
    if not data.labels:
        raise ConfigError("no lawyer label matches an item of this comparison",
                          code="calibration-no-labels",
                          fix="import labels first: legal-judge calibrate import LABELS")
    rubrics, pairs = [], []
    for name, spec in data.specs.items():
        if name in humans:
            comp, found = _rubric(data, spec, humans[name], th)
            rubrics.append(comp)
            pairs += found
    n_items = len({x.item_id for x in data.labels})
    notes = []
    if n_items < th.min_labels:
        notes.append(f"only {n_items} labelled items, fewer than calibration.min_labels = "
                     f"{th.min_labels} (the quarterly standard): no rubric can be ok, and no gate "
                     "relies on this calibration; a recalibrate counts from "
                     f"{th.recalibrate_floor}")
    if any(c.kind == "categorical" for c in rubrics):
        notes.append("categorical rubrics have no mean divergence or limits of agreement: "
                     "their rule is kappa (on the severity order)")
    flagged = [c.rubric for c in rubrics if c.recalibrate]
    pass_fail = _pass_fail(data, humans, th)
    verdict = _overall(rubrics, pass_fail)
    comments = _comments_by_item(data)
    return CalibrationReport(
        created_at=utcnow(), quarter=quarter, run_id=data.run_id, source=data.source,
        rubric_set=data.rubric_set.id, ensemble_judge_id=data.judge_ids.get(ENSEMBLE),
        judge_ids=dict(sorted(data.judge_ids.items())), threshold=th.divergence,
        n_labelled_items=n_items, annotators=sorted({x.annotator for x in data.labels}),
        below_quarterly_standard=n_items < th.min_labels, quarterly_standard=th.min_labels,
        recalibrate=verdict == "recalibrate", recalibrate_rubrics=flagged, rubrics=rubrics,
        per_rubric=_flat(rubrics), pass_fail=pass_fail,
        largest_disagreements=_largest(pairs, data, top, comments), pairs=pairs, notes=notes,
        verdict=verdict,  # type: ignore[arg-type]
        headline=headline(_findings(rubrics, pass_fail)),
        insufficient_rubrics=[c.rubric for c in rubrics if c.verdict == "insufficient"],
        min_labels=th.min_labels, min_labels_recalibrate=th.recalibrate_floor,
        min_kappa=th.min_kappa, max_loa=th.max_loa, max_false_pass=th.max_false_pass,
        policy=policy.as_dict("calibration"), policy_line=policy.line("calibration"),
        override_lines=policy.override_lines(),
        panel=panel_rows(data, humans, rubrics),
        pass_fail_misses=_misses(data, humans, comments),
        lawyer_comments=[c for cs in comments.values() for c in cs],
    )


def save_calibration(store: Store, report: CalibrationReport) -> CalibrationReport:
    """Store a calibration (and queue it for Langfuse) in one transaction; returns it with its id."""
    cal_id = f"cal-{report.quarter}-{uuid.uuid4().hex[:8]}"
    stored = report.model_copy(update={"calibration_id": cal_id})
    with store.transaction():
        store.calibrations.save(cal_id, run_id=stored.run_id, quarter=stored.quarter,
                                judge_id=stored.ensemble_judge_id, rubric_set=stored.rubric_set,
                                created_at=stored.created_at,
                                report=stored.model_dump(mode="json"))
        enqueue(store, EntityKind.CALIBRATION, cal_id, quarter=stored.quarter)
    return stored
