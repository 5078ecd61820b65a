"""What a run returns (its results read from the store on access), and how a new run is named
(shared by online and batch runs)."""

from __future__ import annotations

import uuid
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TYPE_CHECKING

from legal_judge.benchmark.pipeline import RunProgress
from legal_judge.models import EnsembleResult
from legal_judge.store import Store

if TYPE_CHECKING:
    from legal_judge.benchmark.run_gate import NoJudgment

__all__ = ["RunOutcome", "StoredResults", "new_run_id"]


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


class StoredResults(Mapping[str, EnsembleResult]):
    """A run's ensemble results, read from the store on access.

    A 10,000-item run keeps none of them in memory; ``outcome.results[item_id]`` still works.
    """

    def __init__(self, store: Store, run_id: str) -> None:
        self.store = store
        self.run_id = run_id

    def __getitem__(self, item_id: str) -> EnsembleResult:
        text = self.store.result_text(self.run_id, item_id)
        if text is None:
            raise KeyError(item_id)
        return EnsembleResult.model_validate_json(text)

    def __iter__(self) -> Iterator[str]:
        return iter(self.store.result_item_ids(self.run_id))

    def __len__(self) -> int:
        return self.store.result_count(self.run_id)
