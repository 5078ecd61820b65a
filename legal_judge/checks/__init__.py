"""Rule-based legal checks: citations (eyecite, reporters-db, courts-db, optional CourtListener
lookup), refusal and hedging detection, jurisdiction detection.

The ensemble runner calls :func:`run_checks` once per item.
"""

from legal_judge.checks.citations import CitationLookup, LookupQuery, check_citations
from legal_judge.checks.courtlistener import CourtListenerLookup, InMemoryLookupCache, LookupCache
from legal_judge.checks.jurisdiction import (
    JurisdictionFinding,
    detect_jurisdictions,
    jurisdiction_mismatch,
    normalise_jurisdiction,
)
from legal_judge.checks.refusal import (
    HedgingFinding,
    RefusalFinding,
    detect_hedging_only,
    detect_refusal,
)
from legal_judge.checks.report import (
    FORCING_STATUSES,
    CitationFinding,
    CitationReport,
    LookupInfo,
    RuleHit,
)
from legal_judge.checks.run import ChecksResult, run_checks

__all__ = [
    "FORCING_STATUSES",
    "ChecksResult",
    "CitationFinding",
    "CitationLookup",
    "CitationReport",
    "CourtListenerLookup",
    "HedgingFinding",
    "InMemoryLookupCache",
    "JurisdictionFinding",
    "LookupCache",
    "LookupInfo",
    "LookupQuery",
    "RefusalFinding",
    "RuleHit",
    "check_citations",
    "detect_hedging_only",
    "detect_jurisdictions",
    "detect_refusal",
    "jurisdiction_mismatch",
    "normalise_jurisdiction",
    "run_checks",
]
