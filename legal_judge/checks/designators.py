"""Whole designators and dated ranges: one place that decides what a section, rule, article or
amendment number can be.

Two questions, both answered from ``citation_rules.v3.yaml``:

- shape: can the code's numbering produce this designator at all ("1397.99n–1" is no U.S. Code
  section, "2-A" no amendment)? A designator of an impossible shape is `suspicious`, shown whole;
  a designator is never cut down to a real one.
- range: is the number inside the dated range the table holds? Beyond it, `invalid` when the
  range only grows by an event the table would record (a constitutional amendment), and
  `suspicious` when it grows by routine rulemaking or the citation is dated after the table.
"""

from __future__ import annotations

import re
from datetime import date
from functools import cache
from typing import Any

from legal_judge.checks.report import RuleHit, Severity
from legal_judge.checks.rules_data import Rules

__all__ = [
    "SECTION_PATTERN",
    "TRAILING_SUBDIVISIONS",
    "beyond_range",
    "canonical_shape_hit",
    "code_section_hit",
    "designator_tail",
    "range_hit",
    "range_tables",
    "shape_hit",
    "spaced_subdivisions",
    "title_hit",
    "to_roman",
    "undated_ranges",
]

# What continues a designator past where a parser stopped: letters, digits, and a dot, dash,
# en dash, colon or slash followed by more of them, and parenthesised subdivisions.
_TAIL = re.compile(
    r"(?:[0-9A-Za-z]|[.\-–:/](?=[0-9A-Za-z])|\([0-9A-Za-z]{1,6}(?:[-.][0-9A-Za-z]{1,4})?\))+"
)
# A whole section designator, subdivisions included: "2000e-2(a)(1)", "1.1031(a)-1",
# "5/2-619", "1397.99n–1" (a shape check decides later whether the code can have it).
SECTION_PATTERN = (
    r"\d(?:[0-9A-Za-z]|[.\-–:/](?=[0-9A-Za-z])|\([0-9A-Za-z]{1,6}(?:[-.][0-9A-Za-z]{1,4})?\))*"
)
TRAILING_SUBDIVISIONS = re.compile(r"(?:\([0-9A-Za-z]{1,6}(?:[-.][0-9A-Za-z]{1,4})?\))+$")


def designator_tail(text: str, end: int) -> int:
    """Where the designator that a parser ended at ``end`` really ends (``end`` if it did).

    Args:
        text: the cleaned text.
        end: the offset a parser (eyecite, a regex) ended the designator at.

    Returns:
        The offset after the whole designator, subdivisions included.
    """
    m = _TAIL.match(text, end)
    return m.end() if m else end


@cache
def _shape(rules: Rules, key: str) -> tuple[re.Pattern[str], str]:
    spec = rules.get("designator_shapes")[key]
    return re.compile(spec["regex"]), str(spec["says"])


def shape_hit(key: str, designator: str, shown: str, rules: Rules) -> RuleHit | None:
    """`suspicious` when ``designator`` has a shape the code's numbering cannot produce.

    Args:
        key: the shape in ``designator_shapes`` (usc_section, cfr_section, federal_rule,
            const_part, ilcs, eu_article).
        designator: the designator as written (subdivisions at its end are ignored).
        shown: the whole citation, shown in the reason.
        rules: the rules data.

    Returns:
        The finding, or None when the shape is possible.
    """
    pattern, says = _shape(rules, key)
    bare = TRAILING_SUBDIVISIONS.sub("", designator.strip())
    if pattern.match(bare):
        return None
    return RuleHit(
        rule="designator_shape",
        severity="warning",
        message=f"'{designator}' in {shown} cannot be one: {says}",
    )


def _as_of(spec: dict[str, Any]) -> date:
    return date.fromisoformat(str(spec["as_of"]))


def beyond_range(spec: dict[str, Any], cited_year: int | None) -> Severity:
    """How sure a number beyond a dated range is wrong: ``error`` or ``warning``.

    A range that grows by routine rulemaking has grown before (the 2023 emergency rules), so a
    higher number may be newer than the table; so may any number cited for a year after the
    table's ``as_of``.
    """
    if spec.get("grows") == "rulemaking":
        return "warning"
    if cited_year is not None and cited_year > _as_of(spec).year:
        return "warning"
    return "error"


def range_hit(
    rule: str,
    spec: dict[str, Any],
    number: int,
    what: str,
    *,
    low: int = 1,
    high: int,
    cited_year: int | None = None,
) -> RuleHit | None:
    """The finding for ``number`` outside ``low``-``high`` of a dated range, or None.

    Args:
        rule: the rule name to report.
        spec: the range's table entry (``as_of``, ``source``, optionally ``grows``).
        number: the cited number.
        what: the range in words ("Fed. R. Civ. P. has rules 1-87").
        low: the first number of the range.
        high: the last number of the range.
        cited_year: the citation's year, when it gives one.

    Returns:
        An ``invalid``-making error or a ``suspicious``-making warning naming the table's date.
    """
    if low <= number <= high:
        return None
    severity = beyond_range(spec, cited_year)
    message = f"{what}, not {number} (table as of {spec['as_of']}: {spec['source']})"
    if severity == "warning":
        message += "; the range has grown before, so a newer rule is possible: confirm it"
    return RuleHit(rule=rule, severity=severity, message=message)


_ROMAN = [(100, "C"), (90, "XC"), (50, "L"), (40, "XL"), (10, "X"), (9, "IX"), (5, "V"),
          (4, "IV"), (1, "I")]


def to_roman(number: int) -> str:
    """Write ``number`` (1-399) in Roman numerals, as the Bluebook cites articles and amendments."""
    out = []
    for value, letters in _ROMAN:
        while number >= value:
            out.append(letters)
            number -= value
    return "".join(out)


_CODE_SHAPES = {"U.S.C.": "usc_section", "U.S.C.A.": "usc_section", "U.S.C.S.": "usc_section",
                "C.F.R.": "cfr_section"}


def code_section_hit(code: str, section: str | None, shown: str, rules: Rules) -> RuleHit | None:
    """The shape finding for a U.S. Code or C.F.R. section (None for any other code).

    Args:
        code: the code's abbreviation as a parser gives it ("U.S.C.", "C.F.R.").
        section: the whole section designator.
        shown: the whole citation, for the reason.
        rules: the rules data.
    """
    key = _CODE_SHAPES.get(code)
    if key is None or not section:
        return None
    hit = shape_hit(key, section, shown, rules)
    if hit and "§§" in shown:  # "§§ 1981-1988": a range of two sections, each of a possible shape
        ends = re.split(r"\s*[-–]\s*(?=\d{3})", section, maxsplit=1)
        if len(ends) == 2 and not any(shape_hit(key, e, shown, rules) for e in ends):
            return None
    return hit


def title_hit(rule: str, spec: dict[str, Any], title: int, code: str) -> RuleHit | None:
    """`invalid` for a U.S. Code or C.F.R. title outside its dated range or reserved.

    Args:
        rule: the rule name (usc_title, cfr_title).
        spec: the ``usc_titles`` or ``cfr_titles`` table.
        title: the cited title.
        code: the code in words ("the U.S. Code").
    """
    reserved = spec.get("reserved") or []
    if title in reserved:
        return RuleHit(rule=rule, severity="error",
                       message=f"title {title} of {code} is reserved (table as of "
                               f"{spec['as_of']}: {spec['source']})")
    what = f"there is no title {title} of {code} (titles {spec['min']}-{spec['max']})"
    hit = range_hit(rule, spec, title, what, low=spec["min"], high=spec["max"])
    if hit:
        hit.message = hit.message.replace(f", not {title} (", " (")
    return hit


_RANGE_KEYS = frozenset({"min", "max", "articles", "amendments", "start", "end", "count"})


def _has_range(node: Any) -> bool:
    if isinstance(node, dict):
        return bool(_RANGE_KEYS & set(node)) or any(_has_range(v) for v in node.values())
    return False


def _dated(node: Any) -> bool:
    return isinstance(node, dict) and bool(node.get("as_of")) and bool(node.get("source"))


def undated_ranges(data: dict[str, Any]) -> list[str]:
    """The tables of a rules file that hold a closed range without ``as_of`` and ``source``
    (on the table, or on each of its entries that holds a range).

    Args:
        data: the parsed rules file.

    Returns:
        The undated tables' names ("federal_rules.Civ. P." for an entry), empty when all are dated.
    """
    missing = []
    for name, table in data.items():
        if not _has_range(table) or _dated(table):
            continue
        entries = {k: v for k, v in table.items() if _has_range(v)}
        if not entries or _RANGE_KEYS & set(table):
            missing.append(name)
            continue
        missing += [f"{name}.{k}" for k, v in entries.items() if not _dated(v)]
    return missing


def range_tables(data: dict[str, Any]) -> list[tuple[str, str, str]]:
    """Every dated range table as (name, as_of, source), for ``legal-judge check --about``."""
    rows = []
    for name, table in data.items():
        if _dated(table):
            rows.append((name, str(table["as_of"]), str(table["source"])))
            continue
        if not _has_range(table):
            continue
        rows += [(f"{name}: {k}", str(v["as_of"]), str(v["source"]))
                 for k, v in table.items() if _dated(v)]
    return rows


# Subdivisions written with spaces, as New York and North Carolina print them: "§ 27-a (3) (a)
# (1)", "G.S. 163-226 (b)". Never a year: a number of four digits is no subdivision.
_SPACED = re.compile(r"(?:\s?\((?:\d{1,3}|[a-zA-Z]{1,4})\))+")


def spaced_subdivisions(text: str, end: int) -> tuple[int, str]:
    """(new end, compact subdivisions) for subdivisions written with spaces after ``end``.

    Args:
        text: the cleaned text.
        end: where a citation's designator ends.

    Returns:
        ``(end, "")`` when none follow; else the end after them and "(3)(a)(1)".
    """
    m = _SPACED.match(text, end)
    if not m or not text.startswith(" ", end):
        return end, ""
    return m.end(), m.group(0).replace(" ", "")


_CANONICAL_CODE = re.compile(r"^\d{1,3} (?P<code>U\.S\.C\.|C\.F\.R\.) §§? (?P<section>\S+)$")


def canonical_shape_hit(normalized: str, rules: Rules) -> RuleHit | None:
    """The shape finding for a citation already in canonical form ("42 U.S.C. § 1983.5")."""
    m = _CANONICAL_CODE.match(normalized)
    if m is None:
        return None
    return code_section_hit(m["code"], m["section"], normalized, rules)
