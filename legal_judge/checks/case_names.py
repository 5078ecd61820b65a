"""The case name written right before a citation, read from the text as written.

"Brown v. Board of Education, 347 U.S. 483": the name is the run of words that ends with the
comma before the citation, with a "v." in it ("Smith v. Jones") or a one-party form ("Matter of
Jones", "In re Smith", "Ex parte Young"). It starts after the previous citation, a signal ("See",
"Compare"), a lower-case word that is not part of names ("held", "in"), a sentence end or an
opening bracket or quote. Anything else, and the answer is None: a name shown beside a citation
must be that citation's own, and an unsure name is not shown.

eyecite's names are not used as they come: it drops the lower-case words of a plaintiff
("District  Columbia v. Heller"), stops a defendant at its first lower-case word ("Austin" for
"University of Tex. at Austin"), keeps signals ("Compare Smith") and gives one sentence's name
to every citation in it.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache

__all__ = ["NameBefore", "name_before", "previous_end"]

_WINDOW = 240  # no case name runs longer; the scan never looks further back
_TOKEN = re.compile(r"\S+")
# What ends a name right before its citation: a comma ("Brown v. Board of Education, 347"), or
# a California-style year ("Cochran v. Schwan's Home Service, Inc. (2014) 228 Cal.App.4th").
_TAIL = re.compile(r"[*_]*\s*(?:,|\((?P<year>1[6-9]\d\d|20\d\d)\))\s*$")
_WORD = re.compile(r"[\w'’\-.&/]+")
_VERSUS = frozenset({"v.", "v", "vs.", "vs"})
# Lower-case words inside a party's name ("Board of Education", "United States ex rel. Smith").
_IN_NAME = frozenset({"of", "the", "for", "at", "de", "del", "la", "le", "du", "des", "van", "von",
                      "der", "den", "da", "di", "y", "e", "ex", "rel.", "&", "d/b/a", "et", "al."})
# Lower-case words a defendant may hold that, before a plaintiff, usually end the prose instead
# ("the Court in Smith v. Jones", "Title VII and Brown v. Board").
_IN_DEFENDANT = _IN_NAME | {"in", "on", "and", "to", "upon", "by", "a", "an"}
# Capitalised words that open a sentence or a citation clause, never a party's name.
_SIGNALS = frozenset({
    "see", "also", "compare", "cf.", "cf", "but", "accord", "contra", "e.g.", "under", "however",
    "thus", "and", "or", "as", "after", "following", "applying", "citing", "quoting", "like",
    "unlike", "although", "because", "since", "while", "when", "where", "here", "there", "then",
    "hence", "therefore", "moreover", "further", "furthermore", "similarly", "indeed", "notably",
    "finally", "accordingly", "nevertheless", "yet", "so", "nor", "if", "per", "again",
    "likewise", "instead", "rather", "still", "even", "only", "this", "that", "these", "those",
})
# Capitalised words of legal prose that "in" follows ("the Court in Smith v. Jones").
_PROSE_NOUNS = frozenset({"Court", "Courts", "Circuit", "Circuits", "Justice", "Judge", "Congress",
                          "Legislature", "Board", "Commission", "Division", "Panel", "Appeals",
                          "Majority", "Dissent", "Concurrence", "Opinion", "Act", "Amendment",
                          "Clause", "Constitution", "Title", "Section", "Rule", "Article"})
# Words that follow a comma inside a name ("Delta Airlines, Inc.", "Smith, Jr.").
_AFTER_COMMA = frozenset({"inc.", "inc", "co.", "co", "corp.", "ltd.", "ltd", "l.l.c.", "llc",
                          "l.p.", "lp", "llp", "l.l.p.", "p.c.", "p.a.", "n.a.", "s.a.", "a.g.",
                          "ag", "plc", "p.l.c.", "jr.", "sr.", "ii", "iii", "iv", "et", "fsb",
                          "f.s.b.", "pllc", "p.l.l.c.", "l.c.", "s.p.a.", "gmbh", "n.v.", "b.v.",
                          "incorporated", "limited", "chtd."})
_ONE_PARTY = (("in", "re"), ("in", "the", "matter", "of"), ("matter", "of"), ("ex", "parte"),
              ("estate", "of"), ("application", "of"), ("petition", "of"), ("appeal", "of"),
              ("marriage", "of"), ("guardianship", "of"), ("adoption", "of"), ("will", "of"),
              ("succession", "of"), ("in", "the", "interest", "of"), ("interest", "of"),
              ("welfare", "of"), ("custody", "of"), ("commitment", "of"), ("detention", "of"),
              ("conservatorship", "of"), ("complaint", "of"), ("claim", "of"))
_ONE_PARTY_WORDS = frozenset(w for p in _ONE_PARTY for w in p)
_OPENERS = "([“\"‘*_"
_NO_EMPHASIS = str.maketrans("", "", "*_")  # markdown emphasis: "*BDO Seidman v. Hirshberg*"
# Abbreviations of case names that reporters-db does not list.
_MORE_ABBREVIATIONS = frozenset({"Jr.", "Sr.", "Mt.", "Ed.", "Ct.", "Cir.", "App.", "Super.",
                                 "Sup.", "Ave.", "Rd.", "Ft.", "Pt.", "Ste.", "Op."})


@dataclass(frozen=True)
class NameBefore:
    """The name written before a citation, and a year written between them (California style)."""

    name: str | None
    year: int | None = None


@cache
def _abbreviations() -> frozenset[str]:
    """Bluebook case-name and state abbreviations ("Bd.", "Educ.", "Tex."), from reporters-db."""
    from reporters_db import CASE_NAME_ABBREVIATIONS, STATE_ABBREVIATIONS

    return frozenset(CASE_NAME_ABBREVIATIONS) | frozenset(STATE_ABBREVIATIONS) | (
        _MORE_ABBREVIATIONS)


def _abbreviation(word: str) -> bool:
    """"Bd.", "U.S.", "J.", "Prods." (a listed abbreviation made plural): not a sentence end."""
    core = word[:-1]
    if len(core) == 1 or "." in core:
        return True
    known = _abbreviations()
    return word in known or (core.endswith("s") and core[:-1] + "." in known)


def _party_word(word: str) -> bool:
    """A word that can be part of a party's name: capitalised or a number, not a sentence end."""
    if not _WORD.fullmatch(word) or not (word[0].isdigit() or any(c.isupper() for c in word)):
        return False
    return not word.endswith(".") or _abbreviation(word)


def _fits(words: list[str], i: int, allowed: frozenset[str]) -> bool:
    """Whether ``words[i]`` can be inside a name (a comma only before "Inc.", "Jr.", ...)."""
    word = words[i]
    if word.endswith(","):
        after = words[i + 1].lower() if i + 1 < len(words) else ""
        return after in _AFTER_COMMA and _party_word(word[:-1])
    return _party_word(word) or word in allowed


def _opened(word: str) -> str | None:
    """The word without an opening bracket, quote or emphasis mark it starts with, if any."""
    if len(word) > 1 and word[0] in _OPENERS:
        rest = word.lstrip(_OPENERS)
        return rest if rest and _party_word(rest) else None
    return None


def _plaintiff_start(words: list[str], end: int) -> int | None:
    """Index of the plaintiff's first word, scanning left from ``words[end - 1]``; None when
    it cannot be told where the plaintiff starts."""
    i = end - 1
    while i >= 0:
        word = words[i]
        if word.lower() == "re" and i > 0 and words[i - 1] in {"In", "IN"}:
            return i - 1  # "In re Inc. of Caritas Vill. v. Fuhrmeister"
        if word.lower().rstrip(",") in _SIGNALS or word in {"In", "IN"}:
            break
        if _opened(word):
            return i
        if not _fits(words, i, _IN_NAME):
            before = words[i - 1] if i > 0 else ""
            if (word in _IN_DEFENDANT and word != "and" and _party_word(before)
                    and before[0].isupper() and before.lower() not in _SIGNALS
                    and before not in _PROSE_NOUNS):
                # "Parents Involved in Community Schools v." or "Justice Kennedy in Smith v.":
                # the name may go on to the left; unsure, so no name.
                return None
            break
        i -= 1
    start = i + 1
    # A plaintiff starts with a capitalised word: never "of", "the", a number.
    while start < end and not (words[start][0].isupper() and _fits(words, start, frozenset())):
        start += 1
    return start if start < end else None


def _two_party(words: list[str]) -> int | None:
    """Start index of "Plaintiff v. Defendant" ending at the last word, or None."""
    for i in range(len(words) - 1, 0, -1):
        if words[i] in _VERSUS:
            if i == len(words) - 1 or not _fits(words, i + 1, frozenset()):
                return None
            return _plaintiff_start(words, i)
        if not _fits(words, i, _IN_DEFENDANT):
            return None
    return None


def _one_party(words: list[str]) -> int | None:
    """Start index of "Matter of Jones" / "In re Smith" ending at the last word, or None."""
    allowed = _IN_DEFENDANT | _ONE_PARTY_WORDS
    lo = len(words)
    for i in range(len(words) - 1, -1, -1):
        if _opened(words[i]):
            lo = i
            break
        if not _fits(words, i, allowed):
            break
        lo = i
    lowered = [w.lstrip(_OPENERS).lower() for w in words]
    for start in range(lo, len(words)):
        for prefix in _ONE_PARTY:
            n = len(prefix)
            if tuple(lowered[start : start + n]) == prefix and start + n < len(words):
                return start
    return None


def name_before(text: str, start: int, floor: int = 0) -> NameBefore:
    """The case name written right before the citation at ``text[start:]``.

    Args:
        text: whitespace-cleaned text.
        start: where the citation (its volume) begins.
        floor: where the previous citation ends; the name never reaches back past it.

    Returns:
        The name as written (emphasis marks dropped) or None when there is none or it is not
        clear, and a California-style year written between the name and the citation.
    """
    lo = max(floor, start - _WINDOW)
    region = text[lo:start]
    tail = _TAIL.search(region)
    if tail is None:
        return NameBefore(None)
    spans = [m.span() for m in _TOKEN.finditer(region, 0, tail.start())]
    words = [region[a:b].rstrip("*_") for a, b in spans]
    if not words or not words[-1]:
        return NameBefore(None)
    first = _two_party(words)
    if first is None:
        first = _one_party(words)
    if first is None:
        return NameBefore(None)
    name = region[spans[first][0] : spans[-1][1]].lstrip(_OPENERS).translate(_NO_EMPHASIS)
    return NameBefore(name, int(tail["year"]) if tail["year"] else None)


def previous_end(ends: Sequence[int], start: int) -> int:
    """Where the last citation before ``start`` ends (``ends`` sorted), or 0: the floor a name
    never reaches back past."""
    k = bisect.bisect_right(ends, start)
    return ends[k - 1] if k else 0
