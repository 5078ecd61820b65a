"""Rules over eyecite records: each rule is a small function ``(record, ctx) -> list[RuleHit]``.

Error rules are exact (the citation cannot be real as written); rules built on sparse data are
warnings. The data they use lives in ``citation_rules.v3.yaml``.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import date

from legal_judge.checks.courts import CourtRef, resolve_court, resolve_court_ref
from legal_judge.checks.designators import title_hit
from legal_judge.checks.eyecite_layer import EditionInfo, EyeciteRecord
from legal_judge.checks.report import RuleHit
from legal_judge.checks.rules_data import Rules, court_info, squash
from legal_judge.checks.volumes import SeriesInfo, VolumeTable, load_volumes

__all__ = ["CASE_RULES", "LAW_RULES", "RuleContext", "current_congress", "resolve_court"]

_CIRCUIT_RE = re.compile(r"^(\d+)(?:st|nd|rd|th|d)cir$")
_SIX_DIGITS = re.compile(r"\d{6}")
_CONGRESS = re.compile(r"(\d+)-\d+")
_PIN = re.compile(r"^\s*,?\s*(?:at\s+)?(\d+)\b")


@dataclass(frozen=True)
class RuleContext:
    """What every rule may read: the rules data, the volume table and the injected date."""

    rules: Rules
    today: date
    volumes: VolumeTable = field(default_factory=load_volumes)


def _err(rule: str, message: str) -> list[RuleHit]:
    return [RuleHit(rule=rule, severity="error", message=message)]


def _warn(rule: str, message: str) -> list[RuleHit]:
    return [RuleHit(rule=rule, severity="warning", message=message)]


def _info(rule: str, message: str) -> list[RuleHit]:
    return [RuleHit(rule=rule, severity="info", message=message)]


def current_congress(today: date) -> int:
    """The Congress sitting on ``today`` (the 119th sits in 2025-2026)."""
    return (today.year - 1789) // 2 + 1


def _int(value: str | None) -> int | None:
    return int(value) if value and value.isdigit() else None


# ---------------------------------------------------------------- case rules


def rule_future_year(rec: EyeciteRecord, ctx: RuleContext) -> list[RuleHit]:
    """A decision year, or a year-volume (WL, neutral), after today's year."""
    years = [rec.year] if rec.year else []
    if rec.kind == "law" and _int(rec.groups.get("year")):  # session laws: "2031 N.C. Sess. Laws"
        years.append(int(rec.groups["year"] or 0))
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


def _series(rec: EyeciteRecord, ctx: RuleContext) -> SeriesInfo | None:
    names = [e.short_name for e in rec.editions] or [rec.reporter]
    found = [ctx.volumes.get(n) for n in names]
    series = [s for s in found if s is not None]
    # Only when every candidate edition is the same series (no ambiguous abbreviation).
    return series[0] if series and len(set(names)) == 1 else None


def _db_range(ed: EditionInfo, ctx: RuleContext) -> str:
    return f"{ed.short_name} {ed.start_year or '?'}-{ed.end_year or 'now'}"


def rule_edition_year(rec: EyeciteRecord, ctx: RuleContext) -> list[RuleHit]:
    """The year must fall in the edition's years; `invalid` only when both sources agree."""
    if rec.year is None or rec.year > ctx.today.year or not rec.editions:
        return []
    if _nominative_us(rec, ctx):
        return []
    for ed in rec.editions:
        if (ed.start_year or 0) <= rec.year <= (ed.end_year or ctx.today.year + 1):
            return []
    db = "; ".join(_db_range(ed, ctx) for ed in rec.editions)
    series = _series(rec, ctx)
    if series is None:
        return _warn(
            "edition_year",
            f"reporters-db dates {db}, not {rec.year} (no second source to confirm it)",
        )
    if series.in_years(rec.year):
        return _info(
            "edition_year",
            f"reporters-db dates {db}, but {series.name} was published {series.years_text()}:"
            f" {rec.year} is possible",
        )
    return _err(
        "edition_year", f"{rec.reporter} was not published in {rec.year} ({series.years_text()})"
    )


def _court_ref(rec: EyeciteRecord, ctx: RuleContext) -> CourtRef | None:
    return resolve_court_ref(rec.court_text, ctx.rules) if rec.court_text else None


def _court_id(rec: EyeciteRecord, ctx: RuleContext) -> str | None:
    ref = _court_ref(rec, ctx)
    return ref.id if ref else None


def rule_unknown_court(rec: EyeciteRecord, ctx: RuleContext) -> list[RuleHit]:
    """A court string that names no court; "13th Cir." is impossible, others a warning."""
    ref = _court_ref(rec, ctx)
    if ref is None or ref.known or not rec.court_text:
        return []
    m = _CIRCUIT_RE.match(squash(rec.court_text))
    if m and not 1 <= int(m.group(1)) <= 11:
        return _err("unknown_court", f"there is no '{rec.court_text}' (circuits are 1st-11th)")
    return _warn("unknown_court", f"court '{rec.court_text}' is not a known court abbreviation")


def rule_court_not_yet(rec: EyeciteRecord, ctx: RuleContext) -> list[RuleHit]:
    """A court cited for a year before it first sat: `invalid` only for courts whose founding
    date is checked (11th Cir. 1981, Fed. Cir. 1982); any other is a note, since courts were
    renamed and reorganised (Kentucky's highest court was the Court of Appeals until 1976)."""
    court_id = _court_id(rec, ctx)
    info = court_info().get(court_id or "")
    if not info or not info.start or rec.year is None or rec.year >= info.start.year:
        return []
    founding = ctx.rules.get("court_founding").get(court_id)
    if founding and rec.year < int(founding["year"]):
        return _err(
            "court_not_yet",
            f"{rec.court_text} ({info.name}) was created in {founding['year']}, "
            f"cited for {rec.year} ({founding['source']})",
        )
    return _info(
        "court_not_yet",
        f"courts-db dates {info.name} from {info.start.year}; before then the court may have "
        f"had another name (not checked)",
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


def rule_volume_range(rec: EyeciteRecord, ctx: RuleContext) -> list[RuleHit]:
    """A volume beyond the last one the series has (closed) or can have by today (open)."""
    series, vol = _series(rec, ctx), _int(rec.groups.get("volume"))
    if series is None or vol is None:
        return []
    ceiling = series.volume_ceiling(ctx.today)
    if series.closed_at is not None and vol > series.closed_at:
        return _err(
            "volume_range",
            f"{series.name} ended at volume {series.closed_at} ({series.years_text()})",
        )
    if ceiling is not None and vol > ceiling and series.known:
        return _err(
            "volume_range",
            f"{vol} {series.name} cannot exist yet: volume {series.known[0]} is from "
            f"{series.known[1]}, and at most {series.max_per_year} a year are published",
        )
    if series.known and series.known[0] > 1 and vol > series.known[0]:
        return _info(
            "volume_range",
            f"beyond the last volume this table knows ({series.known[0]} {series.name}, "
            f"{series.known[1]}; table of {ctx.volumes.as_of.isoformat()}): not checked",
        )
    return []


def rule_volume_year(rec: EyeciteRecord, ctx: RuleContext) -> list[RuleHit]:
    """A year outside the years of the anchor citations around the volume (volumes only grow)."""
    series, vol = _series(rec, ctx), _int(rec.groups.get("volume"))
    if series is None or vol is None or rec.year is None or vol <= series.nominative_max_volume:
        return []
    below, above = series.year_bracket(vol)
    slack = ctx.volumes.anchor_slack
    name = series.name
    if below and rec.year < below[1] - slack:
        return _err(
            "volume_year",
            f"{vol} {name} is later than {below[0]} {name} ({below[1]}): "
            f"it cannot hold a {rec.year} decision",
        )
    if above and rec.year > above[1] + slack:
        return _err(
            "volume_year",
            f"{vol} {name} is earlier than {above[0]} {name} ({above[1]}): "
            f"it cannot hold a {rec.year} decision",
        )
    return []


def rule_page_ceiling(rec: EyeciteRecord, ctx: RuleContext) -> list[RuleHit]:
    """A page far beyond what any volume of the series holds (a warning: a heuristic)."""
    series, page = _series(rec, ctx), _int(rec.groups.get("page"))
    if series is None or page is None or not series.max_page or page <= series.max_page:
        return []
    return _warn(
        "page_ceiling",
        f"page {page:,} is far beyond any {series.name} volume (none runs near "
        f"{series.max_page:,} pages)",
    )


def rule_pin_before_page(rec: EyeciteRecord, ctx: RuleContext) -> list[RuleHit]:
    """A pin cite before the first page of the case (483, 480)."""
    page = _int(rec.groups.get("page"))
    m = _PIN.match(rec.pin_cite or "")
    if page is None or not m or int(m.group(1)) >= page:
        return []
    return _err("pin_before_page", f"pin cite {m.group(1)} is before the first page {page}")


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
    rule_volume_range,
    rule_volume_year,
    rule_page_ceiling,
    rule_pin_before_page,
    rule_westlaw_year,
    rule_il_neutral,
]


# ---------------------------------------------------------------- law rules


def rule_usc_title(rec: EyeciteRecord, ctx: RuleContext) -> list[RuleHit]:
    """U.S.C. titles are 1-54, with 53 reserved."""
    title = _int(rec.groups.get("title"))
    if rec.reporter not in {"U.S.C.", "U.S.C.A.", "U.S.C.S."} or title is None:
        return []
    hit = title_hit("usc_title", ctx.rules.get("usc_titles"), title, "the U.S. Code")
    return [hit] if hit else []


def rule_cfr_title(rec: EyeciteRecord, ctx: RuleContext) -> list[RuleHit]:
    """C.F.R. titles are 1-50 (eyecite puts the title in the 'chapter' group)."""
    title = _int(rec.groups.get("chapter") or rec.groups.get("title"))
    if rec.reporter != "C.F.R." or title is None:
        return []
    hit = title_hit("cfr_title", ctx.rules.get("cfr_titles"), title, "the C.F.R.")
    return [hit] if hit else []


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
