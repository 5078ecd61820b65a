"""Pydantic types of judge-change validation (``calibrate validate``, ``calibrate align``).

What is stored with a candidate's judge id, dumped to ``--json`` and rendered by the reports.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

__all__ = [
    "FITNESS",
    "AllowedUses",
    "CalibrationRef",
    "CrossFit",
    "Difference",
    "DifferingItem",
    "Fitness",
    "JudgeFigures",
    "JudgeRef",
    "Rate",
    "RubricValidation",
    "ValidationReport",
]

Fitness = Literal["better", "not worse", "worse", "cannot tell"]
#: The verdicts in the order a reader weighs them.
FITNESS: tuple[Fitness, ...] = ("better", "not worse", "worse", "cannot tell")


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Rate(_Strict):
    """``k`` of ``n`` with its exact (Clopper-Pearson) 95% CI; None when ``n`` is 0."""

    k: int
    n: int
    value: float | None
    ci95: tuple[float, float] | None


class JudgeFigures(_Strict):
    """One judge against the lawyers' consensus on one rubric (or pass/fail)."""

    judge: str
    judge_id: str | None
    n: int
    agreement: Rate
    kappa: float | None
    mae: float | None = None
    false_pass: Rate | None = None
    false_fail: Rate | None = None
    confusion: dict[str, int] | None = None


class Difference(_Strict):
    """Candidate minus incumbent on the same items, with its 95% CI and paired test."""

    what: str
    estimate: float | None
    ci95: tuple[float, float] | None
    test: str
    p_value: float
    p_adjusted: float | None = None
    n: int
    discordant: tuple[int, int] | None = None


class RubricValidation(_Strict):
    """The fitness of the candidate on one rubric (``pass_fail``: the overall decision)."""

    rubric: str
    kind: Literal["pass_fail", "numeric", "categorical"]
    n: int
    candidate: JudgeFigures
    incumbent: JudgeFigures
    agreement_difference: Difference
    mae_difference: Difference | None = None
    false_pass_difference: Difference | None = None
    false_fail_difference: Difference | None = None
    verdict: Fitness
    reason: str
    items_needed: int | None = None
    may_gate: bool = False
    gate_reason: str = ""


class JudgeRef(_Strict):
    """A judge (or ensemble) as the validation names it."""

    name: str
    spec: str
    judge_id: str | None
    source: str


class CalibrationRef(_Strict):
    """A calibration whose labelled items the validation used."""

    calibration_id: str
    run_id: str
    quarter: str
    created_at: str
    n_items: int


class AllowedUses(_Strict):
    """What the candidate may gate on, what it may not (and why), and when to revalidate."""

    may_gate: list[str]
    may_not_gate: dict[str, str]
    validated_on: list[CalibrationRef]
    revalidate_when: list[str]
    expires_at: str | None = None


class DifferingItem(_Strict):
    """An item the two judges decided differently (pass/fail)."""

    item_id: str
    run_id: str
    answer: str
    candidate_pass: bool | None
    incumbent_pass: bool | None
    lawyers_pass: bool | None
    lawyers_scores: dict[str, float | str]
    comment: str | None = None


class CrossFit(_Strict):
    """``calibrate align``: in-sample beside cross-fitted agreement of the built candidate."""

    method: str
    folds: int
    seed: int
    k: int
    in_sample_agreement: float | None
    cross_fitted_agreement: float | None
    incumbent_agreement: float | None
    in_sample_false_pass: float | None = None
    cross_fitted_false_pass: float | None = None
    prompt_dir: str | None = None
    notes_file: str | None = None
    fold_items: list[list[str]] = Field(default_factory=list)
    # The lawyers' notes draft, cross-validated as drafted (None: no note to test).
    notes_count: int = 0
    notes_cross_fitted_agreement: float | None = None
    notes_cross_fitted_false_pass: float | None = None
    incumbent_false_pass: float | None = None


class ValidationReport(_Strict):
    """A judge change validated against the lawyers on the same labelled items."""

    validation_id: str
    created_at: str
    candidate: JudgeRef
    incumbent: JudgeRef
    calibrations: list[CalibrationRef]
    n_items: int
    rubrics: list[RubricValidation]
    verdict: Fitness
    headline: str
    reasons: list[str] = Field(default_factory=list)
    allowed: AllowedUses
    differing: list[DifferingItem] = Field(default_factory=list)
    policy: dict[str, Any] = Field(default_factory=dict)
    policy_line: str = ""
    override_lines: list[str] = Field(default_factory=list)
    cross_fit: CrossFit | None = None
    simulated: bool = False
    notes: list[str] = Field(default_factory=list)

    def rubric(self, name: str) -> RubricValidation | None:
        """The rubric's (or ``pass_fail``'s) validation, or None."""
        return next((r for r in self.rubrics if r.rubric == name), None)
