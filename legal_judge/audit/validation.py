"""Statistical validation of the audit with the simulated judge (power and false-positive rate).

Each repetition runs the audit's own design, execution and statistics (no store, no log) against
``simulated:<profile>?<bias>=<d>`` with its own design seed and request seed, so repetitions are
independent. Base items are the bundled sample with extra expected signals that no answer covers:
their scores sit mid-scale, so an injected shift of ``d`` noise units is not clipped at 0 or 5 and the
effect in the judge's scores really is ``d_z`` = ``d``.

The certification study (``items="sample"``, every probe) audits the bundled sample exactly as
``audit run`` does at its defaults and counts the verdicts: ``constant`` and ``insensitive`` must never
be certified, ``fair`` must be certified in at least 80% of repetitions, the biased profiles biased.
``scripts/audit_validation.py`` runs the full 200-repetition studies and prints the figures.

Used by ``tests/audit/test_validation.py``; the figures in the issue note come from 200 repetitions.
"""

from __future__ import annotations

import asyncio
import os
from collections import Counter
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from typing import Any, Literal

from legal_judge.audit.design import AuditSettings, build_design
from legal_judge.audit.dimensions import resolve_dimensions
from legal_judge.audit.pairs import PairRunner, judge_pairs
from legal_judge.audit.probes import resolve_probes
from legal_judge.audit.report import build_report
from legal_judge.audit.target import JudgeTarget
from legal_judge.dataset import load_dataset, sample_dataset_path
from legal_judge.judge.config import JudgeConfig
from legal_judge.judge.judge import Judge
from legal_judge.models import BenchmarkItem
from legal_judge.providers.registry import get_provider

__all__ = ["EIGHT", "NO_PROBES", "ValidationResult", "mid_scale_items", "validation_study"]

NO_PROBES: list[str] = []
EIGHT = ["position", "verbosity", "authority", "confidence", "formatting", "bandwagon",
         "sentiment", "demographic"]


@dataclass(frozen=True)
class ValidationResult:
    """Share of repetitions that flagged a dimension (or any dimension), and the verdicts."""

    spec: str
    dimensions: list[str]
    repetitions: int
    pairs: int
    flagged_counts: dict[str, int]
    any_flagged: int
    mean_effect: dict[str, float]
    verdict_counts: dict[str, int] = field(default_factory=dict)
    probe_failed_counts: dict[str, int] = field(default_factory=dict)
    equivalent_counts: dict[str, int] = field(default_factory=dict)

    def rate(self, dimension: str | None = None) -> float:
        """Flag rate of one dimension, or of "any dimension" when None."""
        k = self.any_flagged if dimension is None else self.flagged_counts[dimension]
        return k / self.repetitions

    def verdict_rate(self, verdict: str) -> float:
        """Share of repetitions with this verdict."""
        return self.verdict_counts.get(verdict, 0) / self.repetitions


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


def _items(kind: str) -> list[BenchmarkItem]:
    return mid_scale_items() if kind == "mid-scale" else load_dataset(sample_dataset_path())


_Rep = dict[str, Any]


async def _one_rep(spec: str, dims: list[str], pairs: int, rep: int, items: list[BenchmarkItem],
                   probes: list[str] | None) -> _Rep:
    settings = AuditSettings(dimensions=dims, pairs=pairs, seed=rep, noise_pairs=0,
                             concurrency=64, request_seed=rep, probes=probes)
    judge = Judge(JudgeConfig(spec=spec), get_provider(spec), store=None)
    target = JudgeTarget(judge, request_seed=rep)
    chosen = resolve_probes(probes)
    design = build_design(items, resolve_dimensions(dims), pairs=pairs, seed=rep, probes=chosen,
                          probe_pairs=settings.probe_pairs)
    runner = PairRunner(target, settings, f"validation-{rep}", None, 0)
    rows, probe_rows = await judge_pairs(design, runner, settings)
    report = build_report(rows + probe_rows, settings, dimensions=dims,
                          kinds={d.name: d.effective_kind for d in design.dimensions},
                          probes=chosen, judge_label=spec, judge_spec=spec)
    ext = report["extensions"]
    return {
        "flagged": {d["dimension"]: bool(d["flagged"]) for d in report["dimension_results"]},
        "effects": {d["dimension"]: float(d["effect_size"] or 0.0)
                    for d in report["dimension_results"]},
        "verdict": ext["verdict"],
        "failed": [k for k, p in ext["probes"].items() if p["status"] == "fail"],
        "equivalent": [k for k, d in ext["dimensions"].items() if d["outcome"] == "equivalent"],
    }


def _run_reps(spec: str, dims: list[str], pairs: int, reps: list[int], items_kind: str,
              probes: list[str] | None) -> list[_Rep]:
    items = _items(items_kind)

    async def all_reps() -> list[_Rep]:
        return [await _one_rep(spec, dims, pairs, r, items, probes) for r in reps]

    return asyncio.run(all_reps())


def validation_study(spec: str, dimensions: list[str], *, repetitions: int, pairs: int = 60,
                     first_seed: int = 1, workers: int | None = None,
                     probes: list[str] | None = NO_PROBES,
                     items: Literal["mid-scale", "sample"] = "mid-scale") -> ValidationResult:
    """Run ``repetitions`` seeded audits and count the flags, probe failures and verdicts.

    Args:
        spec: The simulated judge, e.g. ``simulated:fair?verbosity=0.5``.
        dimensions: Dimensions audited in every repetition (Holm runs across them).
        repetitions: Number of independent audits.
        pairs: Pairs per dimension.
        first_seed: Seed of the first repetition (seeds are consecutive).
        workers: Processes (default: the CPU count); 1 runs in this process.
        probes: Probes run in every repetition (None: all built-in; default: none, which makes
            every verdict at best inconclusive).
        items: ``mid-scale`` (the default power-study items: injected shifts are not clipped) or
            ``sample`` (the bundled sample as ``audit run`` uses it: the certification study).
    """
    seeds = list(range(first_seed, first_seed + repetitions))
    workers = workers or os.cpu_count() or 1
    chunks = [seeds[i::workers] for i in range(workers) if seeds[i::workers]]
    args = (spec, dimensions, pairs)
    if len(chunks) == 1:
        results = _run_reps(*args, chunks[0], items, probes)
    else:
        with ProcessPoolExecutor(max_workers=len(chunks)) as pool:
            parts = pool.map(_run_reps, *([a] * len(chunks) for a in args), chunks,
                             [items] * len(chunks), [probes] * len(chunks))
            results = [r for part in parts for r in part]
    counts = {d: sum(r["flagged"][d] for r in results) for d in dimensions}
    effects = {d: sum(r["effects"][d] for r in results) / len(results) for d in dimensions}
    return ValidationResult(
        spec, dimensions, repetitions, pairs, counts,
        sum(any(r["flagged"].values()) for r in results), effects,
        verdict_counts=dict(Counter(r["verdict"] for r in results)),
        probe_failed_counts=dict(Counter(k for r in results for k in r["failed"])),
        equivalent_counts=dict(Counter(k for r in results for k in r["equivalent"])))
