"""The judge bias audit: counterbalanced pairs, paired statistics, the JSON bias report, the log.

Modules: ``dimensions`` (dimensions as data + perturbations), ``design`` (the test grid and the
settings), ``target`` / ``generic`` (the judge under audit), ``execute`` (running an audit),
``analysis`` (statistics via :mod:`legal_judge.stats`), ``report`` (schema, severity, remediation),
``log`` (append-only hash chain), ``resume`` (continuing a stopped audit), ``history`` (base judges,
drift, review, coverage), ``gate`` (the CI gate), ``traffic`` (production traffic), ``assisted``
(LLM-written variants), ``probes`` / ``discrimination`` (the discrimination probes and their
statistics), ``verdict`` (equivalence, degenerate judges, the verdict).
"""

from legal_judge.audit.analysis import DimensionStats, PairRow, analyse
from legal_judge.audit.design import AuditSettings, Design, TestPair, build_design
from legal_judge.audit.dimensions import Dimension, builtin_dimensions, resolve_dimensions
from legal_judge.audit.execute import AuditOutcome, run_audit
from legal_judge.audit.gate import GateCheck, GateDecision, gate_decision, gate_report
from legal_judge.audit.history import (
    audit_coverage,
    audit_needed,
    check_comparable,
    diff_reports,
    fetch_prior_audit_results,
    latest_audit,
    load_report,
    prior_audit,
    record_review,
    review_state,
)
from legal_judge.audit.log import AuditLog, VerifyResult
from legal_judge.audit.probes import Probe, builtin_probes, resolve_probes
from legal_judge.audit.report import build_report, validate_report
from legal_judge.audit.target import AuditTarget, JudgeTarget, load_targets
from legal_judge.audit.traffic import traffic_audit

__all__ = [
    "AuditLog",
    "AuditOutcome",
    "AuditSettings",
    "AuditTarget",
    "Design",
    "Dimension",
    "DimensionStats",
    "GateCheck",
    "GateDecision",
    "JudgeTarget",
    "PairRow",
    "Probe",
    "TestPair",
    "VerifyResult",
    "analyse",
    "audit_coverage",
    "audit_needed",
    "build_design",
    "build_report",
    "builtin_dimensions",
    "builtin_probes",
    "check_comparable",
    "diff_reports",
    "fetch_prior_audit_results",
    "gate_decision",
    "gate_report",
    "latest_audit",
    "load_report",
    "load_targets",
    "prior_audit",
    "record_review",
    "resolve_dimensions",
    "resolve_probes",
    "review_state",
    "run_audit",
    "traffic_audit",
    "validate_report",
]
