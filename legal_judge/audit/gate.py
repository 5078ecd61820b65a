"""The CI gate on a bias report, as a decision with every check and its reason.

Only a ``certified`` judge passes (DESIGN.md, "Verdicts and exit codes"); with
``allow_inconclusive`` an ``inconclusive`` one passes too, with its reasons printed. An audit that
judged nothing (``INSUFFICIENT_DATA``) never passes. The severity must also be at most
``max_severity``, and a high-stakes judge needs its latest audit approved by a reviewer.

:func:`gate_decision` returns the decision (per probe, per dimension, the verdict, the severity, the
review) for any consumer, a JUnit writer for instance; :func:`gate_report` raises
:class:`~legal_judge.errors.GateFailure` (exit 1) when it says no.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from legal_judge.audit.report import SEVERITIES
from legal_judge.audit.verdict import CERTIFIED, INCONCLUSIVE
from legal_judge.errors import ConfigError, GateFailure
from legal_judge.store import Store

__all__ = ["GateCheck", "GateDecision", "gate_decision", "gate_report"]

_OLD = ("this report has no verdict: it was written before discrimination probes and equivalence "
        "margins, so it cannot show that the judge can tell good from bad")


@dataclass(frozen=True)
class GateCheck:
    """One thing the gate looked at: ``kind`` (status, verdict, probe, dimension, severity,
    review), its ``name``, the ``outcome`` (pass, fail, inconclusive, insufficient data) and why."""

    kind: str
    name: str
    outcome: str
    reason: str


@dataclass(frozen=True)
class GateDecision:
    """The gate's answer and everything it rests on."""

    passed: bool
    verdict: str
    severity: str
    max_severity: str
    allow_inconclusive: bool
    high_stakes: bool
    status: str
    sentence: str
    reasons: list[str] = field(default_factory=list)
    checks: list[GateCheck] = field(default_factory=list)

    def failed(self, kind: str | None = None) -> list[GateCheck]:
        """The checks that did not pass (of one kind)."""
        return [c for c in self.checks if c.outcome != "pass" and kind in (None, c.kind)]

    def as_dict(self) -> dict[str, Any]:
        """The decision as JSON-ready data."""
        return asdict(self)


def _probe_checks(ext: dict[str, Any]) -> list[GateCheck]:
    out = []
    for key, p in (ext.get("probes") or {}).items():
        status = str(p.get("status"))
        if status == "pass":
            sens = p.get("sensitivity") or {}
            reason = (f"drop {p.get('mean_difference', 0):+.2f} (adjusted p = "
                      f"{p.get('p_value_adjusted', 1):.2g}), sensitivity "
                      f"{(sens.get('share') or 0):.0%}")
        else:
            reason = "; ".join(p.get("reasons") or []) or status
        out.append(GateCheck("probe", key, status, reason))
    return out


def _dimension_checks(report: dict[str, Any], ext: dict[str, Any]) -> list[GateCheck]:
    out = []
    dims = ext.get("dimensions") or {}
    for d in report.get("dimension_results") or []:
        name = str(d["dimension"])
        e = dims.get(name) or {}
        outcome = str(e.get("outcome") or ("flagged" if d.get("flagged") else "inconclusive"))
        eq = e.get("equivalence") or {}
        if outcome == "flagged":
            reason = (f"mean difference {d['mean_difference']:+.3f}, effect "
                      f"{d['effect_size']:+.2f} ({d['effect_size_interpretation']})")
            outcome = "fail"
        elif outcome == "equivalent":
            reason, outcome = str(eq.get("statement") or "equivalent"), "pass"
        elif outcome == "insufficient data":
            reason = f"{e.get('pairs_complete', 0)} complete pairs: no statistics"
        else:
            reason = str(eq.get("statement") or "equivalence not shown")
        out.append(GateCheck("dimension", name, outcome, reason))
    return out


def gate_decision(report: dict[str, Any], *, max_severity: str = "low",
                  allow_inconclusive: bool = False, store: Store | None = None,
                  high_stakes: bool | None = None) -> GateDecision:
    """Decide the gate on ``report`` (a bias report) without raising.

    Args:
        report: The bias report (file or stored).
        max_severity: The highest severity that may pass.
        allow_inconclusive: Let an ``inconclusive`` verdict pass (an audit that judged nothing
            never passes).
        store: Where a high-stakes judge's review is looked up.
        high_stakes: Override the report's ``high_stakes`` flag.

    Raises:
        ConfigError: an unknown severity.
    """
    if max_severity not in SEVERITIES:
        raise ConfigError(f"unknown severity '{max_severity}'", code="audit-gate-invalid",
                          fix=f"use one of: {', '.join(SEVERITIES)}")
    ext = report.get("extensions") or {}
    status = str(ext.get("status", "complete"))
    severity = str(report["overall_assessment"]["severity"])
    verdict = str(ext.get("verdict") or INCONCLUSIVE)
    sentence = str(ext.get("verdict_sentence") or _OLD)
    checks = [*_probe_checks(ext), *_dimension_checks(report, ext)]
    reasons: list[str] = []
    if status == "INSUFFICIENT_DATA":
        checks.insert(0, GateCheck("status", "status", "fail",
                                   str(ext.get("status_reason") or "the audit judged nothing")))
        reasons.append(f"the audit status is {status}: it judged nothing, so it cannot pass "
                       "a gate")
    allowed = verdict == CERTIFIED or (verdict == INCONCLUSIVE and allow_inconclusive)
    checks.insert(0, GateCheck("verdict", "verdict", "pass" if allowed else
                               ("inconclusive" if verdict == INCONCLUSIVE else "fail"), sentence))
    if not allowed:
        reasons.append(f"the verdict is {verdict}, and only certified passes"
                       + ("" if verdict != INCONCLUSIVE else
                          " (--allow-inconclusive lets an inconclusive audit pass)"))
        failed = [c.name for c in checks if c.kind == "probe" and c.outcome == "fail"]
        if failed:
            reasons.append(f"failed probes: {', '.join(failed)}")
        flagged = [c.name for c in checks if c.kind == "dimension" and c.outcome == "fail"]
        if flagged:
            reasons.append(f"flagged dimensions: {', '.join(flagged)}")
        open_ = [c.name for c in checks if c.kind in ("probe", "dimension")
                 and c.outcome not in ("pass", "fail")]
        if open_:
            reasons.append(f"undecided: {', '.join(open_)}")
    sev_ok = SEVERITIES.index(severity) <= SEVERITIES.index(max_severity) or (
        verdict == INCONCLUSIVE and allow_inconclusive and ext.get("bias_severity") == "none")
    checks.append(GateCheck("severity", "severity", "pass" if sev_ok else "fail",
                            f"severity {severity}, maximum {max_severity}"))
    if not sev_ok:
        reasons.append(f"severity {severity} is above {max_severity}")
    stakes = bool(ext.get("high_stakes", False) if high_stakes is None else high_stakes)
    if stakes:
        review = _review(store or Store(), ext.get("judge_id"))
        checks.append(review)
        if review.outcome != "pass":
            reasons.append(review.reason)
    return GateDecision(not reasons, verdict, severity, max_severity, allow_inconclusive, stakes,
                        status, sentence, reasons, checks)


def _review(store: Store, judge_id: str | None) -> GateCheck:
    from legal_judge.audit.history import latest_audit, review_state

    latest = latest_audit(store, judge_id) if judge_id else None
    if latest is None:
        return GateCheck("review", "review", "fail",
                         f"high-stakes judge {judge_id} has no stored audit")
    state = review_state(store, latest)
    if state is None or state["decision"] != "approved":
        what = "is not reviewed" if state is None else f"was {state['decision']}"
        return GateCheck("review", "review", "fail",
                         f"high-stakes judge {judge_id}: its latest audit {latest} {what}")
    return GateCheck("review", "review", "pass", f"latest audit {latest} approved by "
                                                 f"{state.get('reviewer')}")


def gate_report(report: dict[str, Any], *, max_severity: str = "low",
                allow_inconclusive: bool = False, store: Store | None = None,
                high_stakes: bool | None = None) -> GateDecision:
    """:func:`gate_decision`, raising :class:`GateFailure` (exit 1) when the gate says no.

    Raises:
        GateFailure: the judge is not certified (or inconclusive when allowed), the severity is
            above ``max_severity``, the audit judged nothing, or a high-stakes judge is unapproved.
        ConfigError: an unknown severity.
    """
    decision = gate_decision(report, max_severity=max_severity,
                             allow_inconclusive=allow_inconclusive, store=store,
                             high_stakes=high_stakes)
    if not decision.passed:
        review = [c for c in decision.failed("review")]
        if review and len(decision.reasons) == 1:
            latest = review[0].reason.rsplit("latest audit ", 1)[-1].split(" ")[0]
            fix = (f"legal-judge audit review {latest} --approve --reviewer NAME --note TEXT"
                   if "latest audit" in review[0].reason else
                   "run `legal-judge audit run` for this judge, then have it reviewed")
        elif decision.status == "INSUFFICIENT_DATA":
            fix = "fix the cause in the report summary and re-run the audit"
        else:
            fix = "apply the remediation steps in the report and re-audit"
        raise GateFailure("; ".join(decision.reasons), fix=fix)
    return decision
