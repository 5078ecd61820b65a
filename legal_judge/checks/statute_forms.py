"""The forms lawyers write statutes, regulations and court rules in that eyecite does not parse,
each normalised to one canonical citation:

- the U.S. Code and the C.F.R. without a section sign or periods ("28 U.S.C. 1332", "42 USC
  1983", "40 CFR 60.5", "40 C.F.R. Part 60") and in prose ("section 1983 of title 42");
- state codes in prose ("California Labor Code section 2802", "section 768.72, Florida
  Statutes"): only a known code of a known jurisdiction, so "section 5 of the contract" is not
  read as a citation;
- state administrative codes ("14 Ill. Adm. Code 200.116", "Cal. Code Regs. tit. 8, § 3203",
  "8 CCR 3203") and state supreme court rules ("Ill. S. Ct. R. 106").

These finders run before the generic statute finder (``statute_regex.py``), which keeps any form
they do not claim.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from functools import cache

from legal_judge.checks.citation_regex import RegexCite, first_wins
from legal_judge.checks.citation_rules import RuleContext
from legal_judge.checks.designators import SECTION_PATTERN, spaced_subdivisions, title_hit
from legal_judge.checks.report import CitationKind, RuleHit
from legal_judge.checks.rules_data import Rules, squash, state_abbreviation_pattern
from legal_judge.checks.statute_regex import FINDERS, closed_code_hit

__all__ = ["admin_canonical", "find_statute_forms"]

_SEC = rf"(?P<sec>{SECTION_PATTERN})"
_SEC_WORD = r"(?:§§?|[Ss]ec(?:tion|s?\.)|[Ss]ections?)"
_USC_NAME = r"(?:U\.\s?S\.\s?C\.(?:\s?[AS]\.)?|USC[AS]?)"
_USC = re.compile(rf"(?<![\w.])(?P<title>\d{{1,2}})\s+{_USC_NAME}\s*{_SEC_WORD}?\s*{_SEC}")
_USC_PROSE = re.compile(
    rf"\b[Ss]ection\s+{_SEC}\s+of\s+[Tt]itle\s+(?P<title>\d{{1,2}})\b"
    r"(?P<code>\s+of\s+the\s+United\s+States\s+Code|,?\s+U\.\s?S\.\s?C\.|,?\s+United\s+States\s+Code)?"
)
_USC_TITLE_FIRST = re.compile(
    r"\b[Tt]itle\s+(?P<title>\d{1,2})(?:\s+of\s+the\s+United\s+States\s+Code|,?\s+United\s+States"
    rf"\s+Code)\s*,?\s*{_SEC_WORD}\s*{_SEC}"
)
_CFR = re.compile(
    r"(?<![\w.])(?P<title>\d{1,2})\s+(?:C\.\s?F\.\s?R\.|CFR)\s*(?:(?:[Pp]arts?|pts?\.)\s*"
    rf"(?P<part>\d{{1,4}}[A-Za-z]?(?:-\d{{1,4}})?)\b|{_SEC_WORD}?\s*{_SEC})"
)
_STATE_CODE = re.compile(
    r"\b(?P<state>California|Texas|New\s+York)(?:'s)?\s+(?P<words>(?:[A-Z][a-z]+|and|&)"
    r"(?:\s+(?:[A-Z][a-z]+|and|&)){0,5}?)\s+(?P<marker>Code|Law)\s*,?\s*(?:§§?|[Ss]ection|[Ss]ec\.)"
    rf"\s*{_SEC}"
)
_STATE_CODE_AFTER = re.compile(
    rf"\b[Ss]ection\s+{_SEC}\s+of\s+the\s+(?P<state>California|Texas|New\s+York)\s+"
    r"(?P<words>(?:[A-Z][a-z]+|and|&)(?:\s+(?:[A-Z][a-z]+|and|&)){0,5}?)\s+(?P<marker>Code|Law)\b"
)
_PROCEDURE_CODE = re.compile(
    r"\b(?P<state>California|Texas)\s+Code\s+of\s+(?P<kind>Civil|Criminal)\s+Procedure\s*,?\s*"
    rf"(?P<word>§§?|[Ss]ection|[Aa]rticle|[Aa]rt\.)\s*{_SEC}"
)
_RULE_NUM = r"(?P<num>\d{1,4}[A-Za-z]?(?:[.\-]\d{1,3})?)(?P<sub>(?:\([0-9A-Za-z]{1,4}\))*)"
_STATE_RULE_TAIL = rf"\s?(?:S\.\s?Ct\.|Sup\.\s?Ct\.)\s?R(?:ule)?\.?\s*{_RULE_NUM}"


@cache
def _state_rule_re(rules: Rules) -> re.Pattern[str]:
    states = state_abbreviation_pattern(rules)
    return re.compile(rf"(?<![\w.])(?P<state>{states}){_STATE_RULE_TAIL}")


@cache
def _state_rule_prose_re(rules: Rules) -> re.Pattern[str]:
    names = "|".join(n.replace(" ", r"\s+") for n in rules.get("state_names"))
    return re.compile(rf"\b(?P<state>{names})\s+Supreme\s+Court\s+Rule\s+{_RULE_NUM}")


_ADMIN_LEAD = re.compile(
    r"(?<![\w.])(?P<title>\d{1,3})\s+(?P<name>Ill\.\s?Adm(?:in)?\.\s?Code|Tex\.\s?Admin\.\s?Code|"
    r"TAC|CCR|C\.C\.R\.|NYCRR|N\.Y\.C\.R\.R\.|Pa\.\s?Code|Fla\.\s?Admin\.\s?Code)\s*"
    rf"(?:§§?|[Ss]ection|[Ss]ec\.|[Pp]art)?\s*{_SEC}"
)
_ADMIN_NAMES = (
    r"(?P<name>Cal\.\s?Code\s?(?:of\s)?Regs\.|Cal\.\s?Admin\.\s?Code|California\s+Code\s+of\s+"
    r"Regulations|N\.Y\.\s?Comp\.\s?Codes\s?R\.\s?&\s?Regs\.|Ill\.\s?Adm(?:in)?\.\s?Code|Illinois\s+"
    r"Administrative\s+Code|Tex\.\s?Admin\.\s?Code|Texas\s+Administrative\s+Code)"
)
_ADMIN_NAMED = re.compile(
    rf"{_ADMIN_NAMES}\s*,?\s*(?:tit\.|[Tt]itle)\s*(?P<title>\d{{1,3}})\s*,?\s*"
    rf"(?:§§?|[Ss]ection|[Ss]ec\.|[Pp]art)\s*{_SEC}"
)
_ADMIN_TITLE_FIRST = re.compile(
    rf"\b[Tt]itle\s+(?P<title>\d{{1,3}})\s*,?\s*(?:of\s+the\s+)?{_ADMIN_NAMES}\s*,?\s*"
    rf"(?:§§?|[Ss]ection|[Ss]ec\.)\s*{_SEC}"
)
_TRAIL = ".,;:"
# Massachusetts: "Mass. Gen. Laws ch. 93A, § 9", and as its courts write it: "G.L. c. 93A, § 9",
# "Mass.Gen.L. ch. 214, § 1B".
_MASS = re.compile(
    r"(?<![\w.])(?:Mass\.?\s?Gen\.?\s?(?:Laws|L\.)(?:\s?Ann\.)?|M\.?\s?G\.?\s?L\.?|G\.\s?L\.)\s*"
    r"(?:ch|c)\.\s*(?P<ch>\d{1,3}[A-Z]{0,2})(?:\s*,\s*§§?\s*" + _SEC + ")?"
)


def _cite(kind: CitationKind, m: re.Match[str], normalized: str,
          hits: list[RuleHit] | None = None) -> RegexCite:
    text = m.group(0).rstrip(_TRAIL + " ")
    end = m.start() + len(text)
    if "sec" in m.re.groupindex and m["sec"] and m.end("sec") == end:
        end, subdivisions = spaced_subdivisions(m.string, end)  # "§ 27-a (3) (a) (1)"
        if subdivisions and normalized.endswith(m["sec"]):
            normalized += subdivisions
        text = m.string[m.start():end]
    return RegexCite(kind, text, (m.start(), end), normalized, hits or [])


def _usc(text: str, ctx: RuleContext) -> Iterable[RegexCite]:
    spec = ctx.rules.get("usc_titles")
    for pattern in (_USC, _USC_TITLE_FIRST, _USC_PROSE):
        for m in pattern.finditer(text):
            if pattern is _USC_PROSE and not m["code"] and text.startswith(" of the", m.end()):
                continue  # "section 3 of title 2 of the Act": a title of another instrument
            hit = title_hit("usc_title", spec, int(m["title"]), "the U.S. Code")
            yield _cite("statute", m, f"{m['title']} U.S.C. § {m['sec']}", [hit] if hit else [])


def _cfr(text: str, ctx: RuleContext) -> Iterable[RegexCite]:
    spec = ctx.rules.get("cfr_titles")
    for m in _CFR.finditer(text):
        hit = title_hit("cfr_title", spec, int(m["title"]), "the C.F.R.")
        where = f"pt. {m['part']}" if m["part"] else f"§ {m['sec']}"
        yield _cite("regulation", m, f"{m['title']} C.F.R. {where}", [hit] if hit else [])


@cache
def _abbreviated(rules: Rules, words: str) -> str | None:
    """"Business and Professions" -> "Bus. & Prof."; None when a word is no code word."""
    table = rules.get("prose_codes")["word_abbreviations"]
    out = []
    for word in words.split():
        if word in {"and", "&"}:
            out.append("&")
        elif word.lower() in table:
            out.append(table[word.lower()])
        else:
            return None
    return " ".join(out)


def _state_codes(text: str, ctx: RuleContext) -> Iterable[RegexCite]:
    states = ctx.rules.get("prose_codes")["states"]
    for pattern in (_STATE_CODE, _STATE_CODE_AFTER):
        for m in pattern.finditer(text):
            spec = states[" ".join(m["state"].split())]
            short = _abbreviated(ctx.rules, m["words"])
            # Only a code on the state's closed list: "California Wizardry Code" is no citation.
            if short is None or closed_code_hit(f"{spec['closed']} {short} {m['marker']}",
                                                ctx.rules):
                continue
            yield _cite("statute", m, f"{spec['abbr']} {short} {m['marker']} § {m['sec']}")
    for m in _PROCEDURE_CODE.finditer(text):
        if m["state"] == "California" and m["kind"] == "Civil":
            yield _cite("statute", m, f"Cal. Civ. Proc. Code § {m['sec']}")
        elif m["state"] == "Texas" and m["kind"] == "Criminal":
            yield _cite("statute", m, f"Tex. Code Crim. Proc. art. {m['sec']}")


@cache
def _compilations(rules: Rules) -> tuple[re.Pattern[str], re.Pattern[str], dict[str, str]]:
    table = rules.get("prose_codes")["compilations"]
    names = "|".join(re.escape(n).replace(r"\ ", r"\s+") for n in sorted(table, key=len)[::-1])
    before = re.compile(rf"\b(?P<name>{names})\s*,?\s*(?:§§?|[Ss]ection|[Ss]ec\.)\s*{_SEC}")
    after = re.compile(rf"\b[Ss]ection\s+{_SEC}\s*,?\s+(?:of\s+the\s+)?(?P<name>{names})\b")
    return before, after, {squash(k): v for k, v in table.items()}


def _state_compilations(text: str, ctx: RuleContext) -> Iterable[RegexCite]:
    before, after, table = _compilations(ctx.rules)
    for pattern in (before, after):
        for m in pattern.finditer(text):
            yield _cite("statute", m, f"{table[squash(m['name'])]} § {m['sec']}")


@cache
def _admin_names(rules: Rules) -> dict[str, str]:
    spec = rules.get("admin_codes")
    return {squash(k): v for part in ("lead_title", "named_title") for k, v in spec[part].items()}


def admin_canonical(name: str, title: str | None, sec: str | None, rules: Rules) -> str | None:
    """The canonical form of a state administrative code citation, None for any other code.

    Args:
        name: the code's name as written ("Ill. Adm. Code", "CCR", "Cal. Code Regs.").
        title: the title number.
        sec: the section designator.
        rules: the rules data.
    """
    code = _admin_names(rules).get(squash(name))
    if code is None or not title or not sec:
        return None
    if code in rules.get("admin_codes_title_first"):
        return f"{title} {code} § {sec}"
    return f"{code} tit. {title}, § {sec}"


def _admin_codes(text: str, ctx: RuleContext) -> Iterable[RegexCite]:
    for pattern in (_ADMIN_LEAD, _ADMIN_NAMED, _ADMIN_TITLE_FIRST):
        for m in pattern.finditer(text):
            canonical = admin_canonical(m["name"], m["title"], m["sec"], ctx.rules)
            yield _cite("admin_code", m, canonical or m.group(0))


@cache
def _state_lookup(rules: Rules) -> tuple[dict[str, str], dict[str, str]]:
    abbrs = {squash(s): s for s in rules.get("state_abbreviations")}
    return abbrs, dict(rules.get("state_names"))


def _state_rules(text: str, ctx: RuleContext) -> Iterable[RegexCite]:
    abbrs, names = _state_lookup(ctx.rules)
    for m in _state_rule_re(ctx.rules).finditer(text):
        state = abbrs.get(squash(m["state"]))
        if state:
            yield _cite("court_rule", m, f"{state} S. Ct. R. {m['num']}{m['sub']}")
    for m in _state_rule_prose_re(ctx.rules).finditer(text):
        state = names.get(" ".join(m["state"].split()))
        if state:
            yield _cite("court_rule", m, f"{state} S. Ct. R. {m['num']}{m['sub']}")


_CPLR = re.compile(
    r"(?<![\w.])(?:N\.Y\.\s?)?(?:CPLR|C\.P\.L\.R\.)\s*(?:§\s*|[Rr]ule\s+)?"
    r"(?P<sec>\d{3,4}[a-z]?(?:\([0-9a-z]{1,4}\))*)"
)


def _cplr(text: str, ctx: RuleContext) -> Iterable[RegexCite]:
    """New York's Civil Practice Law and Rules: "CPLR 3212", "N.Y. C.P.L.R. 3211(a)(7)"."""
    for m in _CPLR.finditer(text):
        yield _cite("statute", m, f"N.Y. C.P.L.R. {m['sec']}")


def _massachusetts(text: str, ctx: RuleContext) -> Iterable[RegexCite]:
    for m in _MASS.finditer(text):
        sec = f", § {m['sec']}" if m["sec"] else ""
        yield _cite("statute", m, f"Mass. Gen. Laws ch. {m['ch']}{sec}")


@cache
def _implied_re(rules: Rules) -> tuple[re.Pattern[str], dict[str, str]]:
    table = rules.get("implied_codes")
    alts = "|".join(re.escape(n).replace(r"\ ", r"\s+") for n in sorted(table, key=len)[::-1])
    pattern = re.compile(rf"(?<![\w.])(?P<name>{alts})\s*,?\s*§§?\s*{_SEC}")
    return pattern, {squash(k): v for k, v in table.items()}


def _implied_codes(text: str, ctx: RuleContext) -> Iterable[RegexCite]:
    pattern, table = _implied_re(ctx.rules)
    for m in pattern.finditer(text):
        # "Cal. Lab. Code" or "New York Labor Law" is another finder's: only the bare name here.
        before = text[max(0, m.start() - 12):m.start()]
        if re.search(r"(?:Cal\.|N\.Y\.|York|California|Texas|Tex\.)\s*$", before):
            continue
        yield _cite("statute", m, f"{table[squash(m['name'])]} § {m['sec']}")


_FINDERS: list[Callable[[str, RuleContext], Iterable[RegexCite]]] = [
    _admin_codes,
    _massachusetts,
    _cplr,
    _usc,
    _cfr,
    _state_codes,
    _state_compilations,
    _implied_codes,
    _state_rules,
]


def find_statute_forms(
    text: str, taken: Iterable[tuple[int, int]], ctx: RuleContext
) -> list[RegexCite]:
    """Find the statute, regulation, rule and legislative citations eyecite does not parse: this
    module's forms first, then :mod:`~legal_judge.checks.statute_regex`'s generic finders, which
    keep any form these do not claim.

    Args:
        text: whitespace-cleaned text.
        taken: spans (in the cleaned text) already reported.
        ctx: rules and today's date.

    Returns:
        The citations found, each with its canonical form, none overlapping another or a taken
        span (the earlier finder wins).
    """
    own = [lambda _spans, f=f: f(text, ctx) for f in _FINDERS]
    generic = [lambda spans, f=f: f(text, spans, ctx) for f in FINDERS]
    return first_wins([*own, *generic], taken)
