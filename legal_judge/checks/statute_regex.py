"""Regex layer for statutes, rules and legislative materials that eyecite does not parse:
sections with letters ("§ 2000e-2(a)(1)"), state codes cited by their courts' own forms
("KRS 186.020(1)", "G.S. 15A-1340.14", "O.C.G.A. § 16-13-30", "21 O.S. § 1283", "ALA. CODE"),
state constitutions, session laws, the Statutes at Large, U.S.C.C.A.N. and committee reports.

eyecite runs first; these finders skip any span eyecite already reported. Closed code lists
(California's 29 codes, New York's consolidated laws, Texas's codes) apply to both.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from functools import cache

from legal_judge.checks.citation_regex import RegexCite, overlaps, roman_to_int
from legal_judge.checks.citation_rules import RuleContext, current_congress
from legal_judge.checks.designators import range_hit, shape_hit, spaced_subdivisions
from legal_judge.checks.report import CitationKind, RuleHit
from legal_judge.checks.rules_data import Rules, squash, state_abbreviation_pattern

__all__ = ["FINDERS", "closed_code_hit"]

# A section number with letters, dots, colons, hyphens and slashes, then subdivisions:
# "2000e-2(a)(1)", "13A-5-40(a)", "15A-1340.14", "2C:35-10(a)(1)", "5/2-619", "7-108(1-a)".
_SECTION = (
    r"\d[0-9A-Za-z]*(?:[.:\-–/][0-9A-Za-z]+)*"
    r"(?:\([0-9A-Za-z]{1,6}(?:[-.][0-9A-Za-z]{1,4})?\))*"
)
# A later section of a list is whole (never cut inside "28") and is not the title number of the
# next citation ("§ 2000e-2(a)(1) and 28 U.S.C. § 1332": "28" starts another citation).
_LIST_ITEM = rf"{_SECTION}(?![\w(]|[.:\-–/]\w)(?!\s+[A-Z][\w.'’ ]{{0,40}}?§)"
_SECTIONS = rf"{_SECTION}(?:\s*(?:[-–]|to|through|,|and|&)\s*{_LIST_ITEM})*"
_NAME_WORD = r"(?:[A-Z][A-Za-z'’]*\.?|&|of|[A-Z]\.(?:[A-Z]\.)+)"
# A code name: words starting with a capital (or "&", "of"), optionally "tit. 21," / "ch. 93A,".
_CODE_NAME = (
    rf"(?P<name>(?:(?P<title>\d{{1,3}})\s+)?{_NAME_WORD}(?:\s+{_NAME_WORD}){{0,7}}"
    r"(?:\s+(?:tit|ch)\.\s*\d+[A-Z]?,?)?)"
)
# Matched around each section sign (a whole-text scan tries the name at every word): the code
# name must end right before the sign, the section follow it.
_NAME_BEFORE_SIGN = re.compile(rf"(?<![\w.]){_CODE_NAME}\s*,?\s*$")
_SECTION_AFTER_SIGN = re.compile(
    rf"(?P<sign>§§?)\s*(?P<section>{_SECTIONS})(?P<etseq>\s+et\s+seq\.)?"
)
_SIGN = re.compile("§+")
# Codes that courts cite by a bare prefix, without a section sign.
_BARE = re.compile(
    r"(?<![\w.])(?=[A-Z0-9])(?P<name>(?:\d{1,3}\s+)?(?:KRS|K\.R\.S\.|N\.C\.G\.S\.|G\.S\.|RCW|ORS|MCL|M\.C\.L\.|"
    r"ILCS|La\.\s?R\.S\.|R\.S\.|N\.Y\.\s?C\.P\.L\.R\.|CPLR|C\.P\.L\.R\.|Minn\.\s?Stat\.|"
    r"Wis\.\s?Stat\.|Iowa\s+Code|MCA|NRS|A\.R\.S\.|C\.R\.S\.|HRS|RSMo|Mo\.\s?Rev\.\s?Stat\.|"
    r"AS(?=\s+\d+\.\d+\.\d+))"
    r"(?:\s+(?:Ann\.|§§?))?)\s+(?P<section>\d[0-9A-Za-z]*(?:[.:\-–/][0-9A-Za-z]+)+"
    r"(?:\([0-9A-Za-z]{1,6}(?:[-.][0-9A-Za-z]{1,4})?\))*|\d+(?:\([0-9A-Za-z]{1,6}\))+)"
)
# Words that make a capitalised phrase before "§" a code name.
_CODE_WORDS = frozenset(
    {"code", "codes", "stat", "stats", "statutes", "laws", "law", "rev", "ann", "comp", "gen",
     "usc", "usca", "cfr", "ocga", "os", "ilcs", "rcw", "ors", "mcl", "krs", "gs", "ncgs",
     "const", "act", "regs", "admin", "tit", "ch", "rules", "ordinances", "mun"}
)
# "Ill. Const. art. I, § 2", and as also written: "Ill Const art I, § 2", "Ill. Const. 1970,
# art. I, § 2" (Illinois names its constitution's year).
_CONST_TAIL = (
    r"\s+Const\.?)(?:\s+(?:18|19)\d\d)?\s*,?\s+"
    r"(?P<part>art|amend|pmbl)\.?\s+(?P<num>[IVXLC]+|\d+[A-Za-z]?)"
    r"(?:\s*,\s*(?P<kind>§|pt\.|cl\.)\s*(?P<sec>\d+[A-Za-z]?(?:\([0-9A-Za-z]{1,4}\))*))?"
)


@cache
def _const_re(rules: Rules) -> re.Pattern[str]:
    states = state_abbreviation_pattern(rules)
    return re.compile(rf"(?<![\w.])(?P<name>(?P<state>{states}){_CONST_TAIL}")
_SESSION = re.compile(
    r"(?<![\w.])(?P<year>1[789]\d\d|20\d\d)\s+(?P<state>[A-Z][A-Za-z.]*(?:\s?[A-Z][a-z]*\.)?)\s+"
    r"(?P<kind>Sess\.\s+Laws|Laws|Acts|Stat\.|Gen\.\s+Laws|Pub\.\s+Acts|Legis\.\s+Serv\.)"
    r"\s+(?:(?:ch|c|No|P\.A)\.\s*)?(?P<num>\d[\d-]*)"
)
_STAT_AT_LARGE = re.compile(r"(?<![\w.])(?P<vol>\d{1,3})\s+Stat\.\s+(?P<page>\d{1,5})\b")
_USCCAN = re.compile(
    r"(?<![\w.])(?P<year>19\d\d|20\d\d)\s+U\.\s?S\.\s?C\.\s?C\.\s?A\.\s?N\.\s+(?P<page>\d{1,5})\b"
)
_REPORT = re.compile(
    r"(?<![\w.])(?P<house>H\.\s?R\.|S\.)\s+(?:Conf\.\s+)?(?:Rep|Doc)\.\s+No\.\s+"
    r"(?P<congress>\d{1,3})[-–](?P<num>\d{1,5})\b"
)
# The rule number is taken whole ("12-A", "9038.5b"): a designator is never cut down to a real
# rule; its shape and range are judged in `_fed_rules`.
_RULE_NUMBER = (
    r"(?P<num>\d+)(?P<tail>(?:[.\-–](?=[0-9A-Za-z])|[0-9A-Za-z])*)"
    r"(?P<sub>(?:\([0-9A-Za-z]{1,4}\))*)(?:\s+\((?P<year>(?:19|20)\d\d)\))?"
)
_FED_RULE = re.compile(
    r"\bFed\.?\s?R\.?\s?(?P<set>Civ\.?\s?P\.?|Crim\.?\s?P\.?|App\.?\s?P\.?|Evid\.?|"
    r"Bankr\.?\s?P\.?)\s*" + _RULE_NUMBER
)
# The rule set written out: "Federal Rule of Civil Procedure 12(b)(1)".
_FED_RULE_WORDS = re.compile(
    r"\bFederal\s+Rules?\s+of\s+(?P<set>Civil\s+Procedure|Criminal\s+Procedure|"
    r"Appellate\s+Procedure|Evidence|Bankruptcy\s+Procedure)\s+" + _RULE_NUMBER
)
_SET_WORDS = {"civilprocedure": "Civ. P.", "criminalprocedure": "Crim. P.",
              "appellateprocedure": "App. P.", "evidence": "Evid.",
              "bankruptcyprocedure": "Bankr. P."}
_TRAIL = ".,;:"


def _err(rule: str, message: str) -> RuleHit:
    return RuleHit(rule=rule, severity="error", message=message)


def _cite(kind: CitationKind, m: re.Match[str], normalized: str | None = None,
          hits: list[RuleHit] | None = None, year: int | None = None) -> RegexCite:
    text = m.group(0).rstrip(_TRAIL + " ")
    span = (m.start(), m.start() + len(text))
    return RegexCite(kind, text, span, normalized or " ".join(text.split()), hits or [], year)


@cache
def _states(rules: Rules) -> dict[str, str]:
    """Squashed state abbreviation ("ala", "nc") -> its Bluebook form ("Ala.", "N.C.")."""
    return {squash(s): s for s in rules.get("state_abbreviations")}


def _is_code_name(name: str, rules: Rules) -> bool:
    words = [squash(w) for w in name.split()]
    if not words or words[0] in {"see", "cf", "under", "and", "or", "the", "in", "id"}:
        return False
    return any(w in _CODE_WORDS for w in words) or squash(name) in {"ocga", "usc", "cfr"}


def _in_order(tokens: list[str], entry: list[str]) -> bool:
    """Each token is a prefix of an entry word, in order, the first one of the first word."""
    i = 0
    for n, tok in enumerate(tokens):
        while i < len(entry) and not entry[i].startswith(tok):
            if n == 0:
                return False
            i += 1
        if i == len(entry):
            return False
        i += 1
    return bool(tokens)


def _matches_entry(tokens: list[str], entry: list[str], abbrev: dict[str, str]) -> bool:
    expanded = [w for t in tokens for w in abbrev.get(t, t).split()]
    # "Fin." is a prefix of "financial" though its listed expansion is "finance": try both.
    return _in_order(tokens, entry) or _in_order(expanded, entry) or _in_order(
        [t if any(e.startswith(t) for e in entry) else abbrev.get(t, t) for t in tokens], entry)


@cache
def _abbreviations(rules: Rules) -> dict[str, str]:
    return {k.lower().replace(".", ""): v for k, v in rules.get("closed_code_abbreviations").items()}


# A code name with one of these is not a code of the closed list (regulations, court rules,
# unconsolidated laws): not checked.
_SKIP_SUBJECT = {"admin", "regs", "reg", "rules", "r", "unconsol", "ct"}
# Words of a publisher or an annotation, dropped before matching.
_DROP = {"ann", "west's", "wests", "deering's", "deerings", "mckinney's", "mckinneys", "vernon's",
         "vernons", "consol", "supp"}


def closed_code_hit(name: str, rules: Rules) -> RuleHit | None:
    """`invalid` when ``name`` ("Cal. Wizardry Code") is not a code of a state with a closed list.

    Args:
        name: the code part of a statute citation, before the section.
        rules: the rules data with ``closed_codes``.

    Returns:
        The finding, or None when the state has no closed list or the code is on it.
    """
    hit = _closed_code_hit(name, rules)
    return hit.model_copy() if hit else None


@cache
def _closed_code_hit(name: str, rules: Rules) -> RuleHit | None:
    table = rules.get("closed_codes")
    abbrev = _abbreviations(rules)
    for state, spec in table.items():
        if not name.startswith(state + " "):
            continue
        words = name[len(state):].split()
        marker = spec["marker"]
        if marker not in words:
            return None
        raw = [w for w in words if w != marker]
        tokens = [p for w in raw if w not in {"&", "and"}
                  for p in w.lower().replace(".", "").strip(",").replace("’", "'").split("-")]
        tokens = [t.rstrip("'") if t.endswith("s'") else t for t in tokens]
        tokens = [t for t in tokens if t and t not in _DROP]
        if not tokens or any(t in _SKIP_SUBJECT for t in tokens):
            return None
        entries = [e.split() for e in spec["names"]]
        if any(_matches_entry(tokens, e, abbrev) for e in entries):
            return None
        subject = " ".join(raw)
        return _err(
            "unknown_code",
            f"{state} has no '{subject} {marker}' (its codes are a closed list: {spec['source']})",
        )
    return None


def _sections(text: str) -> Iterable[tuple[re.Match[str], re.Match[str]]]:
    """(code name, section) match pairs, one per section sign that has both."""
    for sign in _SIGN.finditer(text):
        name = _NAME_BEFORE_SIGN.search(text, max(0, sign.start() - 160), sign.start())
        section = _SECTION_AFTER_SIGN.match(text, sign.start())
        if name and section:
            yield name, section


def _statutes(text: str, taken: list[tuple[int, int]], ctx: RuleContext) -> list[RegexCite]:
    found = []
    for m, sec in _sections(text):
        name = m["name"]
        # The name may have swallowed prose before it ("Under Ala. Code"): keep from the
        # first word that starts a code name.
        words = name.split()
        while words and not _is_code_name(" ".join(words), ctx.rules):
            words = words[1:]
        while len(words) > 1 and squash(words[0]) in {"see", "under", "cf", "also", "and", "the"}:
            words = words[1:]
        if not words or not _is_code_name(" ".join(words), ctx.rules):
            continue
        start = m.start("name") + name.index(words[0]) if words[0] in name else m.start()
        end = start + len(text[start : sec.end()].rstrip(_TRAIL + " "))
        cite = RegexCite("statute", text[start:end], (start, end), "")
        if overlaps(cite.span, taken):
            continue
        cite.normalized = " ".join(cite.text.split())
        code_name = " ".join(words)
        if squash(code_name).endswith("cfr"):
            cite.kind = "regulation"
        hit = closed_code_hit(code_name, ctx.rules)
        if hit:
            cite.hits.append(hit)
        found.append(cite)
    for m in _BARE.finditer(text):
        if not overlaps(m.span(), taken) and not overlaps(m.span(), [c.span for c in found]):
            cite = _cite("statute", m, normalized=_bare_canonical(m, ctx.rules))
            end, spaced = spaced_subdivisions(text, cite.span[1])  # "G.S. 163-226 (b)"
            if spaced and cite.span[1] == m.end("section"):
                cite.span, cite.text = (cite.span[0], end), text[cite.span[0]:end]
                cite.normalized += spaced
            hit = _ilcs_hit(m["name"], m["section"], cite.normalized, ctx) if "ILCS" in m[
                "name"] else None
            cite.hits += [hit] if hit else []
            found.append(cite)
    return found


def _bare_canonical(m: re.Match[str], rules: Rules) -> str | None:
    """"KRS 117.235" -> "Ky. Rev. Stat. § 117.235"; None keeps the citation as written."""
    words = m["name"].split()
    title = words.pop(0) if words and words[0].isdigit() else None
    name = " ".join(w for w in words if w not in {"Ann.", "§", "§§"})
    code = _bare_codes(rules).get(squash(name))
    if code is None or title:
        return None
    sign = "" if code.endswith("C.P.L.R.") else "§ "  # the CPLR numbers rules, not sections
    return f"{code} {sign}{m['section']}"


@cache
def _bare_codes(rules: Rules) -> dict[str, str]:
    return {squash(k): v for k, v in rules.get("bare_codes").items()}


def _ilcs_hit(name: str, section: str, shown: str, ctx: RuleContext) -> RuleHit | None:
    """ILCS: "<chapter> ILCS <act>/<section>", the chapter a multiple of 5 from 5 to 850."""
    chapter = name.split()[0]
    if chapter.isdigit() and (int(chapter) % 5 or not 5 <= int(chapter) <= 850):
        return shape_hit("ilcs", f"{chapter}!", shown, ctx.rules)  # no designator has a "!"
    return shape_hit("ilcs", section, shown, ctx.rules)


def _constitutions(text: str, taken: list[tuple[int, int]], ctx: RuleContext) -> list[RegexCite]:
    found = []
    states = _states(ctx.rules)
    for m in _const_re(ctx.rules).finditer(text):
        if m["state"].startswith("U.") or overlaps(m.span(), taken):
            continue  # the U.S. Constitution has its own finder
        if squash(m["state"]) not in states:
            continue
        hits = []
        if m["part"] == "art" and roman_to_int(m["num"].rstrip("ABCDEFGH")) is None:
            hits.append(_err("state_const", f"'{m['num']}' is not an article number"))
        sec = f", {m['kind']} {m['sec']}" if m["sec"] else ""
        canonical = f"{states[squash(m['state'])]} Const. {m['part']}. {m['num']}{sec}"
        found.append(_cite("constitution", m, normalized=canonical, hits=hits))
    return found


def _future(year: int, ctx: RuleContext) -> list[RuleHit]:
    if year > ctx.today.year:
        return [_err("future_year", f"year {year} is after {ctx.today.year}")]
    return []


def _legislative(text: str, taken: list[tuple[int, int]], ctx: RuleContext) -> list[RegexCite]:
    found: list[RegexCite] = []
    states = _states(ctx.rules)
    for m in _SESSION.finditer(text):
        if squash(m["state"]) in states and not overlaps(m.span(), taken):
            year = int(m["year"])
            found.append(_cite("session_law", m, hits=_future(year, ctx), year=year))
    for m in _STAT_AT_LARGE.finditer(text):
        if not overlaps(m.span(), taken):
            found.append(_cite("session_law", m))
    for m in _USCCAN.finditer(text):
        if not overlaps(m.span(), taken):
            year = int(m["year"])
            found.append(_cite("legislative", m, hits=_future(year, ctx), year=year))
    for m in _REPORT.finditer(text):
        if overlaps(m.span(), taken):
            continue
        congress, now = int(m["congress"]), current_congress(ctx.today)
        hits = []
        if congress > now:
            hits.append(_err("future_congress",
                             f"Congress {congress} has not sat (Congress {now} sits now)"))
        found.append(_cite("legislative", m, hits=hits))
    return found


def _fed_rules(text: str, taken: list[tuple[int, int]], ctx: RuleContext) -> list[RegexCite]:
    table = {squash(k): (k, v) for k, v in ctx.rules.get("federal_rules").items()}
    found = []
    matches = [(m, squash(m["set"])) for m in _FED_RULE.finditer(text)]
    matches += [(m, squash(_SET_WORDS[squash(m["set"])])) for m in _FED_RULE_WORDS.finditer(text)]
    for m, key in matches:
        name, spec = table[key]
        designator = m["num"] + m["tail"]
        normalized = f"Fed. R. {name} {designator}{m['sub']}"
        shape = shape_hit("federal_rule", designator, normalized, ctx.rules)
        hits = [shape] if shape else []
        if shape is None:
            hit = range_hit("fed_rule", spec, int(m["num"]), f"Fed. R. {name} has rules "
                            f"{spec['min']}-{spec['max']}", low=spec["min"], high=spec["max"],
                            cited_year=int(m["year"]) if m["year"] else None)
            hits += [hit] if hit else []
        end = m.end("sub")
        cite = RegexCite("rule", text[m.start():end], (m.start(), end), normalized, hits)
        found.append(cite)
    return found


#: The statute, rule and legislative finders, run after :mod:`legal_judge.checks.statute_forms`'
#: own (by its ``find_statute_forms``), each given the spans taken so far.
FINDERS: list[Callable[[str, list[tuple[int, int]], RuleContext], list[RegexCite]]] = [
    _statutes,
    _constitutions,
    _legislative,
    _fed_rules,
]
