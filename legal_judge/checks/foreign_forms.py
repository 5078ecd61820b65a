"""English law reports ("Donoghue v Stevenson [1932] AC 562", "[1990] 1 WLR 123") and articles of
the EU instruments whose articles are counted ("Article 183(2) of Regulation (EU) 2016/679",
"Art. 83(5) GDPR", "Article 47 of the Charter").

An article beyond the instrument's count is `invalid` (the table is dated and names its source);
a law report dated before its series began is `suspicious`.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from functools import cache

from legal_judge.checks.citation_regex import RegexCite
from legal_judge.checks.citation_rules import RuleContext
from legal_judge.checks.designators import range_hit, shape_hit
from legal_judge.checks.report import RuleHit
from legal_judge.checks.rules_data import Rules, squash

__all__ = ["FINDERS"]

# Series as written (with or without periods) -> canonical series.
_SERIES = {
    "ac": "AC", "qb": "QB", "kb": "KB", "ch": "Ch", "p": "P", "fam": "Fam", "wlr": "WLR",
    "aller": "All ER", "lloydsrep": "Lloyd's Rep", "icr": "ICR", "irlr": "IRLR", "bclc": "BCLC",
}
_UK_REPORT = re.compile(
    r"\[(?P<year>1[6-9]\d\d|20\d\d)\]\s+(?:(?P<vol>\d{1,2})\s+)?"
    r"(?P<series>A\.?\s?C\.?|Q\.?\s?B\.?|K\.?\s?B\.?|Ch\.?|P\.|Fam\.?|W\.?\s?L\.?\s?R\.?|"
    r"All\s+E\.?\s?R\.?|Lloyd'?s\s+Rep\.?|I\.?C\.?R\.?|I\.?R\.?L\.?R\.?|B\.?C\.?L\.?C\.?)"
    r"\s+(?P<page>\d{1,5})\b"
)


def _uk_hits(year: int, series: str, ctx: RuleContext) -> list[RuleHit]:
    spec = ctx.rules.get("uk_reports")
    window = spec["series"].get(series, {})
    hits = []
    if year > ctx.today.year:
        hits.append(RuleHit(rule="future_year", severity="error",
                            message=f"year {year} is after {ctx.today.year}"))
    start, end = window.get("start"), window.get("end")
    if (start and year < start) or (end and year > end):
        span = f"{start or ''}-{end or 'now'}"
        hits.append(RuleHit(
            rule="uk_report_year", severity="warning",
            message=f"[{year}] {series} is outside the series' years {span} (table as of "
                    f"{spec['as_of']}: {spec['source']})"))
    return hits


# English style names a case without a comma before the report: "Donoghue v Stevenson [1932]".
_PARTY = r"(?:[A-Z][\w'’&.-]*|of|the|and|for|plc|&)"
_UK_NAME = re.compile(rf"(?P<name>{_PARTY}(?:\s+{_PARTY}){{0,7}}\s+v\.?\s+{_PARTY}"
                      rf"(?:\s+{_PARTY}){{0,7}})\s*,?\s*$")
_NOT_A_PARTY = {"and", "of", "the", "for", "see", "also", "in", "cf", "cf.", "compare", "under"}


def _uk_name(text: str, start: int) -> str | None:
    m = _UK_NAME.search(text, max(0, start - 160), start)
    if not m:
        return None
    words = m["name"].split()
    while words and (words[0].lower() in _NOT_A_PARTY or words[0][0].islower()):
        words = words[1:]
    name = " ".join(words)
    return name if re.search(r"\sv\.?\s", name) else None


def _uk_reports(text: str, ctx: RuleContext) -> Iterable[RegexCite]:
    for m in _UK_REPORT.finditer(text):
        series = _SERIES[squash(m["series"])]
        vol = f"{m['vol']} " if m["vol"] else ""
        norm = f"[{m['year']}] {vol}{series} {m['page']}"
        year = int(m["year"])
        cite = RegexCite("uk_report", m.group(0), m.span(), norm, _uk_hits(year, series, ctx), year)
        cite.case_name = _uk_name(text, m.start())
        yield cite


_ARTICLE = r"(?P<word>Articles?|Arts?\.)\s*(?P<num>\d[0-9A-Za-z]*(?:[-–.][0-9A-Za-z]+)*)" \
           r"(?P<sub>(?:\(\d{1,3}[a-z]?\))*(?:\([a-z]{1,4}\))*)(?![\w-])"


@cache
def _instruments(rules: Rules) -> tuple[re.Pattern[str], dict[str, str]]:
    """The article pattern for every known instrument, and each written name -> its key."""
    table = rules.get("eu_instruments")
    names: dict[str, str] = {}
    for key, spec in table.items():
        for alias in [*spec["aliases"], spec["act"]]:
            names[squash(alias)] = key
    written = sorted({a for spec in table.values() for a in [*spec["aliases"], spec["act"]]},
                     key=len, reverse=True)
    alt = "|".join(re.escape(w).replace(r"\ ", r"\s+") for w in written)
    pattern = re.compile(
        rf"\b{_ARTICLE}\s*(?:,\s*)?(?:of\s+(?:the\s+)?)?(?P<inst>{alt})(?![\w/])"
    )
    return pattern, names


def _eu_articles(text: str, ctx: RuleContext) -> Iterable[RegexCite]:
    pattern, names = _instruments(ctx.rules)
    table = ctx.rules.get("eu_instruments")
    for m in pattern.finditer(text):
        key = names[squash(m["inst"])]
        spec = table[key]
        norm = f"Article {m['num']}{m['sub']} {key}"
        hits = []
        shape = shape_hit("eu_article", m["num"], norm, ctx.rules)
        if shape:
            hits.append(shape)
        else:
            number = int(re.match(r"\d+", m["num"]).group(0))  # type: ignore[union-attr]
            hit = range_hit("eu_article", spec, number,
                            f"the {key} ({spec['act']}) has articles 1-{spec['articles']}",
                            high=int(spec["articles"]))
            hits += [hit] if hit else []
        yield RegexCite("eu_article", m.group(0), m.span(), norm, hits)


#: English law reports and articles of the counted EU instruments, run by
#: :func:`legal_judge.checks.foreign_regex.find_foreign_regex` before its own finders.
FINDERS: list[Callable[[str, RuleContext], Iterable[RegexCite]]] = [_uk_reports, _eu_articles]
