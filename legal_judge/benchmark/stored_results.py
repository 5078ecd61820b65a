"""A run's ensemble results as a mapping read from the store on access."""

from __future__ import annotations

from collections.abc import Iterator, Mapping

from legal_judge.models import EnsembleResult
from legal_judge.store import Store

__all__ = ["StoredResults"]


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
