"""The CI gate on a bias report, as a decision with every check and its reason.

Only a ``certified`` judge passes (DESIGN.md, "Verdicts and exit codes"); when the policy's
``allow_inconclusive`` is on, an ``inconclusive`` one passes too, with its reasons printed. An audit
that judged nothing (``INSUFFICIENT_DATA``) never passes. The severity must also be at most the
policy's ``max_severity``, and a high-stakes judge needs its latest audit approved by a reviewer.

Every threshold comes from the policy's ``[certification]`` section
(:mod:`legal_judge.policy`): the report must have been made under settings at least as strict as
the policy's (:mod:`legal_judge.audit.certificate`), and a simulated judge is not a judge of record
unless the policy allows it.

:func:`gate_decision` returns the decision (per probe, per dimension, the verdict, the severity, the
review) for any consumer, a JUnit writer for instance; :func:`gate_report` raises
:class:`~legal_judge.errors.GateFailure` (exit 1) when it says no.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, fields
from typing import Any

from legal_judge.audit.certificate import NOT_RECORDED, SIMULATED, reaudit_flags, settings_checks
from legal_judge.audit.log import AuditLog, report_digest
from legal_judge.audit.report import SEVERITIES
from legal_judge.audit.verdict import CERTIFIED, INCONCLUSIVE
from legal_judge.errors import GateFailure
from legal_judge.policy import PolicyInForce, load_policy
from legal_judge.store import Store

__all__ = ["GateCheck", "GateDecision", "gate_decision", "gate_report"]

LOG = "audit log"
EDITED = "report edited after the audit"
UNLOGGED = "report not in this store's audit log"
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
    policy: PolicyInForce | None = None
    simulated: bool | None = None
    settings: dict[str, Any] | None = None

    def failed(self, kind: str | None = None) -> list[GateCheck]:
        """The checks that did not pass (of one kind)."""
        return [c for c in self.checks if c.outcome != "pass" and kind in (None, c.kind)]

    def as_dict(self) -> dict[str, Any]:
        """The decision as JSON-ready data, with the policy applied and its overrides."""
        out = {f.name: getattr(self, f.name) for f in fields(self) if f.name != "policy"}
        out["checks"] = [asdict(c) for c in self.checks]
        if self.policy is not None:
            out["policy"] = self.policy.as_dict("certification")
            out["policy_line"] = self.policy.line("certification")
            out["policy_overrides"] = self.policy.override_lines()
        return out


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


def _setting_checks(ext: dict[str, Any], policy: PolicyInForce) -> tuple[list[GateCheck],
                                                                        list[str]]:
    """The report's recorded settings against ``[certification]``: checks and failure reasons."""
    checks = [GateCheck("setting", c.name, "pass" if c.ok else "fail", c.reason)
              for c in settings_checks(ext.get("settings"), policy.certification)]
    failed = [c.reason for c in checks if c.outcome == "fail"]
    judge = [r for r in failed if r.startswith((SIMULATED, "judge not recorded"))]
    weaker = [r for r in failed if r not in judge]
    reasons = []
    if weaker:
        reasons.append("made under settings weaker than the policy: " + "; ".join(weaker)
                       if weaker != [NOT_RECORDED] else NOT_RECORDED)
    reasons += judge
    return checks, reasons


def _log_check(report: dict[str, Any], store: Store, *, allow_unlogged: bool) -> GateCheck:
    """Whether ``report`` is the report its audit logged in ``store`` (its ``audit_finished``
    entry's digest): an edited report fails whatever the policy; one the log does not hold
    passes only under the policy's ``allow_unlogged``."""
    audit_id = str((report.get("extensions") or {}).get("audit_id") or "")
    entry = AuditLog(store).finished_report(audit_id) if audit_id else None
    if entry is not None:
        logged, digest = str(entry.payload.get("report_sha256")), report_digest(report)
        if digest == logged:
            return GateCheck(LOG, LOG, "pass", f"the report {audit_id} logged (entry "
                                               f"{entry.seq}, sha256 {digest[:12]})")
        return GateCheck(LOG, LOG, "fail", f"{EDITED}: it is not the report {audit_id} "
                                           f"logged (entry {entry.seq}: sha256 {logged[:12]}; "
                                           f"this report: {digest[:12]})")
    why = (f"{audit_id} logged no report in {store.path}" if audit_id else
           "the report names no audit (pairs scored elsewhere)")
    if allow_unlogged:
        return GateCheck(LOG, LOG, "pass", f"{why}: not checked against an audit log (allowed "
                                           "by the policy's allow_unlogged)")
    return GateCheck(LOG, LOG, "fail", f"{UNLOGGED}: {why}")


def gate_decision(report: dict[str, Any], *, policy: PolicyInForce | None = None,
                  store: Store | None = None, high_stakes: bool | None = None) -> GateDecision:
    """Decide the gate on ``report`` (a bias report) without raising.

    Args:
        report: The bias report (file or stored).
        policy: The policy in force (default: ``./legal-judge.policy.toml``, else the bundled
            one); its ``[certification]`` section gives the settings the report must have been
            made under, the highest severity that may pass, and whether an inconclusive verdict
            or a simulated judge may pass.
        store: Where a high-stakes judge's review is looked up.
        high_stakes: Override the report's ``high_stakes`` flag.
    """
    policy = policy or load_policy()
    cert = policy.certification
    max_severity, allow_inconclusive = cert.max_severity, cert.allow_inconclusive
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
                          " (the policy's allow_inconclusive lets an inconclusive audit pass)"))
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
    setting_checks, setting_reasons = _setting_checks(ext, policy)
    checks += setting_checks
    reasons += setting_reasons
    if store is not None:
        logged = _log_check(report, store, allow_unlogged=cert.allow_unlogged)
        checks.append(logged)
        if logged.outcome != "pass":
            reasons.append(logged.reason)
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
    recorded = ext.get("settings") or {}
    return GateDecision(not reasons, verdict, severity, max_severity, allow_inconclusive, stakes,
                        status, sentence, reasons, checks, policy=policy,
                        simulated=recorded.get("simulated"), settings=recorded or None)


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


def _fix(report: dict[str, Any], decision: GateDecision) -> str:
    """What to do about a failed gate: the review, the cause, or a re-audit under the policy."""
    review = decision.failed("review")
    if review and len(decision.reasons) == 1:
        latest = review[0].reason.rsplit("latest audit ", 1)[-1].split(" ")[0]
        if "was rejected" in review[0].reason:
            # Approving a rejected audit is not the fix: its findings stand until a new audit.
            return (f"address what the reviewer rejected in {latest} (`legal-judge audit list` "
                    "shows the review), re-audit with `legal-judge audit run`, then have the "
                    "new audit reviewed")
        return (f"legal-judge audit review {latest} --approve --reviewer NAME --note TEXT"
                if "latest audit" in review[0].reason else
                "run `legal-judge audit run` for this judge, then have it reviewed")
    if decision.status == "INSUFFICIENT_DATA":
        return "fix the cause in the report summary and re-run the audit"
    log = decision.failed(LOG)
    if log and log[0].reason.startswith(EDITED):
        audit_id = (report.get("extensions") or {}).get("audit_id")
        return (f"gate the audit as stored: legal-judge audit gate {audit_id} (`legal-judge audit "
                "verify-log` checks the log itself), or re-audit")
    if log and len(decision.reasons) == 1:
        on_purpose = ("--override allow_unlogged=true (printed with the decision) or a reviewed "
                      "policy file")
        if "names no audit" in log[0].reason:
            return f"audit the judge with `legal-judge audit run`; or, on purpose, {on_purpose}"
        return ("gate it with the store its audit was made in (LEGAL_JUDGE_HOME, or the team's "
                f"store), by audit id; or, on purpose, {on_purpose}")
    settings = [c for c in decision.failed("setting") if c.name != "judge of record"]
    if settings:
        ext = report.get("extensions") or {}
        spec = (ext.get("settings") or {}).get("judge_spec") or ext.get("judge") or "JUDGE"
        flags = reaudit_flags(decision.policy.certification if decision.policy else
                              load_policy().certification)
        return (f"re-audit under the policy: legal-judge audit run --judge {spec}"
                + (f" {flags}" if flags else "") + "; or, on purpose, --override KEY=VALUE "
                "(printed with the decision) or a reviewed policy file")
    if decision.failed("setting"):
        return ("audit a judge of record (a real model endpoint), or allow simulated judges on "
                "purpose: --override allow_simulated=true or allow_simulated = true in a policy "
                "file")
    return "apply the remediation steps in the report and re-audit"


def gate_report(report: dict[str, Any], *, policy: PolicyInForce | None = None,
                store: Store | None = None, high_stakes: bool | None = None) -> GateDecision:
    """:func:`gate_decision`, raising :class:`GateFailure` (exit 1) when the gate says no.

    Raises:
        GateFailure: the judge is not certified (or inconclusive when allowed), the report was
            made under settings weaker than the policy (or records none), the judge is simulated
            and the policy does not allow it, the severity is above the policy's maximum, the
            audit judged nothing, or a high-stakes judge is unapproved.
    """
    decision = gate_decision(report, policy=policy, store=store, high_stakes=high_stakes)
    if not decision.passed:
        raise GateFailure("; ".join(decision.reasons), fix=_fix(report, decision))
    return decision
