"""One item of a run while it is judged: its cached verdicts (one read for all its judges), the
verdicts that wait to be committed with its result, its language against the judges'."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from legal_judge.benchmark.item_checks import detect_language
from legal_judge.judge.judge import Judge, verdict_key_item_part
from legal_judge.models import BenchmarkItem
from legal_judge.store import Store

__all__ = ["PendingVerdicts", "cached_verdicts", "cached_verdicts_of", "note_language"]


@dataclass
class PendingVerdicts:
    """An item's verdicts from the cache, ``(judge, verdict)``, waiting to be committed with its
    result; once ``closed``, a verdict is committed on its own as it comes."""

    rows: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    closed: bool = False


def cached_verdicts(store: Store, judges: Sequence[Judge], item: BenchmarkItem,
                    evidence: str | None) -> list[str | None]:
    """Per judge (in order), its cached verdict on ``item`` (JSON text), or None: one store read.

    A judge that does not read the cache (``use_cache`` off) gets None, as its own lookup would.
    """
    return cached_verdicts_of(store, judges, [(item, evidence)])[0]


def cached_verdicts_of(store: Store, judges: Sequence[Judge],
                       items: Sequence[tuple[BenchmarkItem, str | None]],
                       ) -> list[list[str | None]]:
    """:func:`cached_verdicts` of many ``(item, evidence)`` at once, in one store read."""
    keys = []
    for item, evidence in items:
        part = verdict_key_item_part(item, evidence)  # the same for every judge
        keys.append([j.verdict_key(item, evidence, item_part=part) if j.use_cache else None
                     for j in judges])
    found = store.cached_verdicts([k for row in keys for k in row if k is not None])
    return [[None if k is None else found.get(k) for k in row] for row in keys]


def note_language(item: BenchmarkItem, judges: Sequence[Judge], named: dict[str, list[str]],
                  counts: dict[str, int]) -> None:
    """Count a non-English answer against each judge not marked multilingual (``counts``), and
    name it in ``named`` among the judge's first six (the warning's examples)."""
    language = detect_language(item)
    if language == "en":
        return
    for j in judges:
        if not j.config.multilingual:
            examples = named.setdefault(j.label, [])
            if len(examples) < 6:
                examples.append(f"{item.id} ({language})")
            counts[j.label] = counts.get(j.label, 0) + 1
