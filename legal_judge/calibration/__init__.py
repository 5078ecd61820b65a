"""Quarterly human calibration: sample for lawyers, import their scores, compare, correct, track.

The flow: :func:`draw_sample` + :func:`write_template` -> lawyers score -> :func:`import_labels`
-> :func:`compare` (from :func:`from_store` or :func:`from_files`) + :func:`save_calibration` ->
:func:`fit_correction` -> :func:`correct_result` in later runs -> :func:`calibration_history`.
Statistics come from :mod:`legal_judge.stats`; conventions in DESIGN.md.
"""

from legal_judge.calibration.compare import compare, current_quarter, save_calibration
from legal_judge.calibration.correction import (
    apply_correction,
    correct_result,
    correct_verdict,
    fit_correction,
    load_calibration,
    load_correction,
    run_correction,
    uncalibrated_scores,
)
from legal_judge.calibration.data import (
    ENSEMBLE,
    ComparisonData,
    ensemble_judge_id,
    from_files,
    from_store,
)
from legal_judge.calibration.estimates import estimate_run
from legal_judge.calibration.history import calibration_history
from legal_judge.calibration.labels import Label, import_labels, load_labels
from legal_judge.calibration.of_record import validation_requirement
from legal_judge.calibration.pinned import (
    choose_estimate,
    corrected_means,
    described,
    means_note,
    shown_estimate,
)
from legal_judge.calibration.rubrics import RubricSpec, rubric_specs
from legal_judge.calibration.sample import AnnotationQueueSink, draw_sample, write_template
from legal_judge.calibration.schema import (
    CalibrationReport,
    Correction,
    EstimateRow,
    HistoryRow,
    ImportSummary,
    Reason,
    RunEstimate,
    SampleReport,
)

__all__ = [
    "AnnotationQueueSink",
    "CalibrationReport",
    "ComparisonData",
    "Correction",
    "ENSEMBLE",
    "EstimateRow",
    "HistoryRow",
    "ImportSummary",
    "Label",
    "Reason",
    "RubricSpec",
    "RunEstimate",
    "SampleReport",
    "apply_correction",
    "calibration_history",
    "choose_estimate",
    "compare",
    "correct_result",
    "correct_verdict",
    "corrected_means",
    "current_quarter",
    "described",
    "draw_sample",
    "ensemble_judge_id",
    "estimate_run",
    "fit_correction",
    "from_files",
    "from_store",
    "import_labels",
    "load_calibration",
    "load_correction",
    "load_labels",
    "means_note",
    "rubric_specs",
    "run_correction",
    "save_calibration",
    "shown_estimate",
    "uncalibrated_scores",
    "validation_requirement",
    "write_template",
]
