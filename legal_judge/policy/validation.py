"""``[validation]`` of the gate policy: when a changed judge is fit to replace the incumbent.

Kept beside :mod:`legal_judge.policy.core` (which holds it in :class:`~legal_judge.policy.Policy`) so the
policy module stays small; ``calibrate validate`` and ``calibrate align`` read it.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

__all__ = ["ValidationPolicy"]


class ValidationPolicy(BaseModel):
    """``[validation]``: margins and floors of ``calibrate validate`` (DESIGN: judge changes)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    agreement_margin: float = Field(default=0.05, gt=0, lt=1)
    mae_margin: float = Field(default=0.25, gt=0, le=5)
    alpha: float = Field(default=0.05, gt=0, lt=1)
    min_kappa: float = Field(default=0.4, ge=-1, le=1)
    min_labelled_items: int = Field(default=20, ge=2)
    require_of_record: bool = False
