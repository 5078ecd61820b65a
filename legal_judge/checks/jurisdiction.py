"""Jurisdiction detection: which legal systems a prompt asks about and an answer applies.

Codes (ISO 3166 where one exists):

- ``US`` United States (unspecified), ``US-FED`` US federal law/courts, ``US-XX`` a state or
  DC by its postal code (``US-CA``, ``US-NY``, ``US-DC``...).
- ``GB`` United Kingdom (UK-wide: UKSC, UKPC), ``GB-EAW`` England and Wales (``GB-EWS`` is
  accepted as an alias), ``GB-SCT`` Scotland, ``GB-NIR`` Northern Ireland.
- ``EU`` European Union law; member states by ISO code (``FR``, ``DE``, ``IE``, ``IT``, ``ES``,
  ``NL``, ``BE``, ``LU``...).
- ``AE`` United Arab Emirates, ``LB`` Lebanon, and ``CA``, ``AU``, ``IN``, ``SG``, ``HK``,
  ``CH``, ``EG``, ``SA``, ``QA``.

A sub-jurisdiction is compatible with its parent (``US-CA`` with ``US``), US federal law with
every state, and an EU member state with ``EU``: none of these is a mismatch.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from pydantic import BaseModel, ConfigDict, Field

__all__ = [
    "CODES",
    "JurisdictionFinding",
    "compatible",
    "declared_codes",
    "detect_jurisdictions",
    "jurisdiction_mismatch",
    "known_codes",
    "normalise_jurisdiction",
]

_STATES = {
    "Alabama": "AL",
    "Alaska": "AK",
    "Arizona": "AZ",
    "Arkansas": "AR",
    "California": "CA",
    "Colorado": "CO",
    "Connecticut": "CT",
    "Delaware": "DE",
    "Florida": "FL",
    "Georgia": "GA",
    "Hawaii": "HI",
    "Idaho": "ID",
    "Illinois": "IL",
    "Indiana": "IN",
    "Iowa": "IA",
    "Kansas": "KS",
    "Kentucky": "KY",
    "Louisiana": "LA",
    "Maine": "ME",
    "Maryland": "MD",
    "Massachusetts": "MA",
    "Michigan": "MI",
    "Minnesota": "MN",
    "Mississippi": "MS",
    "Missouri": "MO",
    "Montana": "MT",
    "Nebraska": "NE",
    "Nevada": "NV",
    "New Hampshire": "NH",
    "New Jersey": "NJ",
    "New Mexico": "NM",
    "New York": "NY",
    "North Carolina": "NC",
    "North Dakota": "ND",
    "Ohio": "OH",
    "Oklahoma": "OK",
    "Oregon": "OR",
    "Pennsylvania": "PA",
    "Rhode Island": "RI",
    "South Carolina": "SC",
    "South Dakota": "SD",
    "Tennessee": "TN",
    "Texas": "TX",
    "Utah": "UT",
    "Vermont": "VT",
    "Virginia": "VA",
    "Washington": "WA",
    "West Virginia": "WV",
    "Wisconsin": "WI",
    "Wyoming": "WY",
    "District of Columbia": "DC",
}
_EU_MEMBERS = {
    "AT",
    "BE",
    "BG",
    "CY",
    "CZ",
    "DE",
    "DK",
    "EE",
    "ES",
    "FI",
    "FR",
    "GR",
    "HR",
    "HU",
    "IE",
    "IT",
    "LT",
    "LU",
    "LV",
    "MT",
    "NL",
    "PL",
    "PT",
    "RO",
    "SE",
    "SI",
    "SK",
}
_PATTERNS: dict[str, str] = {
    "US": r"\bUnited States\b|\bU\.S\.A?\.|\bUSA\b|\bAmerican law\b|\bUS law\b",
    "US-FED": r"\bfederal (?:court|law|statute|district court|circuit)|\bU\.S\.C\.|\bC\.F\.R\.|"
    r"\bFed\. R\.|\bSupreme Court of the United States\b|\bU\.S\. Supreme Court\b|"
    r"\bCourt of Appeals for the \w+ Circuit\b|\b(?:1st|2d|3d|[4-9]th|1[01]th|D\.C\.|Fed\.) Cir\.",
    "US-DC": r"\bWashington,? D\.C\.|\bDistrict of Columbia\b",
    "GB": r"\bUnited Kingdom\b|\bU\.?K\.?(?= |\b)|\bUKSC\b|\bUKHL\b|\bUKPC\b|\bBritish law\b",
    "GB-EAW": r"\bEngland(?: and|&| &) Wales\b|\bEngland\b|\bEnglish (?:law|court|courts)\b|\bWales\b|"
    r"\bEWCA\b|\bEWHC\b|\bEWFC\b|\bEWCOP\b",
    "GB-SCT": r"\bScotland\b|\bScots law\b|\bScottish\b|\bCSIH\b|\bCSOH\b|\bCourt of Session\b",
    "GB-NIR": r"\bNorthern Ireland\b|\bNICA\b|\bNIQB\b",
    "EU": r"\bEuropean Union\b|\bEU law\b|\(EU\)|\bGDPR\b|\bCJEU\b|\bTFEU\b|\bECLI:EU\b|"
    r"\bCourt of Justice of the European Union\b|\bdroit de l['’]Union\b|الاتحاد الأوروبي",
    "FR": r"\bFrance\b|\bFrench (?:law|court|courts|code|Civil Code)\b|\bdroit français\b|"
    r"\bCode civil\b|\bCour de cassation\b|\bConseil d['’]État\b|\bLégifrance\b|\bECLI:FR\b|فرنسا",
    "DE": r"\bGermany\b|\bGerman law\b|\bDeutschland\b|\bBGB\b|\bBundesgerichtshof\b|\bBVerfG\b|"
    r"\bGrundgesetz\b|\bECLI:DE\b",
    "AE": r"\bUAE\b|\bU\.A\.E\.|\bUnited Arab Emirates\b|\bEmirati\b|\bDubai\b|\bAbu Dhabi\b|"
    r"\bDIFC\b|\bADGM\b|الإمارات",
    "LB": r"\bLebanon\b|\bLebanese\b|\bBeirut\b|\bLiban\b|\blibanais|لبنان|اللبناني",
    "CA": r"\bCanada\b|\bCanadian\b",
    "AU": r"\bAustralia\b|\bAustralian\b",
    "IN": r"\bIndia\b|\bIndian (?:law|court|Penal Code)\b",
    "IE": r"\bRepublic of Ireland\b|\bIrish law\b|(?<!Northern )\bIreland\b",
    "SG": r"\bSingapore\b",
    "HK": r"\bHong Kong\b",
    "CH": r"\bSwitzerland\b|\bSwiss law\b|\bSuisse\b",
    "BE": r"\bBelgium\b|\bBelgique\b|\bBelgian law\b",
    "IT": r"\bItaly\b|\bItalian law\b",
    "ES": r"\bSpain\b|\bSpanish law\b",
    "NL": r"\bNetherlands\b|\bDutch law\b",
    "LU": r"\bLuxembourg\b",
    "EG": r"\bEgypt\b|\bEgyptian\b|مصر",
    "SA": r"\bSaudi Arabia\b|\bSaudi\b|السعودية",
    "QA": r"\bQatar\b|قطر",
}
_COMPILED = {code: re.compile(p) for code, p in _PATTERNS.items()}
# Longest names first so "West Virginia" wins over "Virginia" and "New Mexico" is one state.
_STATE_RE = re.compile(
    r"\b(" + "|".join(sorted(map(re.escape, _STATES), key=len, reverse=True)) + r")\b"
)
_ALIASES = {
    "GB-EWS": "GB-EAW",
    "UK": "GB",
    "E&W": "GB-EAW",
    "US-FEDERAL": "US-FED",
    "FEDERAL": "US-FED",
}

CODES: frozenset[str] = frozenset(
    set(_PATTERNS) | {f"US-{s}" for s in _STATES.values()} | _EU_MEMBERS
)


def _parent(code: str) -> str | None:
    return code.split("-", 1)[0] if "-" in code else None


def compatible(a: str, b: str) -> bool:
    """Same system, one inside the other (US-CA / US), federal law in a US state, or an EU
    member state and the EU."""
    if a == b or _parent(a) == b or _parent(b) == a:
        return True
    if "US-FED" in (a, b) and _parent(a) == _parent(b) == "US":
        return True  # federal law applies in every state
    return (a == "EU" and b in _EU_MEMBERS) or (b == "EU" and a in _EU_MEMBERS)


def _from_courts(court_ids: Iterable[str]) -> set[str]:
    from legal_judge.checks.rules_data import court_info

    codes: set[str] = set()
    info = court_info()
    for court_id in court_ids:
        court = info.get(court_id)
        if court is None:
            continue
        if court.system == "federal":
            codes.add("US-FED")
        elif court.location in _STATES:
            codes.add(f"US-{_STATES[court.location]}")
    return codes


_FEDERAL_CITE = re.compile(
    r"^(?:U\.S\.|S\. Ct\.|L\. Ed\.|F\.|F\. Supp\.|F\. App'x|U\.S\.C\.|C\.F\.R\.|Fed\. Reg\.|FR\b|Pub\. L\.|B\.R\.)"
)


_LEADING_VOLUME = re.compile(r"^\d+\s+")


def _from_citations(citations: Iterable[str]) -> set[str]:
    """US-XX from a state abbreviation opening the reporter or code ("9 Cal. 4th 738")."""
    from reporters_db import STATE_ABBREVIATIONS

    by_length = sorted(STATE_ABBREVIATIONS.items(), key=lambda kv: len(kv[0]), reverse=True)
    codes: set[str] = set()
    for cite in citations:
        body = _LEADING_VOLUME.sub("", cite.strip())
        if _FEDERAL_CITE.match(body):
            codes.add("US-FED")
            continue
        for abbr, state in by_length:
            if body.startswith(abbr + " ") and state in _STATES:
                codes.add(f"US-{_STATES[state]}")
                break
    return codes


def detect_jurisdictions(
    text: str, *, court_ids: Iterable[str] = (), citations: Iterable[str] = ()
) -> set[str]:
    """Return the jurisdiction codes a text names (see the module docstring for the list).

    Args:
        text: a prompt or an answer.
        court_ids: courts-db ids of courts cited in the text (from the citation report).
        citations: normalised US citations found in the text ("9 Cal. 4th 738").

    Returns:
        Normalised codes, for example ``{"US-FED", "US-CA"}`` or ``{"FR", "EU"}``.
    """
    codes = {code for code, pattern in _COMPILED.items() if pattern.search(text)}
    codes |= {f"US-{_STATES[m.group(1)]}" for m in _STATE_RE.finditer(text)}
    if "US-DC" in codes:
        codes.discard("US-WA")  # "Washington, D.C." is not the state
    return codes | _from_courts(court_ids) | _from_citations(citations)


def normalise_jurisdiction(declared: str | None) -> set[str]:
    """Turn a declared jurisdiction ("US-CA", "California", "England & Wales", "fr") into codes."""
    if not declared or not declared.strip():
        return set()
    codes: set[str] = set()
    for part in re.split(r"[,;/|]", declared):
        token = part.strip()
        upper = _ALIASES.get(token.upper(), token.upper())
        if upper in CODES:
            codes.add(upper)
        else:
            codes |= detect_jurisdictions(token)
    return codes


def declared_codes(declared: str) -> str | None:
    """A dataset's declared jurisdiction written as codes, or None when a part names none.

    Codes and their aliases stay as written (``US-CA``, ``GB-EWS``, ``fr``); a part written as a
    name that stands for exactly one code becomes that code (``California`` -> ``US-CA``,
    ``England and Wales`` -> ``GB-EAW``); parts are kept in order, joined by ``, ``.

    Args:
        declared: The ``jurisdiction`` field of a dataset row (not blank).
    """
    out = []
    named = False
    for part in re.split(r"[,;/|]", declared):
        token = part.strip()
        if not token:
            continue
        if token.upper() in CODES or token.upper() in _ALIASES:
            out.append(token)
            continue
        found = detect_jurisdictions(token)
        if len(found) != 1:
            return None
        out.append(found.pop())
        named = True
    if not out:
        return None
    return ", ".join(out) if named else declared.strip()


def known_codes() -> str:
    """The codes a dataset may declare, in one line (US states summarised)."""
    others = sorted(c for c in CODES if not c.startswith("US-") or c == "US-FED")
    return (", ".join(others) + ", US-XX for a US state or DC by its postal code (US-CA, US-NY, "
            "US-DC...)")


class JurisdictionFinding(BaseModel):
    """What the prompt asks about, what the answer applies, and whether they disagree."""

    model_config = ConfigDict(extra="forbid")

    expected: list[str] = Field(default_factory=list)
    expected_source: str | None = None  # "declared" | "prompt" | None
    prompt_codes: list[str] = Field(default_factory=list)
    response_codes: list[str] = Field(default_factory=list)
    mismatch: bool = False
    unaddressed: bool = False
    foreign: list[str] = Field(default_factory=list)
    message: str = ""


def jurisdiction_mismatch(
    prompt: str,
    response: str,
    declared: str | None,
    *,
    response_court_ids: Iterable[str] = (),
    response_citations: Iterable[str] = (),
) -> JurisdictionFinding:
    """Compare the expected jurisdiction (declared, else named in the prompt) with the answer's.

    Args:
        prompt: the question.
        response: the answer under evaluation.
        declared: the dataset's jurisdiction field, if any.
        response_court_ids: courts-db ids cited in the answer.
        response_citations: normalised US citations in the answer.

    Returns:
        ``mismatch`` when the answer names jurisdictions and none is compatible with the
        expected ones; ``unaddressed`` when the answer names none at all.
    """
    prompt_codes = detect_jurisdictions(prompt)
    response_codes = detect_jurisdictions(
        response, court_ids=response_court_ids, citations=response_citations
    )
    declared_codes = normalise_jurisdiction(declared)
    expected = declared_codes or prompt_codes
    source = "declared" if declared_codes else "prompt" if prompt_codes else None
    foreign = sorted(
        r for r in response_codes if expected and not any(compatible(r, e) for e in expected)
    )
    mismatch = bool(expected and response_codes) and len(foreign) == len(response_codes)
    unaddressed = bool(expected) and not response_codes
    if mismatch:
        message = f"answer applies {', '.join(sorted(response_codes))}; asked about {', '.join(sorted(expected))}"
    elif unaddressed:
        message = f"answer names no jurisdiction; asked about {', '.join(sorted(expected))}"
    elif foreign:
        message = f"answer also cites {', '.join(foreign)}"
    else:
        message = ""
    return JurisdictionFinding(
        expected=sorted(expected),
        expected_source=source,
        prompt_codes=sorted(prompt_codes),
        response_codes=sorted(response_codes),
        mismatch=mismatch,
        unaddressed=unaddressed,
        foreign=foreign,
        message=message,
    )
