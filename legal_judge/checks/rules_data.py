"""Load the versioned citation rules file and the reporters-db / courts-db lookups, once."""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date
from functools import cache
from pathlib import Path
from typing import Any

from legal_judge.assets.catalogue import parse_yaml

__all__ = [
    "RULES_FILE",
    "CourtInfo",
    "Rules",
    "court_info",
    "known_abbreviations",
    "load_rules",
    "state_abbreviation_pattern",
]

RULES_FILE = Path(__file__).with_name("citation_rules.v3.yaml")


_NON_WORD = re.compile(r"[^\w]")


def squash(text: str) -> str:
    """Lower-case a name and drop every non-word character ("3d Cir." -> "3dcir")."""
    return _NON_WORD.sub("", text).lower()


@dataclass(frozen=True)
class CourtInfo:
    """The parts of a courts-db record the rules need."""

    id: str
    name: str
    system: str
    start: date | None
    location: str


@dataclass(frozen=True, eq=False)  # hashed by identity: loaded once, used as a cache key
class Rules:
    """The parsed rules file plus derived lookup tables."""

    version: int
    data: dict[str, Any]
    court_index: dict[str, str]
    district_re: re.Pattern[str]

    def get(self, key: str) -> Any:
        """Return one top-level section of the rules file."""
        return self.data[key]


def _parse_start(dates: list[dict[str, Any]]) -> date | None:
    starts = [d.get("start") for d in dates if d.get("start")]
    if not starts:
        return None
    return min(date.fromisoformat(str(s)[:10]) for s in starts)


@cache
def court_info() -> dict[str, CourtInfo]:
    """Map every courts-db id to its name, system, first sitting date and location."""
    from courts_db import courts

    return {
        c["id"]: CourtInfo(
            id=c["id"],
            name=c.get("name") or c["id"],
            system=c.get("system") or "",
            start=_parse_start(c.get("dates") or []),
            location=c.get("location") or "",
        )
        for c in courts
    }


def _court_index(aliases: dict[str, str]) -> dict[str, str]:
    """Squashed court string -> courts-db id: exact citation_string matches plus aliases."""
    from courts_db import courts

    index: dict[str, str] = {}
    for court in courts:
        cite = court.get("citation_string")
        if cite:
            index.setdefault(squash(cite), court["id"])
    for alias, court_id in aliases.items():
        index[squash(alias)] = court_id
    return index


@cache
def load_rules(path: Path = RULES_FILE) -> Rules:
    """Read the rules file once per process.

    Args:
        path: the YAML file; the default is the packaged ``citation_rules.v3.yaml``.

    Returns:
        The parsed rules with the court index built.
    """
    data = parse_yaml(path.read_text(encoding="utf-8"))
    return Rules(
        version=int(data["version"]),
        data=data,
        court_index=_court_index(data["court_aliases"]),
        district_re=re.compile(data["district_court_id_regex"]),
    )


@cache
def known_abbreviations() -> frozenset[str]:
    """Every reporter, law and journal abbreviation reporters-db knows, squashed."""
    from reporters_db import EDITIONS, JOURNALS, LAWS, REPORTERS, VARIATIONS_ONLY

    names: set[str] = set(EDITIONS) | set(VARIATIONS_ONLY) | set(REPORTERS)
    for table in (LAWS, JOURNALS):
        for key, entries in table.items():
            names.add(key)
            for entry in entries:
                names.update(entry.get("variations") or [])
    return frozenset(squash(n) for n in names)


@cache
def state_abbreviation_pattern(rules: Rules) -> str:
    """A regex alternation of every state abbreviation, periods optional ("Ill.", "Ill", "W. Va.",
    "NY"), so a finder starts at the state and not at a word before it ("See Ill. Const.")."""
    alts = []
    for abbr in sorted(rules.get("state_abbreviations"), key=len, reverse=True):
        parts = [re.escape(p.rstrip(".")) for p in re.findall(r"[A-Za-z]+\.?", abbr)]
        alts.append(r"\.?\s?".join(parts) + r"\.?")
    return "(?:" + "|".join(alts) + ")"
