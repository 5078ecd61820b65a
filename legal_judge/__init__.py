"""legal-judge: LLM-as-judge for legal AI answers, with judge bias audits and human calibration.

The public API. Names are imported lazily (PEP 562) so ``legal-judge --help`` does not pay for
scipy, eyecite and the provider SDKs; ``from legal_judge import run_benchmark`` works as usual.
"""

from __future__ import annotations

import importlib
from typing import Any

__version__ = "0.1.0"

_EXPORTS: dict[str, str] = {
    "Assets": "legal_judge.assets.catalogue",
    "BenchmarkItem": "legal_judge.models",
    "CompletionRequest": "legal_judge.models",
    "CompletionResponse": "legal_judge.models",
    "EnsembleConfig": "legal_judge.benchmark.ensemble_config",
    "EnsemblePolicy": "legal_judge.benchmark.ensemble",
    "EnsembleResult": "legal_judge.models",
    "ItemSelection": "legal_judge.benchmark.inputs",
    "GateDecision": "legal_judge.audit.gate",
    "Judge": "legal_judge.judge.judge",
    "JudgeConfig": "legal_judge.judge.config",
    "LegalJudgeError": "legal_judge.errors",
    "Store": "legal_judge.store",
    "Verdict": "legal_judge.models",
    "aggregate": "legal_judge.benchmark.ensemble",
    "check_citations": "legal_judge.checks",
    "compare_runs": "legal_judge.benchmark.compare",
    "compute_weights": "legal_judge.benchmark.ensemble",
    "export_run": "legal_judge.benchmark.export",
    "family_of": "legal_judge.providers.families",
    "gate_decision": "legal_judge.audit.gate",
    "get_provider": "legal_judge.providers.registry",
    "judge_answer": "legal_judge.benchmark.single",
    "load_assets": "legal_judge.assets.catalogue",
    "load_dataset": "legal_judge.dataset",
    "load_ensemble_config": "legal_judge.benchmark.ensemble_config",
    "load_targets": "legal_judge.audit.target",
    "register_provider": "legal_judge.providers.registry",
    "resume_plan": "legal_judge.audit.resume",
    "resume_target": "legal_judge.audit.resume",
    "run_audit": "legal_judge.audit.execute",
    "run_audit_batch": "legal_judge.batch.audit",
    "run_benchmark": "legal_judge.benchmark.runner",
    "run_benchmark_batch": "legal_judge.batch.orchestrator",
    "run_checks": "legal_judge.checks",
    "summarize_run": "legal_judge.benchmark.summary",
}

__all__ = sorted([*_EXPORTS, "__version__"])


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'legal_judge' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return __all__
