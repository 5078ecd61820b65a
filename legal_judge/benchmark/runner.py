"""Score a benchmark with the ensemble: async orchestration, limits, cache, resume, progress.

Every judge call is committed to the store as it completes, so Ctrl-C, a crash or a provider outage
loses nothing: ``--resume RUN_ID`` finishes the run without repeating a completed call (verdicts are
reused; a response that arrived but was not yet parsed comes back from the provider cache).
"""

from __future__ import annotations

import asyncio
import re
import uuid
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from legal_judge.assets import load_assets
from legal_judge.benchmark.ensemble import EnsemblePolicy, JudgeSlot, aggregate, check_policy
from legal_judge.benchmark.ensemble_config import EnsembleConfig
from legal_judge.benchmark.inputs import ItemSelection, select_items
from legal_judge.errors import ConfigError
from legal_judge.judge.judge import Judge
from legal_judge.models import BenchmarkItem, EnsembleResult, Verdict
from legal_judge.store import Store

__all__ = ["RunInputs", "RunOutcome", "RunPlan", "RunProgress", "StoredResults",
           "detect_language", "execute_plan", "new_run_id", "plan_run", "resolve_inputs",
           "run_benchmark"]

_ARABIC = re.compile(r"[\u0600-\u06FF]")
_FRENCH = re.compile(r"\b(?:le|la|les|des|du|est|une|dans|pour|qui|que|avec|selon|article)\b",
                     re.IGNORECASE)


def detect_language(item: BenchmarkItem) -> str:
    """``metadata.language`` when given, else a script/stopword heuristic (en, fr, ar)."""
    declared = item.metadata.get("language") if isinstance(item.metadata, dict) else None
    if isinstance(declared, str) and declared:
        return declared
    text = item.response
    if len(_ARABIC.findall(text)) > len(text) * 0.2:
        return "ar"
    words = max(1, len(text.split()))
    return "fr" if len(_FRENCH.findall(text)) / words > 0.12 else "en"


def new_run_id() -> str:
    """A sortable, unique run id."""
    return datetime.now(UTC).strftime("run-%Y%m%d-%H%M%S-") + uuid.uuid4().hex[:6]


@dataclass
class RunProgress:
    """Live counters shown in the progress bar and returned at the end."""

    items_total: int = 0
    items_done: int = 0
    calls: int = 0
    cached: int = 0
    retries: int = 0
    failures: int = 0
    inconclusive: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float = 0.0
    cost_unknown_calls: int = 0

    def add(self, v: Verdict) -> None:
        """Count one finished verdict."""
        self.calls += v.attempts
        self.cached += int(v.cached)
        self.retries += max(0, v.attempts - 1)
        self.failures += int(v.status == "error")
        self.inconclusive += int(v.status == "inconclusive")
        self.input_tokens += v.input_tokens or 0
        self.output_tokens += v.output_tokens or 0
        if v.cost_usd is None and v.status != "error":
            self.cost_unknown_calls += 1
        else:
            self.cost_usd += v.cost_usd or 0.0


class StoredResults(Mapping[str, EnsembleResult]):
    """A run's ensemble results, read from the store on access.

    A 10,000-item run keeps none of them in memory; ``outcome.results[item_id]`` still works.
    """

    def __init__(self, store: Store, run_id: str) -> None:
        self.store = store
        self.run_id = run_id

    def __getitem__(self, item_id: str) -> EnsembleResult:
        row = self.store.db.execute(
            "SELECT result_json FROM ensemble_results WHERE run_id = ? AND item_id = ?",
            (self.run_id, item_id)).fetchone()
        if row is None:
            raise KeyError(item_id)
        return EnsembleResult.model_validate_json(row[0])

    def __iter__(self) -> Iterator[str]:
        rows = self.store.db.execute(
            "SELECT item_id FROM ensemble_results WHERE run_id = ?", (self.run_id,)).fetchall()
        return iter([r[0] for r in rows])

    def __len__(self) -> int:
        return int(self.store.db.execute(
            "SELECT COUNT(*) FROM ensemble_results WHERE run_id = ?", (self.run_id,)).fetchone()[0])


@dataclass
class RunOutcome:
    """What ``run_benchmark`` returns."""

    run_id: str
    status: str
    results: Mapping[str, EnsembleResult]
    progress: RunProgress
    warnings: list[str] = field(default_factory=list)


class _CostLimit(Exception):
    pass


class _Run:
    """State of one run; the functions below keep each step small."""

    def __init__(self, config: EnsembleConfig, judges: list[Judge], store: Store, run_id: str,
                 *, on_progress: Callable[[RunProgress], None] | None,
                 correction: Any = None) -> None:
        self.config = config
        self.judges = judges
        self.store = store
        self.run_id = run_id
        self.on_progress = on_progress
        self.progress = RunProgress()
        self.assets = load_assets()
        self.rubric_set = self.assets.rubric_set(config.rubric_set)
        self.severity = self.assets.rubric("hallucination").severity or []
        self.policy = EnsemblePolicy(
            quorum=config.quorum, other_family_min_share=config.other_family_min_share,
            allow_same_family_only=config.allow_same_family_only,
            disagreement_threshold=config.disagreement_threshold,
        )
        self.slots = [JudgeSlot(j.label, j.family, j.config.weight) for j in judges]
        self.calls = asyncio.Semaphore(config.concurrency)
        self.results = StoredResults(store, run_id)
        self.warnings: list[str] = []
        # Per judge: how many non-English answers, and the first ids the warning names (a list of
        # every id grew with the run).
        self.non_english: dict[str, list[str]] = {}
        self.non_english_count: dict[str, int] = {}
        self.done = store.load_verdicts(run_id)
        self.correction = correction
        self.lookup: Any = None
        self.ensemble_id = ensemble_judge_id(config, judges)

    def language_warnings(self) -> list[str]:
        """One warning per non-multilingual judge that scored non-English answers."""
        return [f"{judge} is not marked multilingual but scored {self.non_english_count[judge]} "
                f"non-English answer(s): {', '.join(ids)}"
                f"{' ...' if self.non_english_count[judge] > len(ids) else ''}; prefer a "
                "multilingual judge" for judge, ids in sorted(self.non_english.items())]

    def sut_family(self, item: BenchmarkItem) -> str | None:
        from legal_judge.providers.families import family_of

        sut = self.config.system_under_test or item.system_under_test
        return family_of(sut, overrides=self.config.family_overrides) if sut else None

    async def judge_one(self, judge: Judge, item: BenchmarkItem, evidence: str | None) -> Verdict:
        cached = self.done.get((item.id, judge.label))
        if cached is not None and cached["status"] in ("ok", "inconclusive"):
            return Verdict.model_validate(cached)
        async with self.calls:
            verdict = await judge.judge(item, run_id=self.run_id, evidence=evidence)
        self.store.save_verdict(self.run_id, item.id, judge.label, verdict.model_dump())
        self.progress.add(verdict)
        if self.on_progress:
            self.on_progress(self.progress)
        limit = self.config.cost_limit_usd
        if limit is not None and self.progress.cost_usd > limit:
            # The limit is per invocation (a resume starts counting again from 0): the user
            # reads what a resume will spend before typing it.
            raise _CostLimit(f"cost limit ${limit:.2f} reached (${self.progress.cost_usd:.2f} "
                             "spent); cost_limit_usd applies to each invocation, so a resume "
                             f"may spend up to ${limit:.2f} more")
        return verdict

    async def item(self, item: BenchmarkItem) -> None:
        checks: dict[str, Any] = {}
        evidence = None
        if self.config.run_checks and self.lookup is not None:
            # The lookup client is synchronous and rate-limited: keep it off the event loop.
            checks, evidence = await asyncio.to_thread(run_item_checks, item, self.lookup)
        elif self.config.run_checks:
            checks, evidence = run_item_checks(item)
        verdicts = await asyncio.gather(*(self.judge_one(j, item, evidence) for j in self.judges))
        language = detect_language(item)
        if language != "en":
            for j in self.judges:
                if not j.config.multilingual:
                    named = self.non_english.setdefault(j.label, [])
                    if len(named) < 6:
                        named.append(f"{item.id} ({language})")
                    self.non_english_count[j.label] = self.non_english_count.get(j.label, 0) + 1
        result = aggregate(item.id, list(verdicts), self.slots, sut_family=self.sut_family(item),
                           policy=self.policy, rubric_set=self.rubric_set, severity=self.severity,
                           checks=checks)
        data = result.model_dump()
        if self.correction is not None and result.status == "ok":
            from legal_judge.calibration import correct_result

            # Corrected scores replace `scores`; the ensemble's own stay in `raw_scores`.
            data = correct_result(data, self.correction, judge_id=self.ensemble_id)
        self.store.save_result(self.run_id, item.id, data)
        self.progress.items_done += 1
        if self.on_progress:
            self.on_progress(self.progress)


@dataclass
class RunInputs:
    """What a ``legal-judge run`` judges: the items, the ensemble and how the items were chosen."""

    items: list[BenchmarkItem]
    config: EnsembleConfig
    selection: dict[str, Any] | None = None


def resolve_inputs(store: Store, dataset: str | None, ensemble: str, *, resume: str | None,
                   selection: ItemSelection | None = None) -> RunInputs:
    """Items and config for ``legal-judge run`` (online or batch).

    A resumed run takes its stored config and items (it is the same run, not a new one); a new run
    reads DATASET (a file, or ``langfuse:NAME``) and the ensemble file, then keeps the items
    ``selection`` chooses (``--limit``, ``--sample``, ``--ids``); its record goes into the run's
    config so the run says it is partial.

    Raises:
        ConfigError: no dataset and nothing to resume; a selection on a resumed run; an unknown
            ``--ids`` item.
    """
    from legal_judge.benchmark.ensemble_config import load_ensemble_config

    if resume:
        if selection is not None and not selection.everything:
            raise ConfigError(f"--resume {resume} judges the run's own items; "
                              f"{selection.describe()} cannot change them",
                              code="selection-resume",
                              fix=f"run `legal-judge run --resume {resume}` without it")
        return RunInputs([], EnsembleConfig.model_validate(
            store.get_run(resume)["config"]["ensemble"]))
    if dataset is None:
        raise ConfigError("no dataset given", code="dataset-missing",
                          fix="pass a dataset file, e.g. legal-judge run bench.jsonl")
    if dataset.startswith("langfuse:"):
        from legal_judge.sync.langfuse_sync import load_langfuse_dataset

        items = load_langfuse_dataset(dataset.removeprefix("langfuse:"))
    else:
        from legal_judge.dataset import load_dataset

        items = load_dataset(dataset)
    config = load_ensemble_config(ensemble)
    chosen, record = select_items(items, selection or ItemSelection())
    return RunInputs(chosen, config, record)


def run_inputs(store: Store, dataset: str | None, ensemble: str, *,
               resume: str | None) -> tuple[list[BenchmarkItem], EnsembleConfig]:
    """``(items, config)`` of :func:`resolve_inputs` without a selection."""
    got = resolve_inputs(store, dataset, ensemble, resume=resume)
    return got.items, got.config


def ensemble_judge_id(config: EnsembleConfig, judges: list[Judge]) -> str:
    """The ensemble's identity: its judges' ids plus the weighting policy (DESIGN: judge identity)."""
    import hashlib

    from legal_judge.store import canonical_json

    payload = {"judges": sorted((j.judge_id, j.config.weight) for j in judges),
               "policy": {"quorum": config.quorum, "other_family_min_share": config.other_family_min_share,
                          "allow_same_family_only": config.allow_same_family_only,
                          "rubric_set": config.rubric_set}}
    return "ens-" + hashlib.sha256(canonical_json(payload).encode()).hexdigest()[:12]


def _langfuse_prompts(warnings: list[str]) -> dict[str, int] | None:
    """The Langfuse prompt versions this run uses, when Langfuse is configured and reachable."""
    from legal_judge.sync.sink import langfuse_configured

    if not langfuse_configured():
        return None
    from legal_judge.errors import LegalJudgeError
    from legal_judge.sync import langfuse_sync

    try:
        return langfuse_sync.resolve_prompt_versions()
    except LegalJudgeError as exc:  # Langfuse down or prompts not pushed: the run goes on
        warnings.append(f"Langfuse prompt versions not recorded: {exc.message}")
        return None


def _sync_at_end(store: Store, run_id: str, warnings: list[str]) -> None:
    from legal_judge.sync.sink import get_sink

    sink = get_sink()
    sink.enqueue_run(store, run_id)
    report = sink.flush(store, timeout_s=10.0)
    if report.configured and report.incomplete:
        warnings.append(report.advice)


class StoreLookupCache:
    """CourtListener answers cached in the store (``lookup_cache``), shared by every run."""

    def __init__(self, store: Store) -> None:
        self.store = store

    def get(self, key: str) -> dict[str, Any] | None:
        """A cached answer, or None."""
        return self.store.lookup_get(key)

    def put(self, key: str, value: dict[str, Any]) -> None:
        """Remember an answer."""
        self.store.lookup_put(key, value)


def citation_lookup_from_env(store: Store) -> Any:
    """The CourtListener client (token from ``COURTLISTENER_TOKEN``) with the store as its cache."""
    from legal_judge.checks import CourtListenerLookup

    return CourtListenerLookup.from_env(cache=StoreLookupCache(store))


def run_item_checks(item: BenchmarkItem, lookup: Any = None) -> tuple[dict[str, Any], str | None]:
    """Rule-based checks for one item: the result dict kept with it and the evidence text for judges."""
    from legal_judge.checks import run_checks

    result = run_checks(item, today=datetime.now(UTC).date(), lookup=lookup)
    return ({"forces_citation_zero": result.forces_citation_zero, "reasons": result.reasons,
             "findings": result.model_dump(mode="json")}, result.evidence_text() or None)


def build_judges(config: EnsembleConfig, store: Store, *, use_cache: bool,
                 http_client: Any = None) -> list[Judge]:
    """Providers and judges for a config, created before any call.

    Raises:
        EnsembleInvalid: every problem of every judge (unknown provider, malformed URL, missing
            keys, invalid options, ...) in one error, from the same check ``doctor`` runs.
    """
    from legal_judge.benchmark.ensemble_check import check_ensemble

    return check_ensemble(config, store=store, use_cache=use_cache,
                          http_client=http_client).judges_or_raise()


def _check_families(run: _Run, items: list[BenchmarkItem]) -> None:
    seen: set[str | None] = set()
    for item in items:
        family = run.sut_family(item)
        if family in seen:
            continue
        seen.add(family)
        run.warnings += check_policy(run.slots, family, run.policy)


def _refuse_existing_run(store: Store, run_id: str) -> None:
    # Without this a reused --run-id ends in a raw UNIQUE-constraint traceback.
    from legal_judge.errors import NotFoundError

    try:
        store.get_run(run_id)
    except NotFoundError:
        return
    raise ConfigError(f"a run '{run_id}' already exists in {store.path}", code="run-id-exists",
                      fix=f"finish it with `legal-judge run --resume {run_id}` or pick another --run-id")


@dataclass
class RunPlan:
    """A run that passed every check and has not started: no run row, no call yet.

    ``legal-judge run`` plans first and shows its progress bar only for a plan, so a refused run
    leaves nothing behind (no ``running`` row, no bar).
    """

    run: _Run
    items: list[BenchmarkItem]
    resume: bool
    calibration: str | None


def plan_run(items: list[BenchmarkItem], config: EnsembleConfig, *, store: Store,
             run_id: str | None = None, resume: bool = False, use_cache: bool = True,
             http_client: Any = None, calibration: str | None = None,
             lookup: Any = None) -> RunPlan:
    """Check everything a run needs, before it exists; the arguments are ``run_benchmark``'s.

    Raises:
        ConfigError: a reused run id, a run another live process is executing, an invalid
            ensemble (every problem at once), a refused same-family configuration, an unknown
            calibration or a missing CourtListener token.
    """
    from legal_judge.run_owner import refuse_if_owned

    run_id = run_id or new_run_id()
    if resume:
        refuse_if_owned(store, run_id)
    else:
        _refuse_existing_run(store, run_id)
    judges = build_judges(config, store, use_cache=use_cache, http_client=http_client)
    if resume:
        items = [BenchmarkItem.model_validate(x) for x in store.load_items(run_id)]
        calibration = store.get_run(run_id)["config"].get("calibration")
    correction = None
    if calibration:
        from legal_judge.calibration import load_correction

        correction = load_correction(store, calibration)
    run = _Run(config, judges, store, run_id, on_progress=None, correction=correction)
    if lookup is None and config.citation_lookup and config.run_checks:
        lookup = citation_lookup_from_env(store)
    run.lookup = lookup
    _check_families(run, items)
    return RunPlan(run=run, items=items, resume=resume, calibration=calibration)


async def run_benchmark(items: list[BenchmarkItem], config: EnsembleConfig, *, store: Store,
                        run_id: str | None = None, resume: bool = False, use_cache: bool = True,
                        http_client: Any = None,
                        on_progress: Callable[[RunProgress], None] | None = None,
                        extra_config: dict[str, Any] | None = None,
                        calibration: str | None = None, lookup: Any = None) -> RunOutcome:
    """Score ``items`` with the ensemble and store everything.

    Args:
        items: Validated benchmark items (ignored on resume: the stored items are used).
        config: The ensemble configuration.
        store: The SQLite store.
        run_id: Id for a new run, or the run to resume.
        resume: Finish ``run_id`` without repeating completed calls.
        use_cache: Read the provider cache.
        http_client: An httpx.AsyncClient for the SDK providers (tests and benchmarks).
        on_progress: Called after every verdict and item.
        extra_config: Stored with the run (dataset path, CLI options).
        calibration: A calibration or correction id whose fitted correction is applied to the
            ensemble scores (raw scores are kept beside them).
        lookup: A citation lookup client; default: CourtListener from the environment when the
            config sets ``citation_lookup`` (a missing token fails before any call).

    Returns:
        The run's outcome; ``status`` is ``completed``, ``interrupted`` or ``stopped``.

    Raises:
        ConfigError: anything :func:`plan_run` refuses, before any call and before the run exists.
    """
    plan = plan_run(items, config, store=store, run_id=run_id, resume=resume, use_cache=use_cache,
                    http_client=http_client, calibration=calibration, lookup=lookup)
    return await execute_plan(plan, on_progress=on_progress, extra_config=extra_config)


async def execute_plan(plan: RunPlan, *, on_progress: Callable[[RunProgress], None] | None = None,
                       extra_config: dict[str, Any] | None = None) -> RunOutcome:
    """Run a plan: create (or claim) the run, judge every item, finish the run.

    The process owns the run while it executes (pid, host, heartbeat: ``runs list`` shows a run
    whose process died as ``interrupted``).
    """
    from legal_judge.run_owner import hold_run

    run, items, store = plan.run, plan.items, plan.run.store
    run.on_progress = on_progress
    judges = run.judges
    if not plan.resume:
        # A generator: 100,000 items are not held twice (as models and as dicts) while stored.
        store.create_run(run.run_id, kind="run", items=(i.model_dump() for i in items), config={
            "ensemble": run.config.model_dump(), "judge_ids": {j.label: j.judge_id for j in judges},
            "judge_id": run.ensemble_id, "rubric_set": run.rubric_set.id,
            "calibration": plan.calibration, "langfuse_prompts": _langfuse_prompts(run.warnings),
            **(extra_config or {}),
        })
    run.progress.items_total = len(items)
    status = "completed"
    with hold_run(store, run.run_id):
        try:
            await _drive(run, items)
        except _CostLimit as exc:
            status = "stopped"
            run.warnings.append(str(exc))
        except (KeyboardInterrupt, asyncio.CancelledError):
            status = "interrupted"
        except BaseException:
            # A judge refused mid-run (a revoked key, a bad request): what is stored stays, and
            # the run says it can be resumed once the cause is fixed.
            store.finish_run(run.run_id, status="interrupted", summary=None)
            raise
        finally:
            for j in judges:
                await j.provider.aclose()
        from legal_judge.benchmark.summary import summarize_run

        run.warnings += run.language_warnings()
        summary = summarize_run(store, run.run_id) if status == "completed" else None
        if summary is not None:
            summary["warnings"] = run.warnings
        store.finish_run(run.run_id, status=status, summary=summary)
    if status == "completed":
        before = len(run.warnings)
        _sync_at_end(store, run.run_id, run.warnings)
        if summary is not None and len(run.warnings) > before:
            # The summary was stored before the sync: store it again so `run` shows its warning.
            store.finish_run(run.run_id, status=status, summary=summary)
    return RunOutcome(run_id=run.run_id, status=status, results=run.results,
                      progress=run.progress, warnings=run.warnings)


async def _drive(run: _Run, items: list[BenchmarkItem]) -> None:
    queue: asyncio.Queue[BenchmarkItem] = asyncio.Queue()
    for item in items:
        queue.put_nowait(item)

    async def worker() -> None:
        while True:
            try:
                item = queue.get_nowait()
            except asyncio.QueueEmpty:
                return
            await run.item(item)

    workers = [asyncio.create_task(worker()) for _ in range(min(run.config.concurrency, len(items)))]
    try:
        await asyncio.gather(*workers)
    except BaseException:
        for w in workers:
            w.cancel()
        await asyncio.gather(*workers, return_exceptions=True)
        raise
