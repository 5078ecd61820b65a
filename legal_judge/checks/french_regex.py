"""French citations, syntactically: code articles and Cour de cassation pourvoi numbers."""

from __future__ import annotations

import re
from functools import cache

from legal_judge.checks.citation_regex import RegexCite
from legal_judge.checks.citation_rules import RuleContext
from legal_judge.checks.report import RuleHit

__all__ = ["find_french"]

_MONTHS = (
    "janvier|février|fevrier|mars|avril|mai|juin|juillet|août|aout|septembre|octobre|"
    "novembre|décembre|decembre"
)
_ARTICLE = re.compile(
    r"\b[Aa]rt(?:icle|\.)\s+(?P<num>(?:[LRDA]\.?\s?)?\d+(?:[-‑]\d+)*(?:\s(?:bis|ter|quater))?)"
    r"\s+(?:du|de\s+la|de\s+l['’]|des)?\s*[Cc]ode\s+(?P<rest>[^\n,.;:()]{0,90})"
)
_POURVOI = re.compile(r"\bn[°o º]\s*(?P<yy>\d{2})[-‑](?P<mid>\d{2})\.(?P<num>\d{3})\b")
_POURVOI_LOOSE = re.compile(r"\bn[°º]\s*\d{1,3}[-‑.]\d{1,3}[-‑.\d]*\b")
_CASS_CONTEXT = re.compile(
    r"pourvoi|Cass\.|cassation|Cour de cassation|civ\.|crim\.|soc\.|com\.", re.IGNORECASE
)
_DATE = re.compile(rf"\b\d{{1,2}}(?:er)?\s+(?:{_MONTHS})\s+(?P<year>\d{{4}})\b", re.IGNORECASE)


def _fold(text: str) -> str:
    return text.lower().replace("’", "'")


@cache
def _known_codes(names: tuple[str, ...]) -> tuple[str, ...]:
    return tuple(sorted((_fold(n) for n in names), key=len, reverse=True))


def _code_name(rest: str, ctx: RuleContext) -> tuple[str | None, str]:
    folded = _fold(rest)
    for name in _known_codes(tuple(ctx.rules.get("fr_codes"))):
        if folded.startswith(name) and (
            len(folded) == len(name) or not folded[len(name)].isalpha()
        ):
            return name, rest[: len(name)]
    return None, " ".join(rest.split()[:4])


def _article_hits(num: str, code: str | None, shown: str, ctx: RuleContext) -> list[RuleHit]:
    if code is None:
        return [
            RuleHit(
                rule="fr_code_name",
                severity="warning",
                message=f"'Code {shown}' is not a known French code",
            )
        ]
    hits = []
    plain = re.match(r"\d+", num)
    if code == "civil" and plain and num[0].isdigit():
        limit = int(ctx.rules.get("fr_code_civil_max_article")["max"])
        if int(plain.group(0)) > limit:
            hits.append(
                RuleHit(
                    rule="fr_article",
                    severity="warning",
                    message=f"the Code civil ends at article {limit}",
                )
            )
    if code == "civil" and num[0] in "LRDA":
        hits.append(
            RuleHit(
                rule="fr_article",
                severity="warning",
                message="the Code civil has no L./R./D. articles",
            )
        )
    return hits


def _articles(text: str, ctx: RuleContext) -> list[RegexCite]:
    found = []
    for m in _ARTICLE.finditer(text):
        code, shown = _code_name(m["rest"], ctx)
        end = m.start("rest") + len(shown) if code else m.end("rest")
        raw = text[m.start() : end].rstrip()
        norm = f"art. {m['num']} C. {code or shown}"
        found.append(
            RegexCite(
                "fr_code",
                raw,
                (m.start(), m.start() + len(raw)),
                norm,
                _article_hits(m["num"], code, shown, ctx),
            )
        )
    return found


def _pourvoi_hits(
    m: re.Match[str], before: str, ctx: RuleContext
) -> tuple[list[RuleHit], int | None]:
    yy = int(m["yy"])
    registered = 2000 + yy if 2000 + yy <= ctx.today.year else 1900 + yy
    dates = list(_DATE.finditer(before))
    decided = int(dates[-1]["year"]) if dates else None
    if decided and decided > ctx.today.year:
        return [
            RuleHit(
                rule="future_year",
                severity="error",
                message=f"year {decided} is after {ctx.today.year}",
            )
        ], decided
    if decided and registered > decided:
        msg = f"pourvoi n° {m['yy']}-… was registered in {registered}, after the {decided} decision"
        return [RuleHit(rule="pourvoi_year", severity="error", message=msg)], decided
    return [], decided


def _pourvois(text: str, ctx: RuleContext) -> list[RegexCite]:
    found = []
    strict_spans = []
    for m in _POURVOI.finditer(text):
        before = text[max(0, m.start() - 120) : m.start()]
        if not _CASS_CONTEXT.search(before):
            continue
        hits, decided = _pourvoi_hits(m, before, ctx)
        norm = f"n° {m['yy']}-{m['mid']}.{m['num']}"
        found.append(RegexCite("pourvoi", m.group(0), m.span(), norm, hits, decided))
        strict_spans.append(m.span())
    for m in _POURVOI_LOOSE.finditer(text):
        if any(s <= m.start() < e for s, e in strict_spans):
            continue
        if _CASS_CONTEXT.search(text[max(0, m.start() - 120) : m.start()]):
            hit = RuleHit(
                rule="pourvoi_format",
                severity="warning",
                message="not the YY-NN.NNN pourvoi format",
            )
            found.append(RegexCite("pourvoi", m.group(0), m.span(), m.group(0), [hit]))
    return found


def find_french(text: str, ctx: RuleContext) -> list[RegexCite]:
    """French code articles and pourvoi numbers in cleaned text."""
    return _articles(text, ctx) + _pourvois(text, ctx)
