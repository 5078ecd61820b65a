"""Court parentheticals: "(2d Dep't 2017)", "(Tex. App.—Houston [14th Dist.] 2003)", "(CA4 1957)".

Resolution order: the exact courts-db citation string or an alias; the same after removing a
department, district or division designator; the Bluebook shape of a state court (a state
abbreviation followed only by court words). Only a string that fits none of these is unknown.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache

from legal_judge.checks.rules_data import Rules, court_info, squash

__all__ = ["CourtRef", "court_display_name", "resolve_court", "resolve_court_ref"]

_WORD = re.compile(r"[A-Za-z][A-Za-z'’.]*")


@dataclass(frozen=True)
class CourtRef:
    """What a court parenthetical names."""

    text: str
    id: str | None  # the courts-db id, when one court matches
    state: str | None = None  # the state abbreviation of a state-court shape without an id

    @property
    def known(self) -> bool:
        """True when the string names a court (by id or by a well-formed state-court shape)."""
        return self.id is not None or self.state is not None


@cache
def _designator(rules: Rules) -> re.Pattern[str]:
    return re.compile(rules.get("court_designator_regex"))


@cache
def _ordinal(rules: Rules) -> re.Pattern[str]:
    return re.compile(rules.get("court_ordinal_regex"))


@cache
def _state_table(rules: Rules) -> tuple[tuple[str, ...], frozenset[str]]:
    states = tuple(sorted(rules.get("state_abbreviations"), key=len, reverse=True))
    return states, frozenset(rules.get("court_words"))


def _clean(court_text: str, rules: Rules) -> str:
    text = court_text
    for noise in rules.get("court_noise_words"):
        text = text.replace(noise, " ")
    return text


def _state_shape(text: str, rules: Rules) -> str | None:
    states, words = _state_table(rules)
    stripped = text.strip(" ,")
    for state in states:
        if stripped.startswith(state) and (
            len(stripped) == len(state) or not stripped[len(state)].isalpha()
        ):
            rest = [squash(w) for w in _WORD.findall(stripped[len(state) :])]
            if all(w in words for w in rest if w):
                return state
    return None


def resolve_court_ref(court_text: str, rules: Rules) -> CourtRef:
    """Resolve a court parenthetical to a courts-db id, or to a well-formed state court.

    Args:
        court_text: the court part of the parenthetical ("2d Dep't", "Fla. 4th DCA").
        rules: the loaded citation rules (aliases, designators, state abbreviations).

    Returns:
        The reference; ``known`` is False only for a string that names no court.
    """
    return _resolve(court_text, rules)


@cache
def _resolve(court_text: str, rules: Rules) -> CourtRef:
    text = _clean(court_text, rules)
    court_id = rules.court_index.get(squash(text))
    if court_id:
        return CourtRef(court_text, court_id)
    # A federal circuit ("2d Cir.") resolved above; what is left is a state court's designator.
    bare = _designator(rules).sub(" ", _ordinal(rules).sub("", text))
    court_id = rules.court_index.get(squash(bare))
    if court_id:
        return CourtRef(court_text, court_id)
    state = _state_shape(bare, rules) or _state_shape(text, rules)
    if state:
        return CourtRef(court_text, None, state)
    return CourtRef(court_text, None)


def resolve_court(court_text: str, rules: Rules) -> str | None:
    """Map a court parenthetical ("3d Cir.", "CA4", "2d Dep't") to a courts-db id, or None."""
    return _resolve(court_text, rules).id


def court_display_name(ref: CourtRef | None, rules: Rules | None = None) -> str | None:
    """The court's name for a reader: an override, the courts-db name, else the cited string."""
    if ref is None:
        return None
    if rules is not None and ref.id in rules.get("court_display_names"):
        return str(rules.get("court_display_names")[ref.id])
    info = court_info().get(ref.id or "")
    return info.name if info else ref.text
