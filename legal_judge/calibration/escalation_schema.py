"""The named results of the escalation: the decision stored per run, and the run's split figures."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from legal_judge.stats.selective import SequenceStep

__all__ = ["EscalationFigures", "EscalationReport", "EscalationStep"]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


#: One test of the fixed-sequence walk: the statistics' own record, stored as it is.
EscalationStep = SequenceStep


class EscalationReport(_Strict):
    """Which items of a run the judges decide and which go to a lawyer, with the guarantee.

    ``source`` is ``labels`` (the run's own lawyer labels) or ``transported`` (labels of another
    run of the same ensemble, ``label_run_id``). ``decided`` items have a confidence at or above
    ``threshold``; ``escalated`` items (below it, or inconclusive) still need a lawyer;
    ``reviewed`` items were below it but the lawyers had labelled them already. When nothing is
    guaranteed, ``threshold`` is None, nothing is decided and every item is escalated.
    """

    escalation_id: str
    run_id: str
    created_at: str
    target: float
    confidence: float
    rubric: str | None
    agreement_on: str
    source: Literal["labels", "transported"]
    label_run_id: str
    judge_id: str | None
    calibration_id: str | None = None
    sample_id: str | None
    sample_kind: str
    n_labelled: int
    n_items: int
    min_start: int
    guaranteed: bool
    threshold: float | None
    coverage: float
    observed_agreement: float | None
    agreement_ci95: tuple[float, float] | None
    agreement_lower: float | None
    best_achievable: float | None = None
    labels_needed: int | None = None
    more_labels: int | None = None
    decided: list[str] = Field(default_factory=list)
    escalated: list[str] = Field(default_factory=list)
    reviewed: list[str] = Field(default_factory=list)
    decided_pass_rate: float | None = None
    steps: list[EscalationStep] = Field(default_factory=list)
    sentence: str
    notes: list[str] = Field(default_factory=list)
    sheet: str | None = None
    annotation_queue: str | None = None


class EscalationFigures(_Strict):
    """A run's figures split by who decides: the judges (kept items) and the lawyers (escalated).

    ``combined_pass_rate`` joins the judges' decisions on the kept items and the lawyers' on the
    escalated ones; it is None while any escalated item awaits review (``pending`` > 0).
    """

    escalation_id: str
    guaranteed: bool
    target: float
    confidence: float
    n_items: int
    decided: int
    decided_pass_rate: float | None
    escalated: int
    reviewed: int
    pending: int
    lawyer_pass_rate: float | None
    combined_pass_rate: float | None
    label: str

    def facts(self) -> list[tuple[str, str]]:
        """The split figures as (name, value) facts: JUnit properties, the step summary, the
        HTML report (one wording everywhere)."""
        decided = ("n/a" if self.decided_pass_rate is None
                   else f"{self.decided_pass_rate:.1%} over {self.decided} items")
        combined = (f"{self.combined_pass_rate:.1%} (judges on {self.decided} kept items, "
                    f"lawyers on {self.escalated} escalated)" if self.combined_pass_rate
                    is not None else f"pending ({self.pending} escalated items await a lawyer)")
        return [("escalation", self.label),
                ("pass rate (judge-decided)", decided),
                ("pending lawyer review", f"{self.pending} of {self.escalated} escalated items"),
                ("combined pass rate", combined)]

