"""Regex layer for US citations eyecite misses: unknown reporters (eyecite drops them
silently), U.S. Const. and public laws eyecite did not already parse (statutes and rules are in
``statute_regex.py``)."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from legal_judge.checks.citation_rules import RuleContext, current_congress
from legal_judge.checks.designators import range_hit, shape_hit, to_roman
from legal_judge.checks.report import CitationKind, RuleHit
from legal_judge.checks.rules_data import known_abbreviations, squash

__all__ = ["Finder", "RegexCite", "find_us_regex", "first_wins", "overlaps", "roman_to_int"]


@dataclass
class RegexCite:
    """One citation found by a regex, with spans in the cleaned text."""

    kind: CitationKind
    text: str
    span: tuple[int, int]
    normalized: str
    hits: list[RuleHit] = field(default_factory=list)
    year: int | None = None
    court: str | None = None
    case_name: str | None = None  # when the finder reads the name itself (English style)


def overlaps(span: tuple[int, int], taken: Iterable[tuple[int, int]]) -> bool:
    """True when ``span`` intersects any span in ``taken``."""
    return any(span[0] < end and start < span[1] for start, end in taken)


#: A finder over one text: called with the spans taken so far, it yields the citations it sees.
Finder = Callable[[list[tuple[int, int]]], Iterable[RegexCite]]


def first_wins(finders: Iterable[Finder], taken: Iterable[tuple[int, int]]) -> list[RegexCite]:
    """Run ``finders`` in order and keep each citation that overlaps no taken span and no citation
    kept before it (the earlier finder wins).

    Args:
        finders: the finders, each given the live list of taken spans (it grows as citations
            are kept, so a later finder can skip what an earlier one found).
        taken: spans already reported (by eyecite or an earlier layer).

    Returns:
        The kept citations, in the order found.
    """
    spans = list(taken)
    found: list[RegexCite] = []
    for finder in finders:
        for cite in finder(spans):
            if not overlaps(cite.span, spans):
                found.append(cite)
                spans.append(cite.span)
    return found


def roman_to_int(text: str) -> int | None:
    """Parse a Roman (XIV) or Arabic (14) numeral; None when it is neither."""
    if text.isdigit():
        return int(text)
    values = {"I": 1, "V": 5, "X": 10, "L": 50, "C": 100, "D": 500, "M": 1000}
    if not text or any(c not in values for c in text.upper()):
        return None
    total = 0
    digits = [values[c] for c in text.upper()]
    for i, v in enumerate(digits):
        total += -v if i + 1 < len(digits) and digits[i + 1] > v else v
    return total


def _err(rule: str, message: str) -> RuleHit:
    return RuleHit(rule=rule, severity="error", message=message)


# A reporter-shaped string: volume, an abbreviation whose first word ends in a period, page,
# then a parenthetical ending in a year. Only flagged after a case name ("X v. Y,", "In re").
_REPORTER_SHAPE = re.compile(
    r"(?P<vol>\b\d{1,4})\s+"
    r"(?P<abbr>[A-Z][A-Za-z'’]*\.(?:\s?(?:[A-Z][A-Za-z'’]*\.?|\d(?:d|nd|rd|th)\.?|&)){0,5})"
    r"\s+(?P<page>\d{1,5})\b(?:,\s*\d{1,5}(?:[-–]\d+)?)?\s*"
    r"\((?P<paren>[^()]{0,40}?)\b(?P<year>1[6-9]\d\d|20\d\d)\)"
)
_CASE_CONTEXT = re.compile(r"(?:\bv\.?\s|\bIn re\s|\bEx parte\s)[^;]{0,150}$")


def _unknown_reporters(
    text: str, taken: list[tuple[int, int]], ctx: RuleContext
) -> list[RegexCite]:
    found = []
    for m in _REPORTER_SHAPE.finditer(text):
        if overlaps(m.span(), taken) or not _CASE_CONTEXT.search(
            text[max(0, m.start() - 160) : m.start()]
        ):
            continue
        abbr = m["abbr"].strip()
        if squash(abbr) in known_abbreviations():
            continue
        found.append(
            RegexCite(
                kind="case",
                text=text[m.start() : m.end("page")],
                span=(m.start(), m.end("page")),
                normalized=f"{m['vol']} {abbr} {m['page']}",
                hits=[
                    RuleHit(
                        rule="unknown_reporter",
                        severity="warning",
                        message=f"'{abbr}' is in no reporter database (reporters-db)",
                    )
                ],
                year=int(m["year"]),
                court=m["paren"].strip() or None,
            )
        )
    return found


# "U.S. Const. amend. XIV", and as lawyers also write it: "US Const amend XIV", "U.S. Const.
# art. I, § 8, cl. 3", "U.S. Constitution, Article III". The number is taken whole ("2-A"): it is
# never cut down to a real amendment.
_CONST = re.compile(
    r"\b(?:U\.\s?S\.|US)\s?Const(?:\.|itution\b)?,?\s+(?P<part>art(?:icle)?|amend(?:ment)?)\b\.?\s+"
    r"(?P<num>[0-9A-Za-z]+(?:[-–.][0-9A-Za-z]+)*)(?![\w-])"
    r"(?P<rest>(?:\s*,\s*(?:§\s*\d+|(?:cl|Section|section|sec)\.?\s*\d+))*)",
    re.IGNORECASE,
)
_REST_PART = re.compile(r"(§|cl|Section|section|sec)\.?\s*(\d+)", re.IGNORECASE)


def _const_rest(rest: str) -> str:
    parts = [("§ " if w == "§" or w.lower().startswith("sec") else "cl. ") + n
             for w, n in _REST_PART.findall(rest)]
    return "".join(", " + p for p in parts)


def _us_const(text: str, taken: list[tuple[int, int]], ctx: RuleContext) -> list[RegexCite]:
    limits = ctx.rules.get("us_const")
    found = []
    for m in _CONST.finditer(text):
        if overlaps(m.span(), taken):
            continue
        part = "art" if m["part"].lower().startswith("art") else "amend"
        plural = "articles" if part == "art" else "amendments"
        num = roman_to_int(m["num"])
        shown = m["num"] if num is None else to_roman(num) if num < 400 else m["num"]
        normalized = f"U.S. Const. {part}. {shown}{_const_rest(m['rest'] or '')}"
        shape = shape_hit("const_part", m["num"], normalized, ctx.rules)
        hits = [shape] if shape else []
        if shape is None and num is not None:
            hit = range_hit("us_const", limits, num,
                            f"the Constitution has {limits[plural]} {plural}",
                            high=limits[plural])
            hits += [hit] if hit else []
        found.append(RegexCite("constitution", m.group(0), m.span(), normalized, hits))
    return found


_PUB_L = re.compile(r"\bPub\.\s?L\.\s?(?:No\.\s?)?(?P<congress>\d{1,3})[-–](?P<law>\d{1,4})\b")


def _public_laws(text: str, taken: list[tuple[int, int]], ctx: RuleContext) -> list[RegexCite]:
    found = []
    for m in _PUB_L.finditer(text):
        if overlaps(m.span(), taken):
            continue  # eyecite parsed it; the law rules already ran
        congress = int(m["congress"])
        hits = []
        if congress > current_congress(ctx.today):
            hits.append(
                _err(
                    "future_congress",
                    f"Congress {congress} has not sat (Congress {current_congress(ctx.today)} sits now)",
                )
            )
        found.append(
            RegexCite(
                "public_law", m.group(0), m.span(), f"Pub. L. No. {congress}-{m['law']}", hits
            )
        )
    return found


_FINDERS: list[Callable[[str, list[tuple[int, int]], RuleContext], list[RegexCite]]] = [
    _unknown_reporters,
    _us_const,
    _public_laws,
]


def find_us_regex(text: str, taken: list[tuple[int, int]], ctx: RuleContext) -> list[RegexCite]:
    """Run the US regex finders over cleaned text.

    Args:
        text: whitespace-cleaned text.
        taken: spans (in the cleaned text) eyecite already reported.
        ctx: rules and today's date.

    Returns:
        The citations found, each with the rules that fired on it.
    """
    found: list[RegexCite] = []
    for finder in _FINDERS:
        found.extend(finder(text, taken, ctx))
    return found
