"""What a judge is: its configuration as an ensemble file (``[[judges]]``) or the command line gives it."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

__all__ = ["DebiasConfig", "DebiasMode", "JudgeConfig"]

DebiasMode = Literal["plain", "aware", "self", "aware+self", "swap"]  # swap: pairwise only


class DebiasConfig(BaseModel):
    """Bias mitigation inside the judge (see :mod:`legal_judge.judge.mitigation`)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    mode: DebiasMode = "plain"
    bias: str = Field(default="generic", description="a bias name, 'generic', or 'all'")
    criterion: str = "legal accuracy and completeness under the rubrics"


class JudgeConfig(BaseModel):
    """One judge as configured in an ensemble file (``[[judges]]``) or on the command line."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    spec: str
    name: str | None = None
    weight: float = Field(default=1.0, gt=0)
    family: str | None = None
    multilingual: bool = False
    temperature: float = 0.0
    max_tokens: int = Field(default=1500, gt=0)
    options: dict[str, Any] = Field(default_factory=dict)
    debias: DebiasConfig = Field(default_factory=DebiasConfig)
    alert_webhook: str | None = None

    @property
    def label(self) -> str:
        """The judge's display name (``name`` or the spec)."""
        return self.name or self.spec
