"""Offline knowledge of known fabrications: case citations a public court order identified as
fabricated (``known_fabrications.v1.yaml``), each checked against the order's text.

Offline rules cannot tell a well-formed fake from a real case (brief §2.3); a fake that a court
has already exposed can be recognised: such a citation is `invalid`, with the order named.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from legal_judge.assets.catalogue import parse_yaml
from legal_judge.checks.report import CitationFinding, RuleHit

__all__ = ["FABRICATIONS_FILE", "Fabrication", "known_fabrications", "mark_known_fabrications"]

FABRICATIONS_FILE = Path(__file__).with_name("known_fabrications.v1.yaml")


@dataclass(frozen=True)
class Fabrication:
    """One citation a court order identified as fabricated."""

    citation: str
    parties: tuple[str, ...]
    cited_as: str
    order: str


@cache
def _load(path: Path = FABRICATIONS_FILE) -> dict[str, Any]:
    return dict(parse_yaml(path.read_text(encoding="utf-8")))


@cache
def known_fabrications() -> dict[str, Fabrication]:
    """Every known fabrication, keyed by its normalised citation."""
    data = _load()
    orders = data["orders"]
    return {
        e["citation"]: Fabrication(
            citation=e["citation"],
            parties=tuple(e["parties"]),
            cited_as=e["cited_as"],
            order=orders[e["order"]]["order"],
        )
        for e in data["entries"]
    }


def fabrications_about() -> tuple[str, str, int]:
    """(as_of, source, number of entries) of the list, for ``check --about``."""
    data = _load()
    return str(data["as_of"]), str(data["source"]), len(data["entries"])


def _names(case_name: str, parties: tuple[str, ...]) -> bool:
    words = set(re.findall(r"[a-z]+", case_name.lower()))
    return any(p.lower() in words for p in parties)


def mark_known_fabrications(findings: list[CitationFinding]) -> None:
    """Mark each case citation a court order identified as fabricated (in place).

    Args:
        findings: the offline findings of one text.
    """
    table = known_fabrications()
    for f in findings:
        fake = table.get(f.normalized) if f.kind == "case" else None
        if fake is None:
            continue
        if f.case_name and _names(f.case_name, fake.parties):
            f.reasons.append(RuleHit(
                rule="known_fabrication", severity="error",
                message=f"identified as fabricated in {fake.order} (cited there as "
                        f"{fake.cited_as})"))
            f.status = "invalid"
        elif not f.case_name:
            f.reasons.append(RuleHit(
                rule="known_fabrication", severity="warning",
                message=f"{fake.cited_as} at this citation was identified as fabricated in "
                        f"{fake.order}: check which case this is"))
            if f.status == "unverifiable":
                f.status = "suspicious"
