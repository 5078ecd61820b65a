"""Score the lawyer-labelled items with a candidate (or incumbent) judge or ensemble.

A judge spec (``simulated:fair``, ``openai:gpt-4o``) is one judge, called item by item through
the verdict cache with the same rule-based evidence a run gives it (a rerun of the same judge on
the same items pays nothing). An ensemble (a TOML file or a bundled name) is scored as an ordinary
run of the labelled items (run id ``validate-…``), so its weights, quorum and vote are the ones a
run applies.
"""

from __future__ import annotations

import asyncio
import hashlib
import uuid
from typing import Any

from legal_judge.assets.catalogue import Assets
from legal_judge.assets.rubrics import DEFAULT_RUBRIC_SET
from legal_judge.benchmark.ensemble_config import (
    EnsembleConfig,
    load_ensemble_config,
    resolve_ensemble_path,
)
from legal_judge.benchmark.item_checks import run_item_checks
from legal_judge.benchmark.run_setup import build_judges
from legal_judge.calibration.data import ensemble_judge_id
from legal_judge.calibration.validation_data import JudgeScores, LawyerSet
from legal_judge.calibration.validation_schema import JudgeRef
from legal_judge.errors import ConfigError
from legal_judge.judge.config import JudgeConfig
from legal_judge.judge.judge import Judge
from legal_judge.models import BenchmarkItem
from legal_judge.store import Store

__all__ = ["build_judge", "evidence_of", "is_ensemble_ref", "judge_items", "score_ref"]

_EVIDENCE: dict[str, str | None] = {}


def is_ensemble_ref(ref: str) -> bool:
    """Whether ``ref`` names an ensemble (a bundled name or a TOML file) rather than a judge spec."""
    return resolve_ensemble_path(ref, missing_ok=True) is not None


def build_judge(store: Store, spec: str, *, assets: Assets | None = None,
                rubric_set: str = DEFAULT_RUBRIC_SET) -> Judge:
    """One judge of ``spec`` (checked as ``run`` checks an ensemble), optionally with other assets.

    Raises:
        EnsembleInvalid: an unknown provider, a missing key, invalid options.
    """
    from legal_judge.benchmark.ensemble_check import EnsembleInvalid

    config = EnsembleConfig(name="candidate", judges=[JudgeConfig(spec=spec)], quorum=1,
                            rubric_set=rubric_set)
    try:
        judge = build_judges(config, store, use_cache=True)[0]
    except EnsembleInvalid as exc:
        # Named as the user wrote it: a judge spec, not an ensemble file to run doctor on.
        problems = "\n".join(f"  {p}" for p in exc.problems)
        raise ConfigError(f"judge {spec}: nothing was judged:\n{problems}",
                          code="judge-invalid",
                          fix="correct the judge spec (`legal-judge doctor` checks keys and "
                              "endpoints), or name an ensemble file") from None
    if assets is None:
        return judge
    return Judge(judge.config, judge.provider, assets=assets, rubric_set=rubric_set, store=store)


def evidence_of(item: BenchmarkItem) -> str | None:
    """The rule-based findings a run shows the judges for this item (computed once per answer)."""
    key = hashlib.sha256(f"{item.prompt}\x00{item.response}\x00{item.jurisdiction}".encode()
                         ).hexdigest()
    if key not in _EVIDENCE:
        _EVIDENCE[key] = run_item_checks(item)[1]
    return _EVIDENCE[key]


async def _judge_all(judge: Judge, items: dict[str, BenchmarkItem], concurrency: int,
                     ) -> dict[str, dict[str, Any]]:
    gate = asyncio.Semaphore(concurrency)

    async def one(key: str, item: BenchmarkItem) -> tuple[str, dict[str, Any]]:
        async with gate:
            verdict = await judge.judge(item, evidence=evidence_of(item))
        return key, verdict.model_dump(mode="json")

    return dict(await asyncio.gather(*(one(k, i) for k, i in items.items())))


def judge_items(judge: Judge, items: dict[str, BenchmarkItem], *, name: str | None = None,
                concurrency: int = 16) -> JudgeScores:
    """Score ``items`` (by key) with one judge, through the store's caches."""
    out = JudgeScores(JudgeRef(name=name or judge.label, spec=judge.config.spec,
                               judge_id=judge.judge_id, source="judge"))
    for key, verdict in asyncio.run(_judge_all(judge, items, concurrency)).items():
        out.add(key, verdict)
    return out


def _score_ensemble(store: Store, ref: str, lawyers: LawyerSet, name: str) -> JudgeScores:
    from legal_judge.benchmark.runner import run_benchmark

    config = load_ensemble_config(ref)
    items = [item.model_copy(update={"id": key}) for key, item in sorted(lawyers.items.items())]
    run_id = f"validate-{uuid.uuid4().hex[:10]}"
    outcome = asyncio.run(run_benchmark(items, config, store=store, run_id=run_id,
                                        extra_config={"source": "calibrate validate",
                                                      "ensemble_path": ref}))
    judge_id = ensemble_judge_id(store.get_run(outcome.run_id)["config"])
    out = JudgeScores(JudgeRef(name=name, spec=ref, judge_id=judge_id,
                               source=f"run {outcome.run_id}"))
    for key, result in outcome.results.items():
        out.add(key, result.model_dump(mode="json"))
    return out


def score_ref(store: Store, ref: str, lawyers: LawyerSet, *, name: str) -> JudgeScores:
    """Score the labelled items with ``ref``: an ensemble (as a run) or a judge spec.

    Raises:
        ConfigError, EnsembleInvalid, InputError: what ``run`` would refuse about ``ref``.
    """
    if is_ensemble_ref(ref):
        return _score_ensemble(store, ref, lawyers, name)
    judge = build_judge(store, ref, rubric_set=lawyers.rubric_set)
    scores = judge_items(judge, lawyers.items, name=name)
    scores.ref = scores.ref.model_copy(update={"spec": ref})
    return scores
