"""What a run learns about one item before its judges score it: its language and its rule checks.

The rule-based checks (:mod:`legal_judge.checks`) may verify citations with CourtListener; their
answers are cached in the store (``lookup_cache``) and shared by every run.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime
from typing import Any

from legal_judge.models import BenchmarkItem
from legal_judge.store import Store

__all__ = ["StoreLookupCache", "citation_lookup_from_env", "detect_language", "run_item_checks"]

_ARABIC = re.compile(r"[\u0600-\u06FF]")
_FRENCH = re.compile(r"\b(?:le|la|les|des|du|est|une|dans|pour|qui|que|avec|selon|article)\b",
                     re.IGNORECASE)


def detect_language(item: BenchmarkItem) -> str:
    """``metadata.language`` when given, else a script/stopword heuristic (en, fr, ar)."""
    declared = item.metadata.get("language") if isinstance(item.metadata, dict) else None
    if isinstance(declared, str) and declared:
        return declared
    text = item.response
    if len(_ARABIC.findall(text)) > len(text) * 0.2:
        return "ar"
    words = max(1, len(text.split()))
    return "fr" if len(_FRENCH.findall(text)) / words > 0.12 else "en"


class StoreLookupCache:
    """CourtListener answers cached in the store (``lookup_cache``), shared by every run."""

    def __init__(self, store: Store) -> None:
        self.store = store

    def get(self, key: str) -> dict[str, Any] | None:
        """A cached answer, or None."""
        return self.store.lookup_get(key)

    def put(self, key: str, value: dict[str, Any]) -> None:
        """Remember an answer."""
        self.store.lookup_put(key, value)


def citation_lookup_from_env(store: Store) -> Any:
    """The CourtListener client (token from ``COURTLISTENER_TOKEN``) with the store as its cache."""
    from legal_judge.checks import CourtListenerLookup

    return CourtListenerLookup.from_env(cache=StoreLookupCache(store))


def run_item_checks(item: BenchmarkItem, lookup: Any = None) -> tuple[dict[str, Any], str | None]:
    """Rule-based checks for one item: the result dict kept with it and the evidence text for judges."""
    from legal_judge.checks import run_checks

    result = run_checks(item, today=datetime.now(UTC).date(), lookup=lookup)
    return ({"forces_citation_zero": result.forces_citation_zero, "reasons": result.reasons,
             "language": detect_language(item), "findings": result.model_dump(mode="json")},
            result.evidence_text() or None)
