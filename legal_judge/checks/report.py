"""Pydantic types of the citation report (the boundary the ensemble, store and CLI see)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

__all__ = [
    "FORCING_STATUSES",
    "CitationFinding",
    "CitationKind",
    "CitationReport",
    "CitationStatus",
    "LookupInfo",
    "RuleHit",
    "Severity",
]

Severity = Literal["error", "warning", "info"]
CitationStatus = Literal[
    "invalid", "suspicious", "unverifiable", "verified", "mismatch", "not_found", "ambiguous"
]
CitationKind = Literal[
    "case",
    "statute",
    "regulation",
    "public_law",
    "session_law",
    "legislative",
    "constitution",
    "rule",
    "journal",
    "uk_neutral",
    "ecli",
    "celex",
    "eu_act",
    "law_no",
    "fr_code",
    "pourvoi",
    "uk_report",
    "eu_article",
    "admin_code",
    "court_rule",
]

# Statuses that mean "a fabricated or misattributed source": rubric 1 forces citation_quality = 0.
FORCING_STATUSES: frozenset[str] = frozenset({"invalid", "mismatch", "not_found"})


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class RuleHit(_Strict):
    """One rule that fired on one citation."""

    rule: str
    severity: Severity
    message: str


class LookupInfo(_Strict):
    """What the online lookup (CourtListener) said about one case citation."""

    source: str = "courtlistener"
    http_status: int
    case_names: list[str] = Field(default_factory=list)
    cluster_ids: list[int] = Field(default_factory=list)
    matched_cluster_ids: list[int] = Field(default_factory=list)
    name_match: bool | None = None
    cached: bool = False
    message: str = ""


class CitationFinding(_Strict):
    """One legal citation found in the text, with its status and the reasons for it."""

    text: str
    span: tuple[int, int]
    normalized: str
    kind: CitationKind
    source: Literal["eyecite", "regex"]
    status: CitationStatus
    reasons: list[RuleHit] = Field(default_factory=list)
    case_name: str | None = None
    year: int | None = None
    court: str | None = None
    court_name: str | None = None
    parallel_to: int | None = None
    lookup: LookupInfo | None = None
    verify: str | None = None  # what would verify an unverifiable citation


class CitationReport(_Strict):
    """Every citation of one text, counted by status, and whether rubric 1 must be forced to 0."""

    findings: list[CitationFinding] = Field(default_factory=list)
    counts: dict[str, int] = Field(default_factory=dict)
    forces_zero: bool = False
    forcing_reasons: list[str] = Field(default_factory=list)
    lookup_used: bool = False
    checker_version: str
    rules_version: int
