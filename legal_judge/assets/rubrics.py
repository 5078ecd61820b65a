"""The rubric files' schema: a rubric (numeric 0-5 or categorical) and a rubric set (the active
rubrics plus the pass/fail rule and the overrides that combine them, as data).

The files live in ``rubrics/<name>.v<N>.yaml``; :mod:`legal_judge.assets.catalogue` finds, hashes and
loads them into these models. The models are frozen and refuse unknown fields, so a typo in a rubric
file is an error that names the field, never a silently ignored key.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

__all__ = [
    "DEFAULT_RUBRIC_SET",
    "FailCondition",
    "OptionalRubric",
    "Override",
    "OverrideSet",
    "PassFail",
    "Rubric",
    "RubricSet",
    "Scale",
]


#: The rubric set used wherever none is named (``rubrics/legal_judge_set.v<N>.yaml``, bundled).
DEFAULT_RUBRIC_SET = "legal_judge_set"


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Scale(_Strict):
    """Numeric scale bounds (inclusive)."""

    min: int
    max: int


class Rubric(_Strict):
    """One rubric: numeric (0-5) or categorical (hallucination)."""

    name: str
    version: int
    title: str
    kind: Literal["numeric", "categorical"]
    description: str
    bias_guard: str
    guide: dict[str, str]
    scale: Scale | None = None
    values: list[str] | None = None
    severity: list[str] | None = None
    applies_to_languages: list[str] | None = None
    sha256: str = ""

    @model_validator(mode="before")
    @classmethod
    def _guide_keys_as_text(cls, data: Any) -> Any:
        # YAML reads "5:" as an int key; the guide is text keyed by level either way.
        if isinstance(data, dict) and isinstance(data.get("guide"), dict):
            data = {**data, "guide": {str(k): v for k, v in data["guide"].items()}}
        return data

    @model_validator(mode="after")
    def _check_kind(self) -> Rubric:
        if self.kind == "numeric":
            if self.scale is None:
                raise ValueError("a numeric rubric needs 'scale: {min, max}'")
            levels = {str(v) for v in range(self.scale.min, self.scale.max + 1)}
            if set(self.guide) != levels:
                raise ValueError(f"guide must describe every level {sorted(levels)}")
        else:
            if not self.values:
                raise ValueError("a categorical rubric needs 'values'")
            if set(self.guide) != set(self.values):
                raise ValueError("guide must describe every value")
            if self.severity is not None and sorted(self.severity) != sorted(self.values):
                raise ValueError("severity must order exactly the values")
        return self

    @property
    def id(self) -> str:
        """``name@version``."""
        return f"{self.name}@{self.version}"

    def valid_score(self, value: float) -> bool:
        """True when a numeric score lies on this rubric's scale."""
        return self.scale is not None and self.scale.min <= value <= self.scale.max


class FailCondition(_Strict):
    """One condition of the pass/fail rule."""

    rubric: str
    equals: str | float | None = None
    at_most: float | None = None
    reason: str


class PassFail(_Strict):
    """Fail if any condition holds."""

    fail_if: list[FailCondition]


class OptionalRubric(_Strict):
    """A rubric applied only to answers in some languages."""

    rubric: str
    when_language_in: list[str]


class OverrideSet(_Strict):
    """What an override sets."""

    rubric: str
    score: float


class Override(_Strict):
    """A documented rule-based override applied after the judges answered."""

    name: str
    when_check: Literal["citations_force_zero"]
    set: OverrideSet
    reason: str


class RubricSet(_Strict):
    """The active rubrics plus the rules that combine them, as data."""

    name: str
    version: int
    title: str
    rubrics: list[str]
    optional_rubrics: list[OptionalRubric] = Field(default_factory=list)
    pass_fail: PassFail
    overrides: list[Override] = Field(default_factory=list)
    sha256: str = ""

    @property
    def id(self) -> str:
        """``name@version``."""
        return f"{self.name}@{self.version}"

    def fail_reasons(self, scores: dict[str, float], categorical: dict[str, str]) -> list[str]:
        """Reasons the pass/fail rule fails these scores (empty list = pass)."""
        reasons = []
        for cond in self.pass_fail.fail_if:
            value: float | str | None = scores.get(cond.rubric, categorical.get(cond.rubric))
            if value is None:
                continue
            if cond.equals is not None and value == cond.equals or cond.at_most is not None and isinstance(value, int | float) and value <= cond.at_most:
                reasons.append(cond.reason)
        return reasons

    def describe_rule(self) -> str:
        """The pass/fail rule in words, for prompts and reports."""
        return "fail if " + ", OR if ".join(c.reason for c in self.pass_fail.fail_if)
