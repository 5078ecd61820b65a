"""eyecite, faster and with identical output: the court lookup without its per-call regex pass
over 2,809 courts, and a tokenizer that runs each reporter regex only where its trigger string
occurs instead of across the whole text.

Both are tested against eyecite's own functions (tests/checks/test_eyecite_speed.py): same court
for every court string, same tokens on real opinions.
"""

from __future__ import annotations

import bisect
import re
from collections import defaultdict
from collections.abc import Generator
from dataclasses import dataclass
from functools import cache, lru_cache
from typing import Any

import regex
from eyecite.models import Token, TokenExtractor
from eyecite.tokenizers import AhocorasickTokenizer

__all__ = ["CachedRegexModule", "WindowedTokenizer", "fast_court_by_paren", "windowed_tokenizer"]

_NON_WORD = regex.compile(r"[^\w]")  # the module and pattern eyecite's helper uses
_WS_RUN = re.compile(r"\s+")  # the pattern eyecite's prefilter strips
_WS = re.compile(r"\s")


@cache
def _court_tables() -> tuple[dict[str, str], list[tuple[str, str]]]:
    from courts_db import courts

    squashed = [(_NON_WORD.sub("", c["citation_string"]).lower(), str(c["id"])) for c in courts]
    exact: dict[str, str] = {}
    for s, court_id in squashed:
        exact.setdefault(s, court_id)
    return exact, squashed


@lru_cache(maxsize=8192)
def fast_court_by_paren(paren_string: str) -> str | None:
    """eyecite's ``get_court_by_paren`` with the squashed court strings computed once.

    Same contract: the first court whose squashed citation string equals the squashed input,
    else the last one that starts with it (eyecite's prefix fallback), else None.
    """
    court_str = _NON_WORD.sub("", paren_string).lower()
    if not court_str:
        return None
    exact, squashed = _court_tables()
    if court_str in exact:
        return exact[court_str]
    found = None
    for s, court_id in squashed:
        if s.startswith(court_str):
            found = court_id
    return found


@dataclass
class WindowedTokenizer(AhocorasickTokenizer):
    """eyecite's Aho-Corasick tokenizer, scanning each extractor only near its triggers.

    Every match of a filtered extractor contains one of its trigger strings (that is what the
    Aho-Corasick prefilter relies on), and no citation token runs more than ``before``
    characters ahead of its trigger or ``after`` characters past it, so scanning the merged
    windows around the trigger positions finds exactly the matches a whole-text scan finds.
    On a long brief most of the ~400 selected extractors have one or two triggers, so this
    scans kilobytes instead of the whole text per extractor.
    """

    before: int = 200
    after: int = 400

    def _triggers(self, text: str) -> dict[int, list[list[int]]]:
        """Where each extractor's trigger strings end, as offsets in ``text``.

        The prefilter matches on whitespace-stripped text; a stripped offset k maps back to
        k plus the whitespace removed before it. Positions are kept per trigger string (one
        list shared by all the extractors of that string).
        """
        starts: list[int] = [0]  # stripped offset where each stretch of kept text begins
        removed: list[int] = [0]  # whitespace removed before that stretch
        for m in _WS_RUN.finditer(text):
            total = removed[-1] + m.end() - m.start()
            starts.append(m.end() - total)
            removed.append(total)
        stripped = _WS_RUN.sub("", text)
        by_string: dict[int, tuple[list[TokenExtractor], list[int]]] = {}
        for automaton, haystack in (
            (self.case_sensitive_filter, stripped),
            (self.case_insensitive_filter, stripped.lower()),
        ):
            for end, extractors in automaton.iter(haystack):
                entry = by_string.get(id(extractors))
                if entry is None:
                    entry = by_string[id(extractors)] = (extractors, [])
                entry[1].append(end + removed[bisect.bisect_right(starts, end) - 1])
        # Keyed by id(extractor): hashing an extractor formats its whole regex (candidates).
        where: dict[int, list[list[int]]] = defaultdict(list)
        for extractors, positions in by_string.values():
            for e in extractors:
                where[id(e)].append(positions)
        return where

    def candidates(self, text: str) -> list[TokenExtractor]:
        """eyecite's candidate extractors, with each matched trigger's list unioned once
        (eyecite unions it again for every occurrence of the trigger).

        Deduplicated by identity: ``TokenExtractor.__hash__`` is ``hash(repr(self))``, which
        formats the whole regex (a twentieth of a short answer's check). eyecite's extractors
        are all distinct (tests/checks/test_eyecite_speed.py), so this is eyecite's set.
        """
        stripped = _WS_RUN.sub("", text)
        lists: dict[int, list[TokenExtractor]] = {}
        for _, extractors in self.case_sensitive_filter.iter(stripped):
            lists[id(extractors)] = extractors
        for _, extractors in self.case_insensitive_filter.iter(stripped.lower()):
            lists[id(extractors)] = extractors
        unique = {id(e): e for e in self.unfiltered_extractors}
        for extractors in lists.values():
            for e in extractors:
                unique[id(e)] = e
        return list(unique.values())

    def get_extractors(self, text: str) -> set[TokenExtractor]:
        """eyecite's candidate extractors as eyecite returns them (a set)."""
        return set(self.candidates(text))

    def _windows(
        self, text: str, positions: list[int], spaces: list[int]
    ) -> list[tuple[int, int]]:
        merged: list[tuple[int, int]] = []
        for p in sorted(positions):
            start, end = max(0, p - self.before), min(len(text), p + self.after)
            # Widen to whitespace so a window edge never cuts a word or a number.
            i = bisect.bisect_right(spaces, start) - 1
            start = spaces[i] if i >= 0 else 0
            j = bisect.bisect_left(spaces, end)
            end = spaces[j] if j < len(spaces) else len(text)
            if merged and start <= merged[-1][1]:
                merged[-1] = (merged[-1][0], max(end, merged[-1][1]))
            else:
                merged.append((start, end))
        return merged

    def extract_tokens(self, text: str) -> Generator[Token, None, None]:
        """Yield every token eyecite's whole-text scan would yield, in the same order."""
        if len(text) < 8 * (self.before + self.after):  # a short answer: windows cannot pay
            for extractor in self.candidates(text):
                yield from (extractor.get_token(m) for m in extractor.get_matches(text))
            return
        where = self._triggers(text)
        spaces = [m.start() for m in _WS.finditer(text)]
        for extractor in self.candidates(text):
            groups = where.get(id(extractor))
            count = sum(len(g) for g in groups) if groups else 0
            # Windows pay off only when they cover a small part of the text.
            if not extractor.strings or not count or count * (self.before + self.after) > len(text):
                yield from (extractor.get_token(m) for m in extractor.get_matches(text))
                continue
            pattern = extractor.compiled_regex
            positions = [p for g in groups or () for p in g]
            for start, end in self._windows(text, positions, spaces):
                for m in pattern.finditer(text, start, end):
                    yield extractor.get_token(m)


class CachedRegexModule:
    """The ``regex`` module as eyecite's helpers call it (``re.search(pattern_string, ...)``),
    with each pattern string compiled once: ``regex``'s own cache lookup costs more than the
    match for the short patterns eyecite uses (about a tenth of a short answer's check)."""

    def __init__(self, module: Any) -> None:
        self._module = module
        self._compile = lru_cache(maxsize=4096)(module.compile)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._module, name)

    def _pattern(self, pattern: Any, flags: int) -> Any:
        return self._compile(pattern, flags) if isinstance(pattern, str) else pattern

    def match(self, pattern: Any, string: str, flags: int = 0, **kw: Any) -> Any:
        """``regex.match`` with the pattern compiled once."""
        return self._pattern(pattern, flags).match(string, **kw)

    def search(self, pattern: Any, string: str, flags: int = 0, **kw: Any) -> Any:
        """``regex.search`` with the pattern compiled once."""
        return self._pattern(pattern, flags).search(string, **kw)

    def fullmatch(self, pattern: Any, string: str, flags: int = 0, **kw: Any) -> Any:
        """``regex.fullmatch`` with the pattern compiled once."""
        return self._pattern(pattern, flags).fullmatch(string, **kw)

    def sub(self, pattern: Any, repl: Any, string: str, count: int = 0, flags: int = 0,
            **kw: Any) -> Any:
        """``regex.sub`` with the pattern compiled once."""
        return self._pattern(pattern, flags).sub(repl, string, count, **kw)

    def split(self, pattern: Any, string: str, maxsplit: int = 0, flags: int = 0,
              **kw: Any) -> Any:
        """``regex.split`` with the pattern compiled once."""
        return self._pattern(pattern, flags).split(string, maxsplit, **kw)

    def finditer(self, pattern: Any, string: str, flags: int = 0, **kw: Any) -> Any:
        """``regex.finditer`` with the pattern compiled once."""
        return self._pattern(pattern, flags).finditer(string, **kw)

    def findall(self, pattern: Any, string: str, flags: int = 0, **kw: Any) -> Any:
        """``regex.findall`` with the pattern compiled once."""
        return self._pattern(pattern, flags).findall(string, **kw)


@cache
def windowed_tokenizer() -> WindowedTokenizer:
    """One tokenizer per process (building the Aho-Corasick automata takes ~0.1 s)."""
    return WindowedTokenizer()
