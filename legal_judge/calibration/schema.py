"""Pydantic types of the calibration package: what is stored, dumped to JSON and read back."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

__all__ = [
    "AgreementRow",
    "CalibrationReport",
    "Correction",
    "CvFigures",
    "DisagreementItem",
    "EstimateRow",
    "HistoryRow",
    "ImportSummary",
    "InterAnnotator",
    "IsotonicMap",
    "LawyerComment",
    "Pair",
    "PanelJudge",
    "PanelRow",
    "PassFailMiss",
    "PassFailRow",
    "Reason",
    "RubricComparison",
    "RunEstimate",
    "SampleReport",
    "SampledItem",
]

class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class SampledItem(_Strict):
    """One item chosen for the lawyers, and why it was chosen."""

    item_id: str
    stratum: str
    reason: Literal["random", "enriched", "escalated"]


class SampleReport(_Strict):
    """A reproducible sample: the seed and settings that redraw exactly these items."""

    sample_id: str
    run_id: str
    seed: int
    n_requested: int
    n_eligible: int
    stratify: str | None
    enrich: int
    items: list[SampledItem]
    strata: dict[str, int] = Field(default_factory=dict)
    out: str | None = None
    annotation_queue: str | None = None
    notes: list[str] = Field(default_factory=list)


class ImportSummary(_Strict):
    """What ``calibrate import`` stored."""

    file: str
    labels: int
    items: int
    annotators: list[str]
    rubrics: list[str]
    replaced: int = 0
    unchanged: int = 0
    comments: int = 0


Verdict = Literal["recalibrate", "ok", "insufficient"]


class Reason(_Strict):
    """One reason a verdict fired: which rule, the measured value, the threshold, in words."""

    code: Literal["divergence", "kappa", "loa", "false_pass"]
    message: str
    value: float
    threshold: float


class PassFailRow(_Strict):
    """Pass/fail confusion of one judge against the lawyers (rows: judge, columns: human).

    ``false_pass_rate`` is the share of the lawyers' fails the judge passed, with its
    Clopper-Pearson 95% CI; ``lawyer_source`` says whether the lawyers' pass/fail is their own
    (the sheet's pass/fail column) or derived from their rubric scores by the rubric set's rule.
    ``ac1`` and ``pabak`` are the prevalence-robust coefficients (Gwet's AC1, PABAK) with their
    95% t CIs (:mod:`legal_judge.calibration.robust`).
    """

    n: int
    both_pass: int
    judge_pass_human_fail: int
    judge_fail_human_pass: int
    both_fail: int
    agreement: float
    kappa: float | None
    source: Literal["verdict", "rule"]
    false_pass_rate: float | None = None
    false_pass_ci95: tuple[float, float] | None = None
    kappa_ci95: tuple[float, float] | None = None
    ac1: float | None = None
    ac1_ci95: tuple[float, float] | None = None
    pabak: float | None = None
    pabak_ci95: tuple[float, float] | None = None
    lawyer_source: Literal["rule", "lawyers", "mixed"] = "rule"
    verdict: Verdict = "ok"
    reasons: list[Reason] = Field(default_factory=list)
    note: str | None = None


class AgreementRow(_Strict):
    """Every agreement figure of one judge (or the ensemble) on one rubric.

    ``ac2`` is Gwet's AC2 with the quadratic weights of ``kappa_quadratic``, with its 95% CI.
    """

    judge: str
    judge_id: str | None
    n: int
    n_unpaired: int
    mean_divergence: float | None
    ci95: tuple[float, float] | None
    mean_abs_divergence: float | None
    kappa: float | None
    kappa_linear: float | None
    kappa_quadratic: float | None
    alpha_ordinal: float | None
    alpha_interval: float | None
    alpha_nominal: float | None = None
    spearman: float | None
    spearman_p: float | None
    recalibrate: bool
    raw_agreement: float | None = None
    kappa_quadratic_ci95: tuple[float, float] | None = None
    ac2: float | None = None
    ac2_ci95: tuple[float, float] | None = None
    loa: tuple[float, float] | None = None
    verdict: Verdict = "ok"
    reasons: list[Reason] = Field(default_factory=list)
    note: str | None = None


class InterAnnotator(_Strict):
    """Agreement among the lawyers themselves on one rubric."""

    annotators: list[str]
    items_multi: int
    alpha_ordinal: float | None
    alpha_interval: float | None
    alpha_nominal: float | None


class RubricComparison(_Strict):
    """One rubric: per judge agreement with the lawyers and the lawyers' own agreement."""

    rubric: str
    kind: Literal["numeric", "categorical"]
    scale: list[float | str]
    n_labelled: int
    judges: list[AgreementRow]
    inter_annotator: InterAnnotator | None = None
    recalibrate: bool
    verdict: Verdict = "ok"


class PanelJudge(_Strict):
    """One judge of the panel on one rubric: its agreement and error against the lawyers."""

    judge: str
    judge_id: str | None
    kappa_quadratic: float | None
    mae: float
    suggested_weight: float | None


class PanelRow(_Strict):
    """The panel's real size on one rubric, from the judges' errors on the labelled items.

    ``suggested_weights`` are proportional to 1 / mean squared error (not applied: write them
    into the ensemble to use them).
    """

    rubric: str
    n_items: int
    judges: list[PanelJudge]
    error_correlations: dict[str, dict[str, float | None]]
    mean_error_correlation: float | None
    effective_judges: float | None
    ensemble_mae: float | None
    best_judge: str | None
    ensemble_better: bool | None
    note: str | None = None


class LawyerComment(_Strict):
    """One lawyer's comment on one answer (the sheet's comment column; may span lines)."""

    item_id: str
    annotator: str
    comment: str


class DisagreementItem(_Strict):
    """One (item, rubric) where a judge is far from the lawyers, with the lawyers' comments."""

    item_id: str
    rubric: str
    judge: str
    judge_score: float
    human_score: float
    difference: float
    comments: list[LawyerComment] = Field(default_factory=list)


class PassFailMiss(_Strict):
    """An answer the ensemble (or, without one, the first judge) and the lawyers decided
    differently: a false pass (``judge_pass`` and not ``lawyers_pass``) or a false fail."""

    item_id: str
    judge: str
    judge_pass: bool
    lawyers_pass: bool
    comments: list[LawyerComment] = Field(default_factory=list)


class Pair(_Strict):
    """One judge score next to the lawyers' score; what ``calibrate fit`` learns from.

    Categorical rubrics carry the severity index (e.g. clean 0, uncertain 1, hallucinated 2).
    """

    item_id: str
    rubric: str
    judge: str
    judge_score: float | None
    human_score: float


class CalibrationReport(_Strict):
    """The quarterly comparison of judges against lawyers."""

    calibration_id: str | None = None
    created_at: str
    quarter: str
    run_id: str | None
    source: Literal["store", "files"]
    rubric_set: str
    ensemble_judge_id: str | None
    judge_ids: dict[str, str | None]
    threshold: float
    n_labelled_items: int
    annotators: list[str]
    below_quarterly_standard: bool
    #: The policy's ``calibration.min_labels`` it was decided under (50 before it was stored).
    quarterly_standard: int = 50
    recalibrate: bool
    recalibrate_rubrics: list[str]
    rubrics: list[RubricComparison]
    per_rubric: dict[str, dict[str, float | bool | None]] = Field(default_factory=dict)
    pass_fail: dict[str, PassFailRow]
    largest_disagreements: list[DisagreementItem]
    pairs: list[Pair]
    notes: list[str] = Field(default_factory=list)
    verdict: Verdict = "ok"
    headline: str | None = None
    insufficient_rubrics: list[str] = Field(default_factory=list)
    #: An ``ok`` needs this many labelled items; a ``recalibrate`` needs
    #: ``min_labels_recalibrate`` (stored before the policy held them: one floor of 20 for both).
    min_labels: int = 20
    min_labels_recalibrate: int | None = None
    min_kappa: float = 0.6
    max_loa: float = 1.5
    max_false_pass: float = 0.1
    panel: list[PanelRow] = Field(default_factory=list)
    pass_fail_misses: list[PassFailMiss] = Field(default_factory=list)
    lawyer_comments: list[LawyerComment] = Field(default_factory=list)
    #: The policy's ``[calibration]`` section and overrides the verdict was decided under
    #: (empty for calibrations stored before the policy held its thresholds).
    policy: dict[str, Any] = Field(default_factory=dict)
    policy_line: str = ""
    override_lines: list[str] = Field(default_factory=list)


class IsotonicMap(_Strict):
    """A fitted non-decreasing map for one rubric of one judge."""

    x_knots: list[float]
    y_knots: list[float]
    scale_min: float
    scale_max: float
    n: int


class CvFigures(_Strict):
    """Held-out (k-fold) mean absolute error of one judge's rubric before and after correction.

    ``kept`` is False (with ``why``) when the correction does not reduce the held-out error or
    there are too few labelled pairs: such a map is not stored.
    """

    n: int
    mae_raw: float
    mae_corrected: float | None
    kept: bool
    why: str | None = None


class Correction(_Strict):
    """A versioned set of monotone corrections, keyed by judge_id then rubric."""

    id: str
    version: int
    calibration_id: str
    quarter: str
    rubric_set: str
    method: Literal["isotonic"] = "isotonic"
    created_at: str
    ensemble_judge_id: str | None
    judges: dict[str, str]
    maps: dict[str, dict[str, IsotonicMap]]
    skipped: list[str] = Field(default_factory=list)
    cv: dict[str, dict[str, CvFigures]] = Field(default_factory=dict)
    cv_folds: int = 5


class HistoryRow(_Strict):
    """One rubric in one quarter, for one judge; ``drift`` compares with the previous quarter."""

    quarter: str
    rubric: str
    judge: str
    judge_id: str | None
    calibration_id: str
    n: int
    mean_divergence: float | None
    ci95: tuple[float, float] | None
    mean_abs_divergence: float | None
    kappa_quadratic: float | None
    recalibrate: bool
    previous_mean_divergence: float | None = None
    drift: bool = False
    judge_changed: bool = False


class EstimateRow(_Strict):
    """One figure of a run: the judges' raw value beside the judge-error-corrected one.

    ``status`` is ``corrected``, ``insufficient`` (too few labels) or ``undefined`` (e.g.
    Rogan-Gladen with TPR + TNR <= 1), with ``reason``.
    """

    name: str
    raw: float | None
    raw_ci95: tuple[float, float] | None
    corrected: float | None = None
    corrected_ci95: tuple[float, float] | None = None
    se: float | None = None
    method: str | None = None
    lam: float | None = None
    n_labelled: int = 0
    n_unlabelled: int = 0
    status: Literal["corrected", "insufficient", "undefined"] = "corrected"
    reason: str | None = None


class RunEstimate(_Strict):
    """A run's raw figures next to the corrected ones, and what the correction rests on.

    ``source`` ``labels``: the run's own lawyer labels (PPI++). ``transported``: a later run
    without labels, corrected with the error rates of a calibration of the same ensemble judge_id
    (``calibration_id``, made ``calibration_date``): it assumes those error rates carry over.
    """

    run_id: str
    source: Literal["labels", "transported"]
    judge_id: str | None
    calibration_id: str | None = None
    calibration_date: str | None = None
    sample_id: str | None = None
    stratified: bool = False
    n_labelled_items: int
    label: str
    pass_rate: EstimateRow
    rogan_gladen: EstimateRow | None = None
    rubrics: dict[str, EstimateRow] = Field(default_factory=dict)
    notes: list[str] = Field(default_factory=list)
