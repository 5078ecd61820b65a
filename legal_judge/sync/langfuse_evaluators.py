"""The ensemble as a Langfuse experiment evaluator.

Example (``run_experiment`` calls the evaluator once per item)::

    from langfuse import get_client
    from legal_judge.sync.langfuse_evaluators import ensemble_evaluator

    def score_fn(item):            # BenchmarkItem -> EnsembleResult, e.g. the runner's ensemble
        return my_ensemble.judge_one(item)

    get_client().run_experiment(
        name="legal-judge-smoke",
        data=[{"input": {"id": "q1", "prompt": "Is a verbal lease valid?"}}],
        task=lambda *, item, **kw: my_system_under_test(item["input"]["prompt"]),
        evaluators=[ensemble_evaluator(score_fn)],
    )
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from langfuse import Evaluation

from legal_judge.models import BenchmarkItem, EnsembleResult
from legal_judge.sync.plan import det_id

__all__ = ["ensemble_evaluator", "evaluations_from_result"]


def evaluations_from_result(result: EnsembleResult) -> list[Evaluation]:
    """The ensemble's decision as Langfuse ``Evaluation`` objects (one per rubric + overall)."""
    evals = [Evaluation(name=k, value=float(v), metadata={"level": "ensemble"})
             for k, v in sorted(result.scores.items())]
    if result.hallucination:
        evals.append(Evaluation(name="hallucination", value=result.hallucination,
                                data_type="CATEGORICAL"))
    if result.overall:
        evals.append(Evaluation(name="overall", value=1.0 if result.overall == "pass" else 0.0,
                                data_type="BOOLEAN", comment=result.reason,
                                metadata={"valid_judges": result.valid_judges}))
    return evals


def ensemble_evaluator(score_fn: Callable[[BenchmarkItem], EnsembleResult]
                       ) -> Callable[..., list[Evaluation]]:
    """An evaluator for ``run_experiment(evaluators=[...])`` that runs ``score_fn`` on each item."""
    def evaluator(*, input: Any, output: Any, expected_output: Any = None,  # noqa: A002
                  metadata: Any = None, **_: Any) -> list[Evaluation]:
        inp = input if isinstance(input, dict) else {"prompt": str(input)}
        exp = expected_output if isinstance(expected_output, dict) else {}
        item = BenchmarkItem(
            id=str(inp.get("id") or (metadata or {}).get("item_id") or det_id(str(inp))),
            prompt=str(inp.get("prompt") or input), response=str(output),
            jurisdiction=inp.get("jurisdiction"),
            expected_signals=list(exp.get("expected_signals") or []))
        return evaluations_from_result(score_fn(item))
    return evaluator
