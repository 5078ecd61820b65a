"""Statistical validation of the audit with the simulated judge (power and false-positive rate).

Each repetition runs the audit's own design, execution and statistics (no store, no log) against
``simulated:<profile>?<bias>=<d>`` with its own design seed and request seed, so repetitions are
independent. Base items are the bundled sample with extra expected signals that no answer covers:
their scores sit mid-scale, so an injected shift of ``d`` noise units is not clipped at 0 or 5 and the
effect in the judge's scores really is ``d_z`` = ``d``.

Used by ``tests/audit/test_validation.py``; the figures in the issue note come from 200 repetitions.
"""

from __future__ import annotations

import asyncio
import os
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass

from legal_judge.audit.analysis import PairRow
from legal_judge.audit.design import AuditSettings, build_design
from legal_judge.audit.dimensions import resolve_dimensions
from legal_judge.audit.execute import _execute, _Runner
from legal_judge.audit.report import build_report
from legal_judge.audit.target import JudgeTarget
from legal_judge.dataset import load_dataset, sample_dataset_path
from legal_judge.judge import Judge, JudgeConfig
from legal_judge.models import BenchmarkItem
from legal_judge.providers.registry import get_provider

__all__ = ["EIGHT", "ValidationResult", "mid_scale_items", "validation_study"]

EIGHT = ["position", "verbosity", "authority", "confidence", "formatting", "bandwagon",
         "sentiment", "demographic"]


@dataclass(frozen=True)
class ValidationResult:
    """Share of repetitions that flagged a dimension (or any dimension)."""

    spec: str
    dimensions: list[str]
    repetitions: int
    pairs: int
    flagged_counts: dict[str, int]
    any_flagged: int
    mean_effect: dict[str, float]

    def rate(self, dimension: str | None = None) -> float:
        """Flag rate of one dimension, or of "any dimension" when None."""
        k = self.any_flagged if dimension is None else self.flagged_counts[dimension]
        return k / self.repetitions


def mid_scale_items() -> list[BenchmarkItem]:
    """The sample items with as many uncovered expected signals as covered ones (mid-scale scores)."""
    items = load_dataset(sample_dataset_path())
    out = []
    for it in items:
        if (it.metadata or {}).get("language", "en") != "en":
            continue
        n = max(1, len(it.expected_signals))
        extra = [f"qzxv{chr(97 + k % 26)} wykp" for k in range(n)]
        out.append(it.model_copy(update={"expected_signals": [*it.expected_signals, *extra]}))
    return out


async def _one_rep(spec: str, dims: list[str], pairs: int, rep: int,
                   items: list[BenchmarkItem]) -> tuple[dict[str, bool], dict[str, float]]:
    settings = AuditSettings(dimensions=dims, pairs=pairs, seed=rep, noise_pairs=0,
                             concurrency=64, request_seed=rep)
    judge = Judge(JudgeConfig(spec=spec), get_provider(spec), store=None)
    target = JudgeTarget(judge, request_seed=rep)
    design = build_design(items, resolve_dimensions(dims), pairs=pairs, seed=rep)
    runner = _Runner(target, settings, f"validation-{rep}", None, 0)
    rows: list[PairRow] = await _execute(design, runner, settings)
    report = build_report(rows, settings, dimensions=dims,
                          kinds={d.name: d.effective_kind for d in design.dimensions})
    flagged = {d["dimension"]: bool(d["flagged"]) for d in report["dimension_results"]}
    effects = {d["dimension"]: float(d["effect_size"] or 0.0) for d in report["dimension_results"]}
    return flagged, effects


def _run_reps(spec: str, dims: list[str], pairs: int, reps: list[int]
              ) -> list[tuple[dict[str, bool], dict[str, float]]]:
    items = mid_scale_items()

    async def all_reps() -> list[tuple[dict[str, bool], dict[str, float]]]:
        return [await _one_rep(spec, dims, pairs, r, items) for r in reps]

    return asyncio.run(all_reps())


def validation_study(spec: str, dimensions: list[str], *, repetitions: int, pairs: int = 60,
                     first_seed: int = 1, workers: int | None = None) -> ValidationResult:
    """Run ``repetitions`` seeded audits and count the flags.

    Args:
        spec: The simulated judge, e.g. ``simulated:fair?verbosity=0.5``.
        dimensions: Dimensions audited in every repetition (Holm runs across them).
        repetitions: Number of independent audits.
        pairs: Pairs per dimension.
        first_seed: Seed of the first repetition (seeds are consecutive).
        workers: Processes (default: the CPU count); 1 runs in this process.
    """
    seeds = list(range(first_seed, first_seed + repetitions))
    workers = workers or os.cpu_count() or 1
    chunks = [seeds[i::workers] for i in range(workers) if seeds[i::workers]]
    if len(chunks) == 1:
        results = _run_reps(spec, dimensions, pairs, chunks[0])
    else:
        with ProcessPoolExecutor(max_workers=len(chunks)) as pool:
            parts = pool.map(_run_reps, [spec] * len(chunks), [dimensions] * len(chunks),
                             [pairs] * len(chunks), chunks)
            results = [r for part in parts for r in part]
    counts = {d: sum(f[d] for f, _ in results) for d in dimensions}
    effects = {d: sum(e[d] for _, e in results) / len(results) for d in dimensions}
    return ValidationResult(spec, dimensions, repetitions, pairs, counts,
                            sum(any(f.values()) for f, _ in results), effects)
