"""Rules over eyecite records: each rule is a small function ``(record, ctx) -> list[RuleHit]``.

Error rules are exact (the citation cannot be real as written); rules built on sparse data are
warnings. The data they use lives in ``citation_rules.v1.yaml``.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import date

from legal_judge.checks.eyecite_layer import EyeciteRecord
from legal_judge.checks.report import RuleHit
from legal_judge.checks.rules_data import Rules, court_info, squash

__all__ = ["CASE_RULES", "LAW_RULES", "RuleContext", "current_congress", "resolve_court"]

_CIRCUIT_RE = re.compile(r"^(\d+)(?:st|nd|rd|th|d)cir$")
_SIX_DIGITS = re.compile(r"\d{6}")
_CONGRESS = re.compile(r"(\d+)-\d+")


@dataclass(frozen=True)
class RuleContext:
    """What every rule may read: the rules data and the injected date."""

    rules: Rules
    today: date


def _err(rule: str, message: str) -> list[RuleHit]:
    return [RuleHit(rule=rule, severity="error", message=message)]


def _warn(rule: str, message: str) -> list[RuleHit]:
    return [RuleHit(rule=rule, severity="warning", message=message)]


def current_congress(today: date) -> int:
    """The Congress sitting on ``today`` (the 119th sits in 2025-2026)."""
    return (today.year - 1789) // 2 + 1


def resolve_court(court_text: str, rules: Rules) -> str | None:
    """Map a court parenthetical ("3d Cir.", "CA4", "S.D.N.Y.") to a courts-db id, exactly."""
    text = court_text
    for noise in rules.get("court_noise_words"):
        text = text.replace(noise, " ")
    return rules.court_index.get(squash(text))


def _int(value: str | None) -> int | None:
    return int(value) if value and value.isdigit() else None


# ---------------------------------------------------------------- case rules


def rule_future_year(rec: EyeciteRecord, ctx: RuleContext) -> list[RuleHit]:
    """A decision year, or a year-volume (WL, neutral), after today's year."""
    years = [rec.year] if rec.year else []
    if any(e.cite_type in {"neutral", "specialty_west", "specialty_lexis"} for e in rec.editions):
        vol = _int(rec.groups.get("volume"))
        if vol and vol > 1000:
            years.append(vol)
    late = [y for y in years if y > ctx.today.year]
    if late:
        return _err("future_year", f"year {max(late)} is after {ctx.today.year}")
    return []


def _nominative_us(rec: EyeciteRecord, ctx: RuleContext) -> bool:
    vol = _int(rec.groups.get("volume"))
    limit = int(ctx.rules.get("us_reports_nominative_max_volume"))
    return rec.reporter == "U.S." and vol is not None and vol <= limit


def rule_edition_year(rec: EyeciteRecord, ctx: RuleContext) -> list[RuleHit]:
    """The year must fall inside the date range of at least one candidate edition."""
    if rec.year is None or rec.year > ctx.today.year or not rec.editions:
        return []
    if _nominative_us(rec, ctx):
        return []
    ranges = []
    for ed in rec.editions:
        start = ed.start_year or 0
        end = ed.end_year or ctx.today.year + 1
        if start <= rec.year <= end:
            return []
        ranges.append(f"{ed.short_name} {start}-{ed.end_year or 'now'}")
    return _err("edition_year", f"{rec.reporter} not published in {rec.year} ({'; '.join(ranges)})")


def _court_id(rec: EyeciteRecord, ctx: RuleContext) -> str | None:
    return resolve_court(rec.court_text, ctx.rules) if rec.court_text else None


def rule_unknown_court(rec: EyeciteRecord, ctx: RuleContext) -> list[RuleHit]:
    """A court string that resolves to no court; "13th Cir." is impossible, others a warning."""
    if not rec.court_text or _court_id(rec, ctx):
        return []
    m = _CIRCUIT_RE.match(squash(rec.court_text))
    if m and not 1 <= int(m.group(1)) <= 11:
        return _err("unknown_court", f"there is no '{rec.court_text}' (circuits are 1st-11th)")
    return _warn("unknown_court", f"court '{rec.court_text}' is not a known court abbreviation")


def rule_court_not_yet(rec: EyeciteRecord, ctx: RuleContext) -> list[RuleHit]:
    """A court cited for a year before it first sat (11th Cir. before 1981)."""
    court_id = _court_id(rec, ctx)
    info = court_info().get(court_id or "")
    if not info or not info.start or rec.year is None or rec.year >= info.start.year:
        return []
    return _err(
        "court_not_yet",
        f"{rec.court_text} ({court_id}) starts {info.start.isoformat()}, cited for {rec.year}",
    )


def _is_district(court_id: str, ctx: RuleContext) -> bool:
    info = court_info().get(court_id)
    return bool(info and info.system == "federal" and ctx.rules.district_re.match(court_id))


def rule_reporter_court(rec: EyeciteRecord, ctx: RuleContext) -> list[RuleHit]:
    """A reporter cited for a court it never reports (U.S. for a circuit, F.3d for a district)."""
    court_id = _court_id(rec, ctx)
    if not court_id:
        return []
    table = ctx.rules.get("reporter_court")
    names = {e.short_name for e in rec.editions} or {rec.reporter}
    circuits = set(ctx.rules.get("circuit_courts"))
    info = court_info().get(court_id)
    if names <= set(table["scotus_only"]) and court_id != "scotus":
        return _err(
            "reporter_court", f"{rec.reporter} reports only the Supreme Court, not {rec.court_text}"
        )
    if names <= set(table["appellate_only"]) and (
        court_id == "scotus" or _is_district(court_id, ctx) or (info and info.system == "state")
    ):
        return _err(
            "reporter_court",
            f"{rec.reporter} reports federal courts of appeals, not {rec.court_text}",
        )
    if names <= set(table["not_circuit"]) and court_id in circuits:
        return _err("reporter_court", f"{rec.reporter} reports trial courts, not {rec.court_text}")
    return []


def _interpolate(anchors: list[list[int]], volume: int) -> float | None:
    for (v0, y0), (v1, y1) in zip(anchors, anchors[1:], strict=False):
        if v0 <= volume <= v1:
            return y0 + (y1 - y0) * (volume - v0) / (v1 - v0)
    return None


def rule_volume_year(rec: EyeciteRecord, ctx: RuleContext) -> list[RuleHit]:
    """Volume far from the year its neighbours were published (warning: sparse anchors)."""
    anchors = ctx.rules.get("volume_year_anchors").get(rec.reporter)
    vol = _int(rec.groups.get("volume"))
    if not anchors or vol is None or rec.year is None or _nominative_us(rec, ctx):
        return []
    estimate = _interpolate(anchors, vol)
    tolerance = int(ctx.rules.get("volume_year_tolerance"))
    if estimate is None or abs(estimate - rec.year) <= tolerance:
        return []
    return _warn(
        "volume_year", f"{vol} {rec.reporter} is from ~{round(estimate)}, cited for {rec.year}"
    )


def rule_westlaw_year(rec: EyeciteRecord, ctx: RuleContext) -> list[RuleHit]:
    """A Westlaw number's first part is the decision year."""
    if rec.reporter not in ctx.rules.get("westlaw_reporters") or rec.year is None:
        return []
    vol = _int(rec.groups.get("volume"))
    if vol is None or vol == rec.year:
        return []
    if vol == rec.year + 1:
        return _warn("wl_year", f"WL year {vol} is one after the decision year {rec.year}")
    return _err("wl_year", f"WL year {vol} != decision year {rec.year}")


def rule_il_neutral(rec: EyeciteRecord, ctx: RuleContext) -> list[RuleHit]:
    """Illinois public-domain citations (since 2011): docket year cannot follow the decision."""
    if not rec.reporter.startswith("IL App"):
        return []
    vol = _int(rec.groups.get("volume"))
    digits = _SIX_DIGITS.match(rec.groups.get("page") or "")
    if vol is None:
        return []
    if vol < 2011:
        return _err("il_neutral", f"Illinois neutral citations start in 2011, not {vol}")
    if digits:
        yy = int(digits.group(0)[:2])
        if yy < 90 and 2000 + yy > vol:
            return _err("il_neutral", f"docket year 20{yy:02d} is after the citation year {vol}")
    return []


CASE_RULES: list[Callable[[EyeciteRecord, RuleContext], list[RuleHit]]] = [
    rule_future_year,
    rule_edition_year,
    rule_unknown_court,
    rule_court_not_yet,
    rule_reporter_court,
    rule_volume_year,
    rule_westlaw_year,
    rule_il_neutral,
]


# ---------------------------------------------------------------- law rules


def rule_usc_title(rec: EyeciteRecord, ctx: RuleContext) -> list[RuleHit]:
    """U.S.C. titles are 1-54, with 53 reserved."""
    if rec.reporter != "U.S.C.":
        return []
    title = _int(rec.groups.get("title"))
    spec = ctx.rules.get("usc_titles")
    if title is None:
        return []
    if not spec["min"] <= title <= spec["max"] or title in spec["reserved"]:
        return _err("usc_title", f"there is no title {title} of the U.S. Code (1-54, 53 reserved)")
    return []


def rule_cfr_title(rec: EyeciteRecord, ctx: RuleContext) -> list[RuleHit]:
    """C.F.R. titles are 1-50 (eyecite puts the title in the 'chapter' group)."""
    if rec.reporter != "C.F.R.":
        return []
    title = _int(rec.groups.get("chapter") or rec.groups.get("title"))
    spec = ctx.rules.get("cfr_titles")
    if title is not None and not spec["min"] <= title <= spec["max"]:
        return _err("cfr_title", f"there is no title {title} of the C.F.R. (1-50)")
    return []


def rule_fed_reg_volume(rec: EyeciteRecord, ctx: RuleContext) -> list[RuleHit]:
    """Federal Register volume = year - 1935."""
    if rec.reporter not in {"FR", "Fed. Reg."} or rec.year is None:
        return []
    vol = _int(rec.groups.get("volume"))
    expected = rec.year - int(ctx.rules.get("fed_reg_first_year")) + 1
    if vol is None or vol == expected:
        return []
    return _err("fed_reg_volume", f"Fed. Reg. volume {vol} is {vol + 1935}, cited for {rec.year}")


def rule_pub_law_congress(rec: EyeciteRecord, ctx: RuleContext) -> list[RuleHit]:
    """A public law of a Congress that has not sat yet."""
    if rec.reporter != "Pub. L.":
        return []
    m = _CONGRESS.match(rec.groups.get("title") or "")
    if m and int(m.group(1)) > current_congress(ctx.today):
        return _err(
            "future_congress",
            f"Congress {m.group(1)} has not sat (Congress {current_congress(ctx.today)} sits now)",
        )
    return []


LAW_RULES: list[Callable[[EyeciteRecord, RuleContext], list[RuleHit]]] = [
    rule_usc_title,
    rule_cfr_title,
    rule_fed_reg_volume,
    rule_pub_law_congress,
    rule_future_year,
]
