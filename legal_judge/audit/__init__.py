"""The judge bias audit: counterbalanced pairs, paired statistics, the JSON bias report, the log.

Modules: ``dimensions`` (dimensions as data + perturbations), ``design`` (the test grid and the
settings), ``target`` / ``generic`` (the judge under audit), ``execute`` (running an audit),
``analysis`` (statistics via :mod:`legal_judge.stats`), ``report`` (schema, severity, remediation),
``log`` (append-only hash chain), ``resume`` (continuing a stopped audit), ``history`` (drift,
review, gates), ``traffic`` (production traffic), ``assisted`` (LLM-written variants).
"""

from legal_judge.audit.analysis import DimensionStats, PairRow, analyse
from legal_judge.audit.design import AuditSettings, Design, TestPair, build_design
from legal_judge.audit.dimensions import Dimension, builtin_dimensions, resolve_dimensions
from legal_judge.audit.execute import AuditOutcome, run_audit
from legal_judge.audit.history import (
    audit_needed,
    diff_reports,
    fetch_prior_audit_results,
    gate_report,
    latest_audit,
    load_report,
    record_review,
    review_state,
)
from legal_judge.audit.log import AuditLog, VerifyResult
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
    "JudgeTarget",
    "PairRow",
    "TestPair",
    "VerifyResult",
    "analyse",
    "audit_needed",
    "build_design",
    "build_report",
    "builtin_dimensions",
    "diff_reports",
    "fetch_prior_audit_results",
    "gate_report",
    "latest_audit",
    "load_report",
    "load_targets",
    "record_review",
    "resolve_dimensions",
    "review_state",
    "run_audit",
    "traffic_audit",
    "validate_report",
]
