"""The rule-based findings of one item, by kind: what :func:`run_checks` found, named.

Each kind has a row in the answer-rules table (``legal_judge/data/answer_rules.v1.toml``) that says
what it does to the item's decision. :data:`FINDING_SOURCES` says which field of the checks each
kind comes from; a test walks the checks' models and fails when a field that can fire has no kind
here, and when a kind has no row in the table.

Findings are read from the checks as stored with a result (the dict of
``benchmark.item_checks.run_item_checks``), so a stored result is explained by what it holds.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, get_args

from legal_judge.checks.report import CitationStatus

__all__ = ["CITATION_KINDS", "FINDING_SOURCES", "Finding", "item_findings"]

#: ``citation_<status>`` for every status a citation finding can have.
CITATION_KINDS: dict[str, str] = {f"citation_{status}": status
                                  for status in get_args(CitationStatus)}

#: Every finding kind and the field of the checks it comes from.
FINDING_SOURCES: dict[str, str] = {
    **{kind: f"citations.findings[].status == {status!r}"
       for kind, status in CITATION_KINDS.items()},
    "citation_lookup_failed": "lookup_error",
    "hedging_only": "hedging.hedging_only",
    "refusal": "refusal.refused (an adversarial item)",
    "refusal_partial": "refusal.partial",
    "refusal_unexpected": "refusal.refused (an item that is not adversarial)",
    "adversarial_not_refused": "adversarial and not refusal.refused",
    "jurisdiction_different": "jurisdiction.mismatch",
    "jurisdiction_missing": "jurisdiction.unaddressed",
    "jurisdiction_also_foreign": "jurisdiction.foreign (without a mismatch)",
    "language_not_english": "language (benchmark.item_checks.detect_language)",
}

_SHOWN = 3


@dataclass(frozen=True)
class Finding:
    """One rule-based finding: its kind and what it found, in words."""

    kind: str
    detail: str


def _citation_findings(found: dict[str, Any], reasons: list[str]) -> list[Finding]:
    report = found.get("citations") or {}
    out = []
    for kind, status in CITATION_KINDS.items():
        if not (report.get("counts") or {}).get(status):
            continue
        # The forcing reasons name the rule that fired ("invalid: 14 F.4th 882 (...)").
        why = [r for r in report.get("forcing_reasons") or reasons if r.startswith(f"{status}:")]
        texts = [str(f.get("text")) for f in report.get("findings") or []
                 if f.get("status") == status]
        out.append(Finding(kind, "; ".join(why[:_SHOWN]) or ", ".join(texts[:_SHOWN])))
    return out


def _refusal_findings(found: dict[str, Any]) -> list[Finding]:
    refusal = found.get("refusal") or {}
    said = "; ".join(f'"{e.get("text")}"' for e in (refusal.get("evidence") or [])[:_SHOWN])
    adversarial = bool(found.get("adversarial"))
    if refusal.get("refused"):
        if refusal.get("partial"):
            return [Finding("refusal_partial", said)]
        return [Finding("refusal" if adversarial else "refusal_unexpected", said)]
    if adversarial:
        return [Finding("adversarial_not_refused", "no refusal phrase in the answer")]
    return []


def _jurisdiction_findings(found: dict[str, Any]) -> list[Finding]:
    j = found.get("jurisdiction") or {}
    message = str(j.get("message") or "")
    if j.get("mismatch"):
        return [Finding("jurisdiction_different", message)]
    if j.get("unaddressed"):
        return [Finding("jurisdiction_missing", message)]
    if j.get("foreign"):
        return [Finding("jurisdiction_also_foreign", message)]
    return []


def item_findings(checks: dict[str, Any] | None) -> list[Finding]:
    """The findings in an item's stored checks, in the table's order of kinds.

    Args:
        checks: ``EnsembleResult.checks`` (``{"findings": ChecksResult as a dict, "language":
            ..., ...}``); empty when the run ran no checks.

    Returns:
        One :class:`Finding` per kind present (none for a run without checks).
    """
    if not checks:
        return []
    found = checks.get("findings") or {}
    out: list[Finding] = []
    if checks.get("forces_citation_zero") and not found:
        # Checks given without their findings (a caller's own, or a result stored before the
        # findings were kept): the flag is all there is to go on, and rule 1 still holds.
        out.append(Finding("citation_invalid", "; ".join(list(checks.get("reasons") or [])[:3])))
    if found:
        out += _citation_findings(found, list(checks.get("reasons") or []))
        if found.get("lookup_error"):
            out.append(Finding("citation_lookup_failed", str(found["lookup_error"])))
        hedging = found.get("hedging") or {}
        if hedging.get("hedging_only"):
            out.append(Finding("hedging_only",
                               f"tells the user to consult a lawyer with "
                               f"{hedging.get('substantive_words', 0)} other words and "
                               f"{hedging.get('legal_signals', 0)} legal signals"))
        out += _refusal_findings(found) + _jurisdiction_findings(found)
    language = checks.get("language")
    if isinstance(language, str) and language and language != "en":
        out.append(Finding("language_not_english", f"answer language: {language}"))
    return out
