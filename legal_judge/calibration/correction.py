"""A fitted monotone correction from judge scores to lawyers' scores, and applying it.

``fit_correction`` learns one isotonic map per numeric rubric per judge_id from a stored
calibration's pairs and stores it, versioned, in ``corrections``. The runner applies it to later
runs with ``--calibration ID`` through :func:`correct_result`, which keeps the raw scores beside the
corrected ones and labels the result ``calibrated:<correction id>``.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

import numpy as np
from pydantic import ValidationError

from legal_judge.calibration.data import ENSEMBLE
from legal_judge.calibration.rubrics import rubric_specs
from legal_judge.calibration.schema import CalibrationReport, Correction, CvFigures, IsotonicMap
from legal_judge.errors import ConfigError, NotFoundError, StoreError
from legal_judge.stats import IsotonicModel, apply_isotonic, fit_isotonic
from legal_judge.store import Store, utcnow

__all__ = [
    "MIN_PAIRS",
    "apply_correction",
    "correct_result",
    "correct_verdict",
    "cross_validated",
    "fit_correction",
    "load_calibration",
    "load_correction",
    "run_correction",
    "uncalibrated_scores",
]

# Below this many labelled pairs an isotonic fit mostly memorises noise; the rubric is skipped
# (the same floor as the verdict's --min-labels).
MIN_PAIRS = 20
CV_FOLDS = 5


def load_calibration(store: Store, calibration_id: str) -> CalibrationReport:
    """A stored calibration report.

    Raises:
        NotFoundError: no such calibration.
        StoreError: the stored report is not a calibration report this version can read (an
            older or partial report): every caller gets a named error, never a raw
            ValidationError (the sync parked a whole run for it).
    """
    report = store.calibrations.report(calibration_id)
    if report is None:
        raise NotFoundError(f"no calibration '{calibration_id}' in {store.path}",
                            fix="`legal-judge calibrate history` lists the calibrations")
    try:
        return CalibrationReport.model_validate(report)
    except ValidationError as exc:
        raise StoreError(f"calibration '{calibration_id}' in {store.path} cannot be read as a "
                         f"calibration report ({exc.error_count()} field(s) missing or invalid)",
                         code="calibration-unreadable",
                         fix="recompute it: legal-judge calibrate compare with its scores and "
                             "labels") from None


def load_correction(store: Store, correction_id: str) -> Correction:
    """A stored correction by id, or the latest correction of a calibration id.

    Raises:
        NotFoundError: neither a correction nor a calibration with a fitted correction.
    """
    model = store.calibrations.correction(correction_id)
    if model is None:
        model = store.calibrations.latest_correction(correction_id)
    if model is None:
        raise NotFoundError(f"no correction '{correction_id}' in {store.path}",
                            fix="fit one first: legal-judge calibrate fit CALIBRATION_ID")
    return Correction.model_validate(model)


def cross_validated(x: list[float], y: list[float], scale: tuple[float, float], *,
                    folds: int = CV_FOLDS, seed: int = 0) -> tuple[float, float]:
    """k-fold held-out mean absolute error of the raw scores and of the isotonic correction.

    The folds are a seeded permutation (reproducible); each fold is corrected by a map fitted
    on the other folds only, so the corrected error is what a new run would see.
    """
    xa, ya = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    order = np.random.default_rng(seed).permutation(xa.size)
    held = np.empty(xa.size)
    for part in np.array_split(order, min(folds, xa.size)):
        train = np.setdiff1d(order, part)
        model = fit_isotonic(xa[train], ya[train], scale=scale)
        held[part] = apply_isotonic(model, xa[part])
    return float(np.mean(np.abs(xa - ya))), float(np.mean(np.abs(held - ya)))


def _grouped(report: CalibrationReport) -> dict[tuple[str, str], list[tuple[float, float]]]:
    _, specs = rubric_specs(report.rubric_set)
    grouped: dict[tuple[str, str], list[tuple[float, float]]] = defaultdict(list)
    for p in report.pairs:
        spec = specs.get(p.rubric)
        if spec is not None and spec.kind == "numeric" and p.judge_score is not None:
            grouped[(p.judge, p.rubric)].append((p.judge_score, p.human_score))
    return grouped


def fit_correction(store: Store, calibration_id: str, *, min_pairs: int = MIN_PAIRS,
                   folds: int = CV_FOLDS) -> Correction:
    """Fit and store an isotonic correction per numeric rubric per judge_id of a calibration.

    Each map is checked first by k-fold cross-validation: it is kept only when it reduces the
    held-out mean absolute error against the lawyers; otherwise (or below ``min_pairs``) the
    rubric is skipped with the reason, and the figures are in ``cv`` either way.

    Args:
        store: The store holding the calibration.
        calibration_id: The calibration to learn from.
        min_pairs: Rubrics of a judge with fewer labelled pairs are skipped.
        folds: Folds of the cross-validation.

    Returns:
        The stored :class:`Correction` (``version`` counts the fits of this calibration).

    Raises:
        ConfigError: no map passes (too few labels, or no correction reduces held-out error).
    """
    report = load_calibration(store, calibration_id)
    _, specs = rubric_specs(report.rubric_set)
    maps: dict[str, dict[str, IsotonicMap]] = defaultdict(dict)
    cv: dict[str, dict[str, CvFigures]] = defaultdict(dict)
    judges: dict[str, str] = {}
    skipped = []
    for (judge, rubric), pairs in sorted(_grouped(report).items()):
        judge_id = report.judge_ids.get(judge) or judge
        judges[judge_id] = judge
        x, y = (list(v) for v in zip(*pairs, strict=True))
        spec = specs[rubric]
        raw = float(np.mean(np.abs(np.asarray(x) - np.asarray(y))))
        if len(pairs) < min_pairs:
            why = f"{len(pairs)} labelled pairs < {min_pairs}"
            cv[judge_id][rubric] = CvFigures(n=len(pairs), mae_raw=raw, mae_corrected=None,
                                             kept=False, why=why)
            skipped.append(f"{judge}/{rubric}: {why}")
            continue
        raw, held = cross_validated(x, y, (spec.low, spec.high), folds=folds)
        if held >= raw:
            why = (f"does not reduce the held-out error (MAE {raw:.2f} -> {held:.2f} "
                   f"over {folds} folds)")
            cv[judge_id][rubric] = CvFigures(n=len(pairs), mae_raw=raw, mae_corrected=held,
                                             kept=False, why=why)
            skipped.append(f"{judge}/{rubric}: {why}")
            continue
        cv[judge_id][rubric] = CvFigures(n=len(pairs), mae_raw=raw, mae_corrected=held, kept=True)
        model = fit_isotonic(x, y, scale=(spec.low, spec.high))
        maps[judge_id][rubric] = IsotonicMap(x_knots=list(model.x_knots), y_knots=list(model.y_knots),
                                             scale_min=model.scale_min, scale_max=model.scale_max,
                                             n=model.n)
    if not maps:
        raise ConfigError(f"calibration '{calibration_id}' gives no correction worth applying: "
                          + "; ".join(skipped[:6]), code="calibration-fit",
                          fix=f"label at least {min_pairs} items per rubric and compare again; a "
                              "correction that does not reduce held-out error is not fitted")
    with store.transaction():
        version = 1 + store.calibrations.correction_count(calibration_id)
        correction = Correction(
            id=f"corr-{calibration_id}-v{version}", version=version, calibration_id=calibration_id,
            quarter=report.quarter, rubric_set=report.rubric_set, created_at=utcnow(),
            ensemble_judge_id=report.judge_ids.get(ENSEMBLE), judges=judges, maps=dict(maps),
            skipped=skipped, cv={k: dict(v) for k, v in cv.items()}, cv_folds=folds,
        )
        store.calibrations.save_correction(correction.id, calibration_id=calibration_id,
                                           created_at=correction.created_at,
                                           model=correction.model_dump(mode="json"))
    return correction


def _model(correction: Correction, rubric: str, judge_id: str) -> IsotonicModel | None:
    m = correction.maps.get(judge_id, {}).get(rubric)
    if m is None:
        return None
    return IsotonicModel(tuple(m.x_knots), tuple(m.y_knots), m.scale_min, m.scale_max, m.n)


def apply_correction(correction: Correction, rubric: str, judge_id: str, score: float) -> float:
    """The corrected score of one judge on one rubric.

    Raises:
        ConfigError: the correction has no map for this judge_id and rubric (it was fitted for
            another judge: a changed judge needs a new calibration).
    """
    model = _model(correction, rubric, judge_id)
    if model is None:
        raise ConfigError(
            f"correction {correction.id} has no map for judge_id {judge_id} on {rubric}",
            code="calibration-mismatch",
            fix="calibrate this judge (calibrate compare + fit) or run without --calibration",
        )
    return float(apply_isotonic(model, np.array([score], dtype=float))[0])


def _caps(overrides: list[str]) -> dict[str, float]:
    """The caps the answer rules applied to a result (e.g. Rule 1's citation_quality = 0)."""
    if not overrides:
        return {}
    from legal_judge.benchmark.answer_rules import capped_rubrics

    # The ensemble records an override as "<rule>: <reason> (<detail>)"; the answer-rules table
    # says which rubrics that rule caps, and at what.
    return capped_rubrics(overrides)


def _capped(scores: dict[str, float], caps: dict[str, float]) -> dict[str, float]:
    return {r: min(v, caps[r]) if r in caps else v for r, v in scores.items()}


def _corrected(scores: dict[str, float], correction: Correction,
               judge_id: str) -> tuple[dict[str, float], list[str]]:
    out, done = dict(scores), []
    for rubric, value in scores.items():
        if _model(correction, rubric, judge_id) is not None:
            out[rubric] = apply_correction(correction, rubric, judge_id, value)
            done.append(rubric)
    return out, done


def correct_result(result: dict[str, Any], correction: Correction, *,
                   judge_id: str | None = None) -> dict[str, Any]:
    """An ensemble result with corrected ``scores``; the uncorrected ones stay in ``raw_scores``.

    Only rubrics with a fitted map change, and an answer rule's cap holds after the correction
    (Rule 1's citation_quality = 0 stays 0; rule 4's legal_soundness stays at most 1); ``flags``
    gains ``calibrated:<correction id>``. The decision (the vote, or a rule's forced fail) is left
    as it was.

    Args:
        result: An ``EnsembleResult`` as a dict.
        correction: From :func:`load_correction`.
        judge_id: The run's ensemble judge_id; when given it must be the one calibrated.

    Raises:
        ConfigError: another judge_id, no map for the ensemble, or a result already corrected.
    """
    ens_id = correction.ensemble_judge_id or ENSEMBLE
    if judge_id is not None and judge_id != ens_id:
        raise ConfigError(
            f"correction {correction.id} was fitted for judge_id {ens_id}, this run's is {judge_id}",
            code="calibration-mismatch", fix="calibrate the current judge before applying a correction")
    if ens_id not in correction.maps:
        if ens_id in correction.cv:  # fitted, but no map beat the raw scores on held-out folds
            raise ConfigError(
                f"correction {correction.id} has no map for the ensemble: on held-out folds no "
                "correction of the ensemble's scores reduced their error against the lawyers "
                "(`legal-judge calibrate fit` shows each)", code="calibration-mismatch",
                fix="use the ensemble's raw scores (nothing to correct), or label more items "
                    "and fit again")
        raise ConfigError(f"correction {correction.id} has no map for the ensemble",
                          code="calibration-mismatch", fix="compare the ensemble with labels, then fit")
    flags = list(result.get("flags", []))
    if any(f.startswith("calibrated:") for f in flags):
        raise ConfigError("this result is already calibrated", code="calibration-twice",
                          fix="apply the correction to the raw scores (raw_scores) only once")
    scores, done = _corrected(dict(result.get("scores", {})), correction, ens_id)
    if not done:
        return dict(result)
    # A rule's cap holds after the correction too (rule 1's citation_quality = 0 stays 0).
    scores = _capped(scores, _caps(list(result.get("overrides", []))))
    # The ensemble already keeps the judges' uncorrected aggregate in raw_scores (before the
    # rules' caps, applied again above); it is filled here only when a producer left it empty.
    raw = dict(result.get("raw_scores") or result.get("scores", {}))
    return {**result, "raw_scores": raw, "scores": scores,
            "flags": [*flags, f"calibrated:{correction.id}"]}


def correct_verdict(verdict: dict[str, Any], correction: Correction) -> dict[str, Any]:
    """A judge verdict with corrected scores by its own judge_id; raw scores go to ``extra``.

    Unchanged when the correction has no map for the verdict's judge_id.
    """
    scores, done = _corrected(dict(verdict.get("scores", {})), correction, verdict["judge_id"])
    if not done:
        return dict(verdict)
    extra = {**verdict.get("extra", {}), "raw_scores": dict(verdict.get("scores", {})),
             "calibrated": correction.id}
    return {**verdict, "scores": scores, "extra": extra}


def uncalibrated_scores(result: dict[str, Any], correction: Correction | None) -> dict[str, float]:
    """The ensemble scores of a result as they were before ``--calibration`` corrected them.

    ``raw_scores`` holds the judges' aggregate before the rules' caps too, so the rubrics the
    correction changed are taken from it with the caps applied again (a Rule 1
    ``citation_quality = 0`` stays 0).

    Args:
        result: A stored ensemble result.
        correction: The correction the run applied (None: the result was not corrected).
    """
    scores = dict(result.get("scores") or {})
    if correction is None or not any(str(f).startswith("calibrated:")
                                     for f in result.get("flags", [])):
        return scores
    ens_id = correction.ensemble_judge_id or ENSEMBLE
    caps = _caps(list(result.get("overrides", [])))
    raw = result.get("raw_scores") or {}
    before = {r: float(raw[r]) if r in raw and _model(correction, r, ens_id) else v
              for r, v in scores.items()}
    return _capped(before, caps)


def run_correction(store: Store, run: dict[str, Any]) -> Correction | None:
    """The correction a run applied with ``--calibration`` (None when it applied none)."""
    ref = (run.get("config") or {}).get("calibration")
    return load_correction(store, str(ref)) if ref else None
