"""Regex layer for non-US citations: UK neutral citations, ECLI, CELEX, EU act numbers,
"Law No. N of YYYY" (English and Arabic; UAE, Lebanon), French code articles and Cour de
cassation pourvoi numbers. Syntax and dates only: existence needs the online registries."""

from __future__ import annotations

import re
from collections.abc import Callable

from legal_judge.checks.citation_regex import RegexCite, overlaps
from legal_judge.checks.citation_rules import RuleContext
from legal_judge.checks.report import RuleHit

__all__ = ["find_foreign_regex"]

_ARABIC_DIGITS = str.maketrans("٠١٢٣٤٥٦٧٨٩۰۱۲۳۴۵۶۷۸۹", "01234567890123456789")


def _err(rule: str, message: str) -> RuleHit:
    return RuleHit(rule=rule, severity="error", message=message)


def _warn(rule: str, message: str) -> RuleHit:
    return RuleHit(rule=rule, severity="warning", message=message)


def _future(year: int, ctx: RuleContext) -> list[RuleHit]:
    if year > ctx.today.year:
        return [_err("future_year", f"year {year} is after {ctx.today.year}")]
    return []


def _in_window(year: int, window: dict[str, int]) -> bool:
    return window.get("start", 0) <= year <= window.get("end", 9999)


# ---------------------------------------------------------------- UK neutral citations

_UK = re.compile(
    r"\[(?P<year>\d{4})\]\s+(?P<court>UKSC|UKPC|UKHL|UKUT|UKFTT|EAT|EWCA|EWHC|EWFC|EWCOP|EWCC|"
    r"EWCR|CSIH|CSOH|NICA|NIQB)\s+(?:(?P<div1>Civ|Crim|Admin|Ch|QB|KB|Fam|Pat|Comm)\s+)?"
    r"(?P<num>\d{1,5})(?:\s*\((?P<div2>[A-Za-z]+)\))?"
)


def _uk_hits(m: re.Match[str], ctx: RuleContext) -> list[RuleHit]:
    spec = ctx.rules.get("uk_neutral")
    court, year = m["court"], int(m["year"])
    division = m["div1"] or m["div2"]
    window = spec["courts"].get(court, {})
    hits = _future(year, ctx)
    if not _in_window(year, window):
        hits.append(
            _err(
                "uk_court_year",
                f"{court} citations exist {window.get('start', '')}-{window.get('end', 'now')}, not {year}",
            )
        )
    divisions = window.get("divisions")
    if divisions and not division:
        hits.append(
            _err("uk_division", f"{court} citations need a division ({', '.join(divisions)})")
        )
    elif divisions and division not in divisions:
        hits.append(_warn("uk_division", f"'{division}' is not a known {court} division"))
    div_window = spec["division_windows"].get(division or "", {})
    if div_window and not _in_window(year, div_window):
        hits.append(_err("uk_division_year", f"({division}) not used in {year}"))
    return hits


def _uk(text: str, ctx: RuleContext) -> list[RegexCite]:
    found = []
    for m in _UK.finditer(text):
        norm = " ".join(p for p in (f"[{m['year']}]", m["court"], m["div1"], m["num"]) if p)
        norm += f" ({m['div2']})" if m["div2"] else ""
        found.append(
            RegexCite(
                "uk_neutral",
                m.group(0),
                m.span(),
                norm,
                _uk_hits(m, ctx),
                int(m["year"]),
                m["court"],
            )
        )
    return found


# ---------------------------------------------------------------- ECLI and CELEX

_ECLI_ANY = re.compile(r"\bECLI:[^\s,;()]*", re.IGNORECASE)
_ECLI = re.compile(
    r"^ECLI:(?P<cc>[A-Z]{2}):(?P<court>[A-Z0-9]{1,7}):(?P<year>\d{4}):(?P<ord>[A-Z0-9.]{1,25})$"
)


def _ecli_hits(m: re.Match[str], ctx: RuleContext) -> list[RuleHit]:
    hits = _future(int(m["year"]), ctx)
    if m["cc"] not in ctx.rules.get("ecli_countries"):
        hits.append(_warn("ecli_country", f"'{m['cc']}' is not a country that issues ECLIs"))
    if m["cc"] != "EU":
        return hits
    years = ctx.rules.get("eu_court_years")["courts"]
    if m["court"] not in years:
        return [*hits, _err("ecli_eu_court", "EU court code must be C, T or F")]
    window = years[m["court"]]
    start, end = (window, 9999) if isinstance(window, int) else window
    if not start <= int(m["year"]) <= end:
        hits.append(_err("ecli_eu_year", f"court {m['court']} did not sit in {m['year']}"))
    if not m["ord"].isdigit():
        hits.append(_err("ecli_syntax", "an EU ECLI ordinal is a number"))
    return hits


def _ecli(text: str, ctx: RuleContext) -> list[RegexCite]:
    found = []
    for m in _ECLI_ANY.finditer(text):
        raw = m.group(0).rstrip(".:")
        span = (m.start(), m.start() + len(raw))
        strict = _ECLI.match(raw)
        if strict is None:
            hits = [
                _err("ecli_syntax", "not ECLI:<country>:<court>:<YYYY>:<ordinal> in upper case")
            ]
            found.append(RegexCite("ecli", raw, span, raw, hits))
            continue
        found.append(
            RegexCite(
                "ecli",
                raw,
                span,
                raw,
                _ecli_hits(strict, ctx),
                int(strict["year"]),
                strict["court"],
            )
        )
    return found


_CELEX = re.compile(
    r"\b(?P<sector>[0-9CE])(?P<year>\d{4})(?P<type>[A-Z]{1,2})(?P<num>\d{4})(?:\(\d{2}\))?\b"
)
_CELEX_CONTEXT = re.compile(r"CELEX|EUR-Lex|eur-lex", re.IGNORECASE)


def _celex(text: str, ctx: RuleContext) -> list[RegexCite]:
    found = []
    first = int(ctx.rules.get("celex_first_year"))
    for m in _CELEX.finditer(text):
        # Only in sectors 3 (legislation) and 6 (case law), or next to the word CELEX.
        near = _CELEX_CONTEXT.search(text[max(0, m.start() - 40) : m.start()])
        if m["sector"] not in {"3", "6"} and not near:
            continue
        year = int(m["year"])
        hits = _future(year, ctx)
        if year < first:
            hits.append(_err("celex_year", f"CELEX year {year} is before {first}"))
        found.append(RegexCite("celex", m.group(0), m.span(), m.group(0), hits, year))
    return found


# ---------------------------------------------------------------- EU act numbers

_EU_ACT = re.compile(
    r"\b(?P<act>Regulation|Directive|Decision)\s+\((?P<label>EU|EC|EEC|EU,\s?Euratom|EC,\s?Euratom|Euratom)\)\s+"
    r"(?P<no>No\.?\s+)?(?P<a>\d{1,4})/(?P<b>\d{1,4})\b"
)
_OLD_DIRECTIVE = re.compile(r"\bDirective\s+(?P<a>\d{2,4})/(?P<b>\d{1,4})/(?P<label>EU|EC|EEC)\b")


def _full_year(text: str) -> int:
    year = int(text)
    if len(text) == 2:
        return 1900 + year if year >= 50 else 2000 + year
    return year


def _eu_act_hits(label: str, year: int, numbered_first: bool, ctx: RuleContext) -> list[RuleHit]:
    hits = _future(year, ctx)
    key = label.split(",")[0]
    window = ctx.rules.get("eu_label_windows").get(key)
    if window and not _in_window(year, window):
        hits.append(_err("eu_act_label", f"'({label})' was not used for acts of {year}"))
    if key == "EU" and year >= 2015 and numbered_first:
        hits.append(_warn("eu_act_number", "since 2015 EU acts are numbered (EU) YYYY/N"))
    return hits


def _eu_acts(text: str, ctx: RuleContext) -> list[RegexCite]:
    found = []
    for m in _EU_ACT.finditer(text):
        a, b = m["a"], m["b"]
        numbered_first = bool(m["no"]) or (len(b) == 4 and len(a) != 4)
        year = _full_year(b if numbered_first else a)
        hits = _eu_act_hits(m["label"], year, numbered_first, ctx)
        found.append(RegexCite("eu_act", m.group(0), m.span(), m.group(0), hits, year))
    for m in _OLD_DIRECTIVE.finditer(text):
        year = _full_year(m["a"])
        hits = _eu_act_hits(m["label"], year, False, ctx)
        found.append(RegexCite("eu_act", m.group(0), m.span(), m.group(0), hits, year))
    return found


# ---------------------------------------------------------------- Law No. N of YYYY

_LAW_EN = re.compile(
    r"\b(?P<name>(?:Federal\s+)?(?:Decree[- ]Law|Law|Legislative\s+Decree))\s+No\.?\s*\(?(?P<num>\d{1,4})\)?"
    r"\s*(?:of|for|dated)\s+(?:the\s+year\s+)?(?:\d{1,2}[/.-]\d{1,2}[/.-])?(?P<year>\d{4})\b"
)
_LAW_AR = re.compile(
    r"(?P<name>مرسوم بقانون اتحادي|قانون اتحادي|القانون|قانون|مرسوم اشتراعي)\s+رقم\s*\(?(?P<num>\d+)\)?\s*"
    r"(?:لسنة|لعام|تاريخ)\s*(?:\d{1,2}/\d{1,2}/)?(?P<year>\d{4})"
)
_AE_WORDS = re.compile(r"UAE|U\.A\.E\.|United Arab Emirates|Emirat|Dubai|Abu Dhabi|الإمارات|اتحادي")
_LB_WORDS = re.compile(r"Leban|Beirut|لبنان|اللبناني|اشتراعي")


def _distance(pattern: re.Pattern[str], text: str, m: re.Match[str]) -> int | None:
    """Characters between the law citation and the nearest jurisdiction word (80 at most)."""
    best = None
    for w in pattern.finditer(text, max(0, m.start() - 80), min(len(text), m.end() + 80)):
        d = m.start() - w.end() if w.end() <= m.start() else max(0, w.start() - m.end())
        best = d if best is None else min(best, d)
    return best


def _law_jurisdiction(text: str, m: re.Match[str]) -> str | None:
    if m["name"].startswith("Federal") or "اتحادي" in m["name"]:
        return "AE"  # "Federal (Decree-)Law No. N of YYYY" is the UAE's form
    if "اشتراعي" in m["name"]:
        return "LB"
    ae, lb = _distance(_AE_WORDS, text, m), _distance(_LB_WORDS, text, m)
    if ae is None and lb is None:
        return None
    if lb is None or (ae is not None and ae < lb):
        return "AE"
    return "LB"


def _laws(text: str, ctx: RuleContext) -> list[RegexCite]:
    found = []
    digits = text.translate(_ARABIC_DIGITS)  # same length, so spans stay valid
    firsts = ctx.rules.get("law_no_first_year")
    for pattern in (_LAW_EN, _LAW_AR):
        for m in pattern.finditer(digits):
            year = int(m["year"])
            where = _law_jurisdiction(digits, m)
            hits = _future(year, ctx)
            if where in firsts and year < firsts[where]:
                hits.append(_err("law_no_year", f"{where} law of {year} predates {firsts[where]}"))
            norm = f"{where or '??'} Law No. {m['num']} of {year}"
            found.append(
                RegexCite("law_no", text[m.start() : m.end()], m.span(), norm, hits, year, where)
            )
    return found


_FINDERS: list[Callable[[str, RuleContext], list[RegexCite]]] = [
    _uk,
    _ecli,
    _celex,
    _eu_acts,
    _laws,
]


def find_foreign_regex(text: str, ctx: RuleContext) -> list[RegexCite]:
    """Run the non-US regex finders (English law reports, EU articles, plus French ones) over
    cleaned text.

    Args:
        text: whitespace-cleaned text.
        ctx: rules and today's date.

    Returns:
        The citations found, each with the rules that fired on it.
    """
    from legal_judge.checks.foreign_forms import FINDERS as FORM_FINDERS
    from legal_judge.checks.french_regex import find_french

    forms = [cite for finder in FORM_FINDERS for cite in finder(text, ctx)]
    articles = [c for c in forms if c.kind == "eu_article"]
    found: list[RegexCite] = []
    for finder in _FINDERS:
        for cite in finder(text, ctx):
            # "Article 183(2) of Regulation (EU) 2016/679" is one citation: the act's own
            # findings (its label against its year) go to the article's.
            article = next((a for a in articles if overlaps(cite.span, [a.span])), None)
            if article is not None and cite.kind == "eu_act":
                article.hits.extend(cite.hits)
                continue
            found.append(cite)
    found.extend(forms)
    found.extend(find_french(text, ctx))
    return found
