"""What a run's start and finish call besides the run itself: its judges and identity, the refusal
of a reused run id (its identity is :func:`~legal_judge.benchmark.ensemble_config.ensemble_judge_id`,
shared with calibrations), the Langfuse prompt versions it records and the Langfuse sync at its end; and
the garbage-collector setting it judges under.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from legal_judge.benchmark.ensemble_config import EnsembleConfig
from legal_judge.errors import ConfigError
from legal_judge.judge.judge import Judge
from legal_judge.store import Store

__all__ = ["GC_YOUNG_THRESHOLD", "build_judges", "fewer_collections",
           "langfuse_prompt_versions", "refuse_reused_run_id", "sync_run_at_end"]

#: Allocations between two young-generation collections while a run judges (Python's default:
#: 700). A judged call allocates a few thousand containers (SDK, HTTP, pydantic), nearly all
#: freed by reference counting; collecting every 700 cost 0.8 s of CPU in 5.6 s for 900 calls,
#: at 10,000 it is 0.3 s. Cycles wait a little longer to be freed (a few MB at most).
GC_YOUNG_THRESHOLD = 10_000


@contextmanager
def fewer_collections() -> Iterator[None]:
    """Raise the young-generation threshold to :data:`GC_YOUNG_THRESHOLD` while the block runs,
    and restore the caller's setting after (a library call leaves the process as it found it)."""
    old = gc.get_threshold()
    gc.set_threshold(max(old[0], GC_YOUNG_THRESHOLD), *old[1:])
    try:
        yield
    finally:
        gc.set_threshold(*old)


def langfuse_prompt_versions(warnings: list[str]) -> dict[str, int] | None:
    """The Langfuse prompt versions a run uses, when Langfuse is configured and reachable.

    A failure to read them adds a warning: the run goes on without them.
    """
    from legal_judge.sync.settings import configured

    if not configured():
        return None
    from legal_judge.errors import LegalJudgeError
    from legal_judge.sync.langfuse_prompts import resolve_prompt_versions

    try:
        return resolve_prompt_versions()
    except LegalJudgeError as exc:  # Langfuse down or prompts not pushed: the run goes on
        warnings.append(f"Langfuse prompt versions not recorded: {exc.message}")
        return None


def sync_run_at_end(store: Store, run_id: str, warnings: list[str]) -> None:
    """Queue the run for Langfuse and deliver it now; a delivery left pending adds a warning.

    A shard's own run is not synced: the sharded run it is merged into is, once.
    """
    from legal_judge.sync.sink import get_sink

    if "shard" in store.get_run(run_id)["config"]:
        return
    sink = get_sink()
    sink.enqueue_run(store, run_id)
    report = sink.flush(store, timeout_s=10.0)
    if report.configured and report.incomplete:
        warnings.append(report.advice)


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


def refuse_reused_run_id(store: Store, run_id: str) -> None:
    """Refuse a new run whose id a stored run already has.

    Raises:
        ConfigError: ``run-id-exists``, naming the stored run's resume command.
    """
    # Without this a reused --run-id ends in a raw UNIQUE-constraint traceback.
    from legal_judge.errors import NotFoundError
    from legal_judge.run_owner import resume_command

    try:
        existing = store.get_run(run_id)
    except NotFoundError:
        return
    resume = resume_command(existing) or f"legal-judge run --resume {run_id}"
    raise ConfigError(f"a run '{run_id}' already exists in {store.path}", code="run-id-exists",
                      fix=f"finish it with `{resume}` or pick another --run-id")
