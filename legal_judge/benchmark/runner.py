"""Score a benchmark with the ensemble: one run's state, from its checks to its stored summary.

Online runs (:func:`run_benchmark`) and batch runs (:mod:`legal_judge.batch.orchestrator`) share
one :class:`RunState` and its lifecycle:

1. :func:`plan_run` checks everything before the run exists (a reused run id, a run another process
   executes, the ensemble, the judge families, the calibration, the citation lookup token);
2. :meth:`RunState.start` creates the run with its items in one commit (or takes the resumed one)
   and owns it for this process (pid, host, heartbeat);
3. :meth:`RunState.item` judges one item through the one item pipeline
   (:mod:`legal_judge.benchmark.pipeline`, with the run's :class:`~legal_judge.benchmark.pipeline.ItemJob`),
   :meth:`RunState.execute` says how the judging ended;
4. :meth:`RunState.finish` stores the summary and status, releases the run and syncs it to
   Langfuse.

Every judge call is committed to the store as it completes, so Ctrl-C, a crash or a provider outage
loses nothing: ``--resume RUN_ID`` finishes the run without repeating a completed call (verdicts are
reused; a response that arrived but was not yet parsed comes back from the provider cache).
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Awaitable, Callable, Iterable
from contextlib import ExitStack
from typing import Any

from legal_judge.assets.catalogue import load_assets
from legal_judge.benchmark.ensemble import EnsemblePolicy, JudgeSlot
from legal_judge.benchmark.ensemble_config import EnsembleConfig, ensemble_judge_id
from legal_judge.benchmark.item_checks import citation_lookup_from_env
from legal_judge.benchmark.outcome import RunOutcome, StoredResults, new_run_id
from legal_judge.benchmark.pipeline import (
    CostLimitReached,
    ItemInputs,
    ItemJob,
    RunProgress,
    judge_item,
)
from legal_judge.benchmark.run_items import FamilyCheck, drive, stored_items
from legal_judge.benchmark.run_setup import (
    build_judges,
    fewer_collections,
    langfuse_prompt_versions,
    refuse_reused_run_id,
    sync_run_at_end,
)
from legal_judge.judge.judge import Judge
from legal_judge.models import BenchmarkItem
from legal_judge.store import Store

__all__ = ["RunOutcome", "RunState", "execute_plan", "new_run_id", "plan_run",
           "run_benchmark"]


class RunState:
    """One run that passed every check: its judges, items, counters and warnings.

    Built by :func:`plan_run` (no run row, no call yet: ``legal-judge run`` shows its progress bar
    only for a run that passed its checks, so a refused run leaves nothing behind).

    ``bound_calls`` False lifts the run's bound on judge calls in flight (the ensemble's
    ``concurrency``): a batch run's calls park until a batch round answers them, and a parked call
    must not hold one of the run's slots while the calls that would complete the round wait for
    it. Its online judges stay bounded by their providers' own gates (``max_concurrency``).
    """

    def __init__(self, config: EnsembleConfig, judges: list[Judge], store: Store, run_id: str,
                 *, items: Iterable[BenchmarkItem], resume: bool = False,
                 calibration: str | None = None, correction: Any = None,
                 lookup: Any = None, bound_calls: bool = True) -> None:
        self.config = config
        self.store = store
        self.run_id = run_id
        # Read by start() as it is stored (a list is kept); the workers read the store in chunks.
        self._source: Iterable[BenchmarkItem] | None = None if resume else items
        self._items = items if isinstance(items, list) and not resume else None
        self._families_checked = False
        self.resume = resume
        self.calibration = calibration
        self.assets = load_assets()
        self.results = StoredResults(store, run_id)
        self.warnings: list[str] = []
        self.ensemble_id = ensemble_judge_id(
            {"ensemble": config.model_dump(), "judge_ids": {j.label: j.judge_id for j in judges}},
            fresh=True)
        self._owner: ExitStack | None = None
        self._sut_families: dict[str, str] = {}
        # What the item pipeline needs of the run, in one explicit object.
        self.job = ItemJob(
            store=store, run_id=run_id, judges=judges,
            slots=[JudgeSlot(j.label, j.family, j.config.weight) for j in judges],
            policy=EnsemblePolicy(
                quorum=config.quorum, other_family_min_share=config.other_family_min_share,
                allow_same_family_only=config.allow_same_family_only,
                disagreement_threshold=config.disagreement_threshold),
            rubric_set=self.assets.rubric_set(config.rubric_set),
            severity=self.assets.rubric("hallucination").severity or [],
            sut_family=self.sut_family,
            # Unbounded: never more holders than (item, judge) tasks, so it never makes one wait.
            calls=asyncio.Semaphore(config.concurrency if bound_calls else sys.maxsize),
            run_checks=config.run_checks, lookup=lookup, correction=correction,
            ensemble_id=self.ensemble_id, cost_limit_usd=config.cost_limit_usd)

    @property
    def items(self) -> list[BenchmarkItem]:
        """Every item, held in a list (batch runs, small callers; the online path never asks)."""
        if self._items is None:
            self._items = list(self._checkable())
        return self._items

    @property
    def judges(self) -> list[Judge]:
        """The run's judges, in order."""
        return self.job.judges

    @property
    def done(self) -> dict[tuple[str, str], dict[str, Any]]:
        """Stored verdicts by (item id, judge): all of them (batch runs), or only those of the items
        in hand (:func:`~legal_judge.benchmark.run_items.drive`)."""
        return self.job.done

    @property
    def progress(self) -> RunProgress:
        """The run's live counters."""
        return self.job.progress

    @property
    def on_progress(self) -> Callable[[RunProgress], None] | None:
        """Called after every verdict and item."""
        return self.job.on_progress

    @on_progress.setter
    def on_progress(self, value: Callable[[RunProgress], None] | None) -> None:
        self.job.on_progress = value

    def check_families(self) -> None:
        """Refuse (or warn about) judges of the answering system's family, per item family."""
        families = FamilyCheck(self.job)
        for item in self._checkable():  # read once, kept nowhere
            families.see(item)
        self.warnings += families.warnings
        self._families_checked = True

    def _checkable(self) -> Iterable[BenchmarkItem]:
        if self._items is not None:
            return self._items
        if self._source is None:  # resumed, or read into the store already
            return (BenchmarkItem.model_validate(x) for x in self.store.iter_items(self.run_id))
        return self._source

    def route_calls(self, route: Callable[[int, Judge], Any | None]) -> None:
        """Send each judge's calls to the provider ``route(index, judge)`` gives, where it gives
        one (a batch run's batching provider, which wraps the judge's own); None keeps it.

        The judges stay the planned ones (labels, judge ids, the identity the run records): only
        where their calls go changes, before :meth:`start`.
        """
        for index, judge in enumerate(self.judges):
            provider = route(index, judge)
            if provider is not None:
                judge.provider = provider

    def start(self, *, on_progress: Callable[[RunProgress], None] | None = None,
              extra_config: dict[str, Any] | None = None) -> None:
        """Create the run with its items in one commit (a resume takes the stored one) and own it.

        The process owns the run until :meth:`finish` (pid, host, heartbeat: ``runs list`` shows
        a run whose process died as ``interrupted``).
        """
        from legal_judge.run_owner import hold_run

        if self._owner is not None:
            raise RuntimeError(f"run {self.run_id} was already started")
        self.on_progress = on_progress
        if not self.resume:
            config = {"ensemble": self.config.model_dump(),
                      "judge_ids": {j.label: j.judge_id for j in self.judges},
                      "judge_id": self.ensemble_id, "rubric_set": self.job.rubric_set.id,
                      "calibration": self.calibration,
                      # Kept for a resume: a `--no-cache` run stays uncached when resumed.
                      "use_cache": all(j.use_cache for j in self.judges),
                      "langfuse_prompts": langfuse_prompt_versions(self.warnings),
                      **(extra_config or {})}
            # A source read once is checked as it is stored: a refusal or a defect in it rolls
            # the run back (nothing stored), as when it was checked before the run existed.
            families = None if self._families_checked else FamilyCheck(self.job)
            self.store.create_run(self.run_id, kind="run", config=config,
                                  items=stored_items(self._checkable(), families))
            self._source = None  # read: what is stored is read back from the store
            if families is not None:
                self.warnings[:0] = families.warnings
                self._families_checked = True
        self.progress.items_total = self.store.item_count(self.run_id)
        self._owner = ExitStack()
        self._owner.enter_context(hold_run(self.store, self.run_id))

    async def execute(self, work: Awaitable[str | None]) -> str:
        """Await the judging; its status: ``completed``, ``stopped``, ``interrupted`` or ``work``'s.

        The judges' providers are closed whatever happens.

        Raises:
            BaseException: anything else ``work`` raised (a revoked key, a bad request), after the
                run is stored ``interrupted`` (resumable once the cause is fixed) and released.
        """
        status = "completed"
        try:
            with self.store.commits_off_loop():  # on a server, no commit holds the loop
                status = await work or status
        except CostLimitReached as exc:
            status = "stopped"
            self.warnings.append(str(exc))
        except (KeyboardInterrupt, asyncio.CancelledError):
            status = "interrupted"
        except BaseException:
            # What is stored stays, and the run says it can be resumed.
            try:
                self.store.finish_run(self.run_id, status="interrupted", summary=None)
            finally:
                self._release()
            raise
        finally:
            for j in self.judges:
                await j.provider.aclose()
        return status

    def finish(self, status: str, *, summary_extra: dict[str, Any] | None = None) -> RunOutcome:
        """Store the summary (a completed run) and status, release the run, sync it to Langfuse.

        A run whose judging ended but that scored no item is stored ``failed`` with its reason
        (:func:`~legal_judge.benchmark.run_gate.no_judgment`); ``run --resume`` takes it up.

        Args:
            status: How the judging ended (:meth:`execute`).
            summary_extra: Added to a completed run's summary (a batch run's batch counts).
        """
        from legal_judge.benchmark.run_gate import no_judgment
        from legal_judge.benchmark.summary import summarize_run

        failure = None
        try:
            self.warnings += self.language_warnings()
            summary = summarize_run(self.store, self.run_id) if status == "completed" else None
            if summary is not None:
                summary["warnings"] = self.warnings
                summary.update(summary_extra or {})
                # A run that scored nothing is not completed: it failed, and says why.
                failure = no_judgment(self.store, self.run_id, summary)
                if failure is not None:
                    status = "failed"
                    summary["failure"] = failure.as_dict()
            self.store.finish_run(self.run_id, status=status, summary=summary)
        finally:
            self._release()
        if status == "completed":
            before = len(self.warnings)
            sync_run_at_end(self.store, self.run_id, self.warnings)
            if summary is not None and len(self.warnings) > before:
                # The summary was stored before the sync: store it again so `run` shows its warning.
                self.store.finish_run(self.run_id, status=status, summary=summary)
        return RunOutcome(run_id=self.run_id, status=status, results=self.results,
                          progress=self.progress, warnings=self.warnings, failure=failure)

    def _release(self) -> None:
        if self._owner is not None:
            self._owner.close()
            self._owner = None

    def language_warnings(self) -> list[str]:
        """One warning per non-multilingual judge that scored non-English answers."""
        counts = self.job.non_english_count
        return [f"{judge} is not marked multilingual but scored {counts[judge]} "
                f"non-English answer(s): {', '.join(ids)}"
                f"{' ...' if counts[judge] > len(ids) else ''}; prefer a "
                "multilingual judge" for judge, ids in sorted(self.job.non_english.items())]

    def sut_family(self, item: BenchmarkItem) -> str | None:
        """The family of the system that wrote the item's answer, when one is named."""
        from legal_judge.providers.families import family_of

        sut = self.config.system_under_test or item.system_under_test
        if not sut:
            return None
        family = self._sut_families.get(sut)
        if family is None:  # a run has a few systems: each is looked up once, not per item
            family = family_of(sut, overrides=self.config.family_overrides)
            if len(self._sut_families) < 1024:
                self._sut_families[sut] = family
        return family

    async def item(self, item: BenchmarkItem, inputs: ItemInputs | None = None) -> None:
        """Check, judge and aggregate one item; its ensemble result is stored
        (:func:`~legal_judge.benchmark.pipeline.judge_item`)."""
        await judge_item(self.job, item, inputs)


def plan_run(items: Iterable[BenchmarkItem], config: EnsembleConfig, *, store: Store,
             run_id: str | None = None, resume: bool = False, use_cache: bool = True,
             http_client: Any = None, calibration: str | None = None,
             lookup: Any = None, bound_calls: bool = True) -> RunState:
    """Check everything a run needs, before it exists; the arguments are ``run_benchmark``'s.

    ``bound_calls`` False: the run does not bound its calls in flight (a batch run; see
    :class:`RunState`).

    A new run's items are checked against the same-family rule by :meth:`RunState.start`, in
    the commit that stores them (a refusal leaves no run): the source is read once, not once to
    check and again to store.

    Raises:
        ConfigError: a reused run id, a run another live process is executing, an invalid
            ensemble (every problem at once), a refused same-family configuration of a resumed
            run, an unknown calibration or a missing CourtListener token.
    """
    from legal_judge.run_owner import refuse_if_owned

    run_id = run_id or new_run_id()
    if resume:
        refuse_if_owned(store, run_id)
        # A resume continues the run as it was started: `--no-cache` stays on.
        use_cache = use_cache and store.get_run(run_id)["config"].get("use_cache", True)
    else:
        refuse_reused_run_id(store, run_id)
    judges = build_judges(config, store, use_cache=use_cache, http_client=http_client)
    if resume:
        items = []
        calibration = store.get_run(run_id)["config"].get("calibration")
    correction = None
    if calibration:
        from legal_judge.calibration import load_correction

        correction = load_correction(store, calibration)
    if lookup is None and config.citation_lookup and config.run_checks:
        lookup = citation_lookup_from_env(store)
    run = RunState(config, judges, store, run_id, items=items, resume=resume,
                   calibration=calibration, correction=correction, lookup=lookup,
                   bound_calls=bound_calls)
    if resume:
        run.check_families()  # the stored items; a new run's are checked by start() as it stores
    return run


async def run_benchmark(items: Iterable[BenchmarkItem], config: EnsembleConfig, *, store: Store,
                        run_id: str | None = None, resume: bool = False, use_cache: bool = True,
                        http_client: Any = None,
                        on_progress: Callable[[RunProgress], None] | None = None,
                        extra_config: dict[str, Any] | None = None,
                        calibration: str | None = None, lookup: Any = None) -> RunOutcome:
    """Score ``items`` with the ensemble and store everything.

    Args:
        items: Validated benchmark items, any iterable (ignored on resume: the stored items are
            used); a generator is read once, as the run stores it, and never held.
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
        The run's outcome; ``status`` is ``completed``, ``failed`` (no item scored),
        ``interrupted`` or ``stopped``.

    Raises:
        ConfigError: anything :func:`plan_run` or :meth:`RunState.start` refuses, before any call
            and before the run exists.
    """
    plan = plan_run(items, config, store=store, run_id=run_id, resume=resume, use_cache=use_cache,
                    http_client=http_client, calibration=calibration, lookup=lookup)
    return await execute_plan(plan, on_progress=on_progress, extra_config=extra_config)


async def execute_plan(plan: RunState, *, on_progress: Callable[[RunProgress], None] | None = None,
                       extra_config: dict[str, Any] | None = None) -> RunOutcome:
    """Run a planned run online: start it (unless started already), judge every item, finish it."""
    if plan._owner is not None:  # started by the caller (the CLI, before its progress bar)
        plan.on_progress = on_progress or plan.on_progress
    else:
        plan.start(on_progress=on_progress, extra_config=extra_config)
    with fewer_collections():
        status = await plan.execute(drive(plan.job, concurrency=plan.config.concurrency,
                                          resume=plan.resume))
    return plan.finish(status)
