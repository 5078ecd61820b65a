"""The sections of the gate policy file: each setting, its default, its range and which way is
stricter (:data:`DIRECTION`). :mod:`legal_judge.policy.core` reads a file into them and applies
flags and overrides; the bundled file (``legal_judge/data/policy.default.toml``) gives each
default its reason.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field

__all__ = ["CORRECTIONS", "DIRECTION", "SEVERITIES", "CalibrationPolicy", "CertificationPolicy",
           "Policy", "ReleasePolicy", "RunPolicy", "ValidationPolicy"]

#: Audit severities, least first (``max_severity``: a lower one is stricter).
SEVERITIES = ("none", "low", "medium", "high", "critical")
#: Multiplicity corrections across an audit's dimensions and probes, strictest first: Holm holds
#: the family-wise error, Benjamini-Hochberg the false discovery rate, none neither.
CORRECTIONS = ("holm", "bh", "none")


@dataclass(frozen=True)
class Stricter:
    """Which way a setting is stricter, declared on the setting itself (field metadata), so a
    new setting cannot be added without it: ``lower`` (a smaller value), ``higher`` (a larger
    one; True for a requirement), ``false`` (False), ``superset`` (a list that covers more; "all"
    covers everything), ``severity`` (a lower severity), ``correction`` (one earlier in
    :data:`CORRECTIONS`), ``fail-first`` ("fail" before "pass"), ``choice`` (a mode, not a
    threshold: printed, never refused)."""

    way: str


LOWER, HIGHER, FALSE, SUPERSET = (Stricter("lower"), Stricter("higher"), Stricter("false"),
                                  Stricter("superset"))
SEVERITY, CORRECTION, FAIL_FIRST, CHOICE = (Stricter("severity"), Stricter("correction"),
                                            Stricter("fail-first"), Stricter("choice"))


class _Section(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class ReleasePolicy(_Section):
    """``[release]``: the non-inferiority gate of ``compare``."""

    pass_rate_margin: Annotated[float, LOWER] = Field(default=0.05, gt=0, lt=1)
    rubric_margin: Annotated[float, LOWER] = Field(default=0.25, gt=0, le=5)
    confidence: Annotated[float, HIGHER] = Field(default=0.95, gt=0.5, lt=1)
    min_items: Annotated[int, HIGHER] = Field(default=20, ge=2)
    max_flips: Annotated[int, LOWER] = Field(default=0, ge=0)
    critical_ids: Annotated[tuple[str, ...], SUPERSET] = ()
    on_cannot_tell: Annotated[Literal["fail", "pass"], FAIL_FIRST] = "fail"
    use_corrected: Annotated[bool, CHOICE] = False
    require_escalations_reviewed: Annotated[bool, HIGHER] = False


class CertificationPolicy(_Section):
    """``[certification]``: the settings an audit report must have been made under."""

    significance: Annotated[float, LOWER] = Field(default=0.05, gt=0, lt=1)
    min_sensitivity: Annotated[float, HIGHER] = Field(default=0.7, ge=0, le=1)
    probes: Annotated[Literal["all"] | tuple[str, ...], SUPERSET] = "all"
    dimensions: Annotated[tuple[str, ...], SUPERSET] = ("position", "verbosity", "authority", "formatting")
    pairs: Annotated[int, HIGHER] = Field(default=30, ge=1)
    equivalence_margin: Annotated[float, LOWER] = Field(default=0.5, gt=0)
    min_complete_pairs: Annotated[int, HIGHER] = Field(default=10, ge=2)
    correction: Annotated[Literal["holm", "bh", "none"], CORRECTION] = "holm"
    max_severity: Annotated[Literal["none", "low", "medium", "high", "critical"], SEVERITY] = "low"
    allow_inconclusive: Annotated[bool, FALSE] = False
    allow_simulated: Annotated[bool, FALSE] = False
    allow_unlogged: Annotated[bool, FALSE] = False


class RunPolicy(_Section):
    """``[run]``: when a run may be green."""

    max_inconclusive_share: Annotated[float, LOWER] = Field(default=0.10, ge=0, le=1)
    min_judge_coverage: Annotated[float, HIGHER] = Field(default=0.90, ge=0, le=1)


class CalibrationPolicy(_Section):
    """``[calibration]``: when ``calibrate compare`` says ``recalibrate``, ``ok`` or
    ``insufficient``, and what a gate may rely on when it uses a calibration.

    The burden of proof is asymmetric: a reason to recalibrate counts from
    ``min_labels_recalibrate`` labelled items, an ``ok`` needs ``min_labels`` (as does a gate
    relying on the calibration); with fewer, the verdict is ``insufficient``.
    """

    max_age_days: Annotated[int, LOWER] = Field(default=120, ge=1)
    min_labels: Annotated[int, HIGHER] = Field(default=50, ge=1)
    min_labels_recalibrate: Annotated[int, LOWER] = Field(default=20, ge=1)
    divergence: Annotated[float, LOWER] = Field(default=0.5, ge=0, allow_inf_nan=False)
    min_kappa: Annotated[float, HIGHER] = Field(default=0.6, ge=-1, le=1)
    max_loa: Annotated[float, LOWER] = Field(default=1.5, ge=0, allow_inf_nan=False)
    max_false_pass: Annotated[float, LOWER] = Field(default=0.10, ge=0, le=1)

    @property
    def recalibrate_floor(self) -> int:
        """The fewest labelled items a ``recalibrate`` needs: never more than an ``ok`` needs
        (an override lowering ``min_labels`` alone must not let an ``ok`` through unchecked)."""
        return min(self.min_labels_recalibrate, self.min_labels)


class ValidationPolicy(_Section):
    """``[validation]``: margins and floors of ``calibrate validate`` (DESIGN: judge changes)."""

    agreement_margin: Annotated[float, LOWER] = Field(default=0.05, gt=0, lt=1)
    mae_margin: Annotated[float, LOWER] = Field(default=0.25, gt=0, le=5)
    alpha: Annotated[float, LOWER] = Field(default=0.05, gt=0, lt=1)
    min_kappa: Annotated[float, HIGHER] = Field(default=0.4, ge=-1, le=1)
    min_labelled_items: Annotated[int, HIGHER] = Field(default=20, ge=2)
    require_of_record: Annotated[bool, HIGHER] = False


class Policy(_Section):
    """The whole policy: one section per gate."""

    release: ReleasePolicy = ReleasePolicy()
    certification: CertificationPolicy = CertificationPolicy()
    run: RunPolicy = RunPolicy()
    calibration: CalibrationPolicy = CalibrationPolicy()
    validation: ValidationPolicy = ValidationPolicy()


def _directions() -> dict[str, str]:
    """``{"section.key": way}`` from each setting's :class:`Stricter` (a setting without one is
    refused here, at import: every setting must say which way is stricter)."""
    out = {}
    for section, info in Policy.model_fields.items():
        model = info.annotation
        assert isinstance(model, type) and issubclass(model, _Section), section
        for name, field in model.model_fields.items():
            ways = [m.way for m in field.metadata if isinstance(m, Stricter)]
            if len(ways) != 1:
                raise TypeError(f"policy setting {section}.{name} must declare one Stricter")
            out[f"{section}.{name}"] = ways[0]
    return out


#: Which way each setting (``"section.key"``) is stricter: what a flag may do without an override.
DIRECTION: dict[str, str] = _directions()
