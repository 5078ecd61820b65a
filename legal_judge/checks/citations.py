"""Citation verification: text in, a :class:`CitationReport` out.

Pipeline: collapse whitespace (keeping an offset map) -> eyecite (court lookup memoised) ->
regex layer for what eyecite misses -> each case citation keeps only its own parenthetical and
case name -> rules from ``citation_rules.v3.yaml`` -> optional online
lookup (CourtListener) for case citations that passed offline. Offline, a well-formed
citation is ``unverifiable``: offline rules can prove a citation impossible, never real.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import date
from functools import cache
from importlib.metadata import PackageNotFoundError, version
from typing import Protocol

from pydantic import BaseModel, ConfigDict

from legal_judge.checks.case_names import name_before, previous_end
from legal_judge.checks.citation_regex import RegexCite, find_us_regex
from legal_judge.checks.citation_rules import CASE_RULES, LAW_RULES, RuleContext
from legal_judge.checks.courts import court_display_name, resolve_court_ref
from legal_judge.checks.designators import canonical_shape_hit, code_section_hit
from legal_judge.checks.eyecite_layer import (
    CleanText,
    EyeciteRecord,
    clean_whitespace,
    extract,
    settle,
)
from legal_judge.checks.fabrications import mark_known_fabrications
from legal_judge.checks.foreign_regex import find_foreign_regex
from legal_judge.checks.report import (
    FORCING_STATUSES,
    CitationFinding,
    CitationKind,
    CitationReport,
    CitationStatus,
    LookupInfo,
    RuleHit,
)
from legal_judge.checks.rules_data import load_rules
from legal_judge.checks.statute_forms import admin_canonical, find_statute_forms
from legal_judge.checks.statute_regex import closed_code_hit

__all__ = ["CitationLookup", "LookupQuery", "check_citations", "checker_version"]

_STATUSES: tuple[CitationStatus, ...] = (
    "invalid",
    "mismatch",
    "not_found",
    "suspicious",
    "ambiguous",
    "unverifiable",
    "verified",
)


class LookupQuery(BaseModel):
    """One case citation to look up online."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    normalized: str
    reporter: str
    case_name: str | None = None


class CitationLookup(Protocol):
    """An online citation database (CourtListener, or a fake in tests)."""

    def lookup(self, queries: Sequence[LookupQuery]) -> dict[str, LookupInfo]:
        """Return what the database says, keyed by ``LookupQuery.normalized``."""
        ...


@cache
def checker_version() -> str:
    """Version string of the checker and the libraries whose data it depends on."""
    parts = ["legal-judge-checks/3"]
    for pkg in ("eyecite", "reporters-db", "courts-db"):
        try:
            parts.append(f"{pkg}/{version(pkg)}")
        except PackageNotFoundError:
            parts.append(f"{pkg}/?")
    return " ".join(parts)


def _status_from_hits(hits: list[RuleHit]) -> CitationStatus:
    if any(h.severity == "error" for h in hits):
        return "invalid"
    if any(h.severity == "warning" for h in hits):
        return "suspicious"
    return "unverifiable"


_LAW_KINDS: dict[str, CitationKind] = {
    "C.F.R.": "regulation",
    "FR": "regulation",
    "Fed. Reg.": "regulation",
    "Pub. L.": "public_law",
}


def _scotus_name(rec: EyeciteRecord, ctx: RuleContext) -> str | None:
    """U.S., S. Ct. and L. Ed. cite the Supreme Court without a court in the parenthetical."""
    if rec.kind == "case" and rec.reporter in ctx.rules.get("reporter_court")["scotus_only"]:
        return "Supreme Court of the United States"
    return None


def _from_record(rec: EyeciteRecord, ctx: RuleContext, parallel_to: int | None) -> CitationFinding:
    rules = CASE_RULES if rec.kind == "case" else LAW_RULES if rec.kind == "law" else []
    hits = [hit for rule in rules for hit in rule(rec, ctx)]
    kind: CitationKind = (
        "case"
        if rec.kind == "case"
        else "journal"
        if rec.kind == "journal"
        else _LAW_KINDS.get(rec.reporter, "statute")
    )
    normalized = rec.normalized
    if rec.kind == "law":
        shape = code_section_hit(rec.reporter, rec.groups.get("section"), rec.normalized, ctx.rules)
        hits += [shape] if shape else []
        admin = admin_canonical(rec.reporter, rec.groups.get("title"), rec.groups.get("section"),
                                ctx.rules)
        if admin:
            kind, normalized = "admin_code", admin
    if kind == "statute" and "§" in rec.text:
        hit = closed_code_hit(rec.text.split("§")[0].strip(" ,"), ctx.rules)
        if hit:
            hits.append(hit)
    ref = resolve_court_ref(rec.court_text, ctx.rules) if rec.court_text else None
    court = ref.id if ref else None
    return CitationFinding(
        text=rec.text,
        span=rec.span,
        normalized=normalized,
        kind=kind,
        source="eyecite",
        status=_status_from_hits(hits),
        reasons=hits,
        case_name=rec.case_name,
        year=rec.year,
        court=court or rec.court_text,
        court_name=court_display_name(ref, ctx.rules) or _scotus_name(rec, ctx),
        parallel_to=parallel_to,
    )


def _from_regex(cite: RegexCite, clean: CleanText, floor: int,
                ctx: RuleContext) -> CitationFinding:
    if not any(h.rule == "designator_shape" for h in cite.hits):
        shape = canonical_shape_hit(cite.normalized, ctx.rules)
        cite.hits += [shape] if shape else []
    name = cite.case_name
    if name is None and cite.kind == "case":
        name = name_before(clean.text, cite.span[0], floor).name
    return CitationFinding(
        text=cite.text,
        span=clean.original_span(*cite.span),
        normalized=cite.normalized,
        kind=cite.kind,
        source="regex",
        status=_status_from_hits(cite.hits),
        reasons=cite.hits,
        case_name=name,
        year=cite.year,
        court=cite.court,
    )


def _offline_findings(clean: CleanText, ctx: RuleContext) -> list[CitationFinding]:
    found = extract(clean)
    records = found.records
    taken = [rec.clean_span for rec in records]
    regex_cites = find_us_regex(clean.text, taken, ctx)
    regex_cites += find_statute_forms(clean.text, taken + [c.span for c in regex_cites], ctx)
    regex_cites += find_foreign_regex(clean.text, ctx)
    spans = found.spans + [c.span for c in regex_cites]
    settle(records, spans, clean.text)
    findings: list[CitationFinding] = []
    group_head: int | None = None
    for rec in records:
        parallel_to = group_head if rec.parallel else None
        if rec.kind == "case" and not rec.parallel:
            group_head = len(findings)
        # Parallel citations share the year in the closing parenthetical; give it to each.
        if rec.parallel and rec.year is None and parallel_to is not None:
            rec.year = findings[parallel_to].year
        findings.append(_from_record(rec, ctx, parallel_to))
    ends = sorted(b for _, b in spans)
    findings.extend(_from_regex(c, clean, previous_end(ends, c.span[0]), ctx)
                    for c in regex_cites)
    heads = {id(f): findings[f.parallel_to] for f in findings if f.parallel_to is not None}
    findings.sort(key=lambda f: f.span)
    # parallel_to points into the sorted list (regex findings may sort before a case group).
    where = {id(f): i for i, f in enumerate(findings)}
    for f in findings:
        if f.parallel_to is not None:
            f.parallel_to = where[id(heads[id(f)])]
    return findings


def _lookup_status(finding: CitationFinding, info: LookupInfo) -> CitationStatus:
    if info.http_status == 200:
        return "mismatch" if info.name_match is False else "verified"
    if info.http_status == 300:
        if info.name_match is False:
            return "mismatch"
        return "verified" if len(info.matched_cluster_ids) == 1 else "ambiguous"
    if info.http_status == 404:
        # The specification counts a 404 as not found, Westlaw/Lexis numbers included (Mata's
        # fabrications were WL cites); the reason says when coverage is partial so a reviewer
        # checks the citation in Westlaw before accepting the forced zero.
        return "not_found"
    return finding.status


def _weak_reporter(finding: CitationFinding, weak: set[str]) -> str | None:
    reporter = finding.normalized.split(" ", 1)[-1].rsplit(" ", 1)[0]
    return reporter if reporter in weak else None


def _lookup_reason(status: CitationStatus, info: LookupInfo,
                   weak_reporter: str | None = None) -> RuleHit | None:
    if status == "not_found":
        message = info.message or "not in CourtListener"
        if weak_reporter:
            message += (f" (CourtListener covers {weak_reporter} citations only in part: confirm "
                        "in the vendor's database before relying on this)")
        return RuleHit(rule="lookup_not_found", severity="error", message=message)
    if status == "mismatch":
        names = "; ".join(info.case_names[:3]) or "another case"
        return RuleHit(
            rule="lookup_mismatch", severity="error", message=f"this volume/page is {names}"
        )
    if info.message:
        return RuleHit(rule="lookup", severity="info", message=info.message)
    return None


def _apply_lookup(
    findings: list[CitationFinding], lookup: CitationLookup, ctx: RuleContext
) -> None:
    todo = [
        f for f in findings if f.kind == "case" and f.source == "eyecite" and f.status != "invalid"
    ]
    if not todo:
        return
    queries = [
        LookupQuery(
            normalized=f.normalized,
            reporter=f.normalized.split(" ", 1)[-1].rsplit(" ", 1)[0],
            case_name=f.case_name,
        )
        for f in todo
    ]
    answers = lookup.lookup(queries)
    weak = set(ctx.rules.get("lookup")["weak_coverage_reporters"])
    for finding in todo:
        info = answers.get(finding.normalized)
        if info is None:
            continue
        finding.lookup = info
        status = _lookup_status(finding, info)
        reason = _lookup_reason(status, info, _weak_reporter(finding, weak))
        if reason:
            finding.reasons.append(reason)
        finding.status = status


def _verify_hint(finding: CitationFinding, lookup_used: bool, ctx: RuleContext) -> str | None:
    """What would verify an unverifiable citation (every such row says it)."""
    if finding.status not in {"unverifiable", "ambiguous"}:
        return None
    hints = ctx.rules.get("verify_hints")
    if finding.kind == "case":
        if finding.source == "regex":
            return hints["case_uncovered"]
        return hints["case_lookup_done"] if lookup_used else hints["case_lookup"]
    return hints.get(finding.kind) or hints["statute"]


def _summarise(
    findings: list[CitationFinding], lookup_used: bool, ctx: RuleContext
) -> CitationReport:
    counts: dict[str, int] = {s: 0 for s in _STATUSES}
    for f in findings:
        counts[f.status] += 1
        f.verify = _verify_hint(f, lookup_used, ctx)
    forcing = []
    for f in findings:
        if f.status in FORCING_STATUSES:
            why = "; ".join(h.message for h in f.reasons if h.severity == "error") or f.status
            forcing.append(f"{f.status}: {f.text} ({why})")
    return CitationReport(
        findings=findings,
        counts=counts,
        forces_zero=bool(forcing),
        forcing_reasons=forcing,
        lookup_used=lookup_used,
        checker_version=checker_version(),
        rules_version=ctx.rules.version,
    )


def check_citations(
    text: str, *, today: date, lookup: CitationLookup | None = None
) -> CitationReport:
    """Find every legal citation in ``text`` and decide what can be known about it.

    Args:
        text: the answer (or any legal text) to check.
        today: the date the rules treat as "now" (future years, the sitting Congress).
        lookup: an online database client; None checks offline only.

    Returns:
        One finding per citation (spans in ``text``), counts by status, and ``forces_zero``
        when any citation is invalid, mismatched or not found.
    """
    ctx = RuleContext(rules=load_rules(), today=today)
    if not text.strip():  # eyecite refuses empty text; an empty answer cites nothing
        return _summarise([], lookup is not None, ctx)
    clean = clean_whitespace(text)
    findings = _offline_findings(clean, ctx)
    mark_known_fabrications(findings)
    if lookup is not None:
        _apply_lookup(findings, lookup, ctx)
    return _summarise(findings, lookup is not None, ctx)
