"""Provider batch APIs for large runs: OpenAI Batch and Anthropic Message Batches, at batch prices.

``run_benchmark_batch`` is the batch twin of :func:`legal_judge.benchmark.runner.run_benchmark`;
``run_batch_cli`` is what ``legal-judge run --batch`` calls.
"""

from legal_judge.batch.base import BatchBackend, BatchHandle, BatchLimits, BatchLine, BatchStatus
from legal_judge.batch.driver import default_backend
from legal_judge.batch.orchestrator import BatchRunOutcome, run_benchmark_batch

__all__ = [
    "BatchBackend",
    "BatchHandle",
    "BatchLimits",
    "BatchLine",
    "BatchRunOutcome",
    "BatchStatus",
    "default_backend",
    "run_benchmark_batch",
]
