"""What a run returns, and how a new run is named (shared by online and batch runs)."""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TYPE_CHECKING

from legal_judge.benchmark.progress import RunProgress
from legal_judge.models import EnsembleResult

if TYPE_CHECKING:
    from legal_judge.benchmark.run_gate import NoJudgment

__all__ = ["RunOutcome", "new_run_id"]


def new_run_id() -> str:
    """A sortable, unique run id."""
    return datetime.now(UTC).strftime("run-%Y%m%d-%H%M%S-") + uuid.uuid4().hex[:6]


@dataclass
class RunOutcome:
    """What ``run_benchmark`` returns."""

    run_id: str
    status: str
    results: Mapping[str, EnsembleResult]
    progress: RunProgress
    warnings: list[str] = field(default_factory=list)
    #: Why a ``failed`` run scored no item.
    failure: NoJudgment | None = None
