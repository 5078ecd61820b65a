"""The lawyers' labels through Langfuse: the annotation queue out, their ANNOTATION scores back.

``calibrate sample`` puts the sampled traces in an annotation queue
(:func:`create_annotation_queue`); lawyers score them in the Langfuse UI (``source=ANNOTATION``,
the same score names and configs as the ensemble's) and :func:`annotation_scores` reads them
back. This module only talks to Langfuse; turning the scores into validated labels is
:mod:`legal_judge.calibration.langfuse_import`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from langfuse import Langfuse
from langfuse.api import LangfuseAPI

from legal_judge.assets.catalogue import load_assets
from legal_judge.errors import SyncError
from legal_judge.sync.langfuse_client import Deadline, client_for
from legal_judge.sync.langfuse_errors import langfuse_failure
from legal_judge.sync.langfuse_scores import ensure_score_configs
from legal_judge.sync.plan import (
    human_score_config_specs,
    human_score_name,
    score_config_specs,
)
from legal_judge.sync.settings import require_settings

__all__ = ["AnnotationScore", "annotation_scores", "create_annotation_queue", "queue_trace_ids"]

_PAGE = 100
_TRACES_PER_REQUEST = 50


@dataclass(frozen=True)
class AnnotationScore:
    """One human score as Langfuse holds it."""

    score_id: str
    trace_id: str | None
    name: str
    value: float | str | bool
    data_type: str
    author: str | None
    timestamp: str
    comment: str | None
    queue_id: str | None
    metadata: dict[str, Any]


def _api() -> LangfuseAPI:
    return client_for(require_settings()).lf.api


def _read_options(timeout_s: float) -> Any:
    # Reads are idempotent: the SDK's own retries stay on (unlike delivery's requests).
    return {"timeout_in_seconds": max(1, math.ceil(timeout_s))}


def create_annotation_queue(*, name: str, run_id: str, trace_seeds: list[str],
                            rubrics: list[dict[str, Any]], timeout_s: float = 30.0,
                            human: bool = False) -> str:
    """An annotation queue for lawyers: one score config per rubric, one item per sampled trace.

    ``trace_seeds`` are ``"{run_id}:{item_id}"``: the queue points at the judges' own traces, so
    the lawyers' scores land next to the judges' (``legal-judge sync`` delivers those traces).
    With ``human`` (an escalation's queue) the configs are the lawyers' own, ``human.<rubric>``
    and ``human.overall`` (pass/fail), so Langfuse never charts them with the judges' scores.

    Returns:
        The queue id.

    Raises:
        SyncError: Langfuse refused or was unreachable.
    """
    c = client_for(require_settings())
    dl = Deadline(timeout_s)
    wanted = {human_score_name(r["name"]) if human else r["name"] for r in rubrics}
    specs = human_score_config_specs(load_assets()) if human else score_config_specs(load_assets())
    what = "escalated items" if human else "calibration sample"
    try:
        configs = ensure_score_configs(c, [s for s in specs if s.name in wanted], dl)
        queue = c.lf.api.annotation_queues.create_queue(
            name=name, score_config_ids=[configs[n][0] for n in sorted(wanted) if n in configs],
            description=f"legal-judge {what} of run {run_id}",
            request_options=dl.options())
        for seed in trace_seeds:
            c.lf.api.annotation_queues.create_queue_item(
                queue.id, object_id=Langfuse.create_trace_id(seed=seed), object_type="TRACE",
                request_options=dl.options())
    except SyncError:
        raise
    except Exception as exc:
        raise langfuse_failure(exc, "creating the annotation queue") from None
    return str(queue.id)


def queue_trace_ids(queue_id: str, *, timeout_s: float = 30.0) -> list[str]:
    """The trace ids of an annotation queue's items.

    Raises:
        ConfigError: Langfuse is not configured. SyncError: Langfuse refused or is unreachable.
    """
    api, options = _api(), _read_options(timeout_s)
    out, page = [], 1
    try:
        while True:
            got = api.annotation_queues.list_queue_items(queue_id, page=page, limit=_PAGE,
                                                      request_options=options)
            out += [i.object_id for i in got.data if str(i.object_type) == "TRACE"]
            if page >= (got.meta.total_pages or 1):
                return out
            page += 1
    except Exception as exc:
        raise langfuse_failure(exc, f"reading annotation queue {queue_id}") from None


def annotation_scores(trace_ids: list[str], *, timeout_s: float = 30.0) -> list[AnnotationScore]:
    """Every ``source=ANNOTATION`` score on these traces, with author and queue.

    Raises:
        ConfigError: Langfuse is not configured. SyncError: Langfuse refused or is unreachable.
    """
    api, options = _api(), _read_options(timeout_s)
    out: list[AnnotationScore] = []
    try:
        for k in range(0, len(trace_ids), _TRACES_PER_REQUEST):
            batch = ",".join(trace_ids[k:k + _TRACES_PER_REQUEST])
            cursor = None
            while True:
                got = api.scores.get_many(trace_id=batch, source="ANNOTATION", limit=_PAGE,
                                          cursor=cursor, fields="details,subject,annotation",
                                          request_options=options)
                out += [_one(s) for s in got.data]
                cursor = got.meta.cursor
                if not cursor:
                    break
    except Exception as exc:
        raise langfuse_failure(exc, "reading the annotation scores") from None
    return out


def _one(s: Any) -> AnnotationScore:
    subject = getattr(s, "subject", None)
    trace = getattr(subject, "trace_id", None) or getattr(subject, "id", None) \
        if subject is not None else None
    return AnnotationScore(
        score_id=s.id, trace_id=trace, name=s.name, value=s.value, data_type=str(s.data_type),
        author=s.author_user_id, timestamp=s.timestamp.isoformat(), comment=s.comment,
        queue_id=s.queue_id, metadata=dict(s.metadata or {}))
