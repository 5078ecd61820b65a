"""Read the lawyers' ANNOTATION scores back from Langfuse (the reverse of the annotation queue).

``calibrate sample`` puts the sampled traces in an annotation queue; lawyers score them in the
Langfuse UI (``source=ANNOTATION``, the same score names and configs as the ensemble's). This
module only talks to Langfuse (REST, through the SDK's generated ``LangfuseAPI`` client); turning
the scores into validated labels is :mod:`legal_judge.calibration.langfuse_import`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from langfuse.api import LangfuseAPI

from legal_judge.errors import SyncError
from legal_judge.sync.langfuse_sync import require_settings

__all__ = ["AnnotationScore", "annotation_scores", "queue_trace_ids"]

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


def _api(timeout_s: float) -> LangfuseAPI:
    s = require_settings()
    return LangfuseAPI(base_url=s.base_url, username=s.public_key, password=s.secret_key,
                       x_langfuse_public_key=s.public_key, timeout=timeout_s)


def queue_trace_ids(queue_id: str, *, timeout_s: float = 30.0) -> list[str]:
    """The trace ids of an annotation queue's items.

    Raises:
        ConfigError: Langfuse is not configured. SyncError: Langfuse refused or is unreachable.
    """
    api = _api(timeout_s)
    out, page = [], 1
    try:
        while True:
            got = api.annotation_queues.list_queue_items(queue_id, page=page, limit=_PAGE)
            out += [i.object_id for i in got.data if str(i.object_type) == "TRACE"]
            if page >= (got.meta.total_pages or 1):
                return out
            page += 1
    except Exception as exc:
        raise SyncError(f"cannot read annotation queue {queue_id}: {exc}",
                        fix="check the queue id (Langfuse > Annotation queues), "
                            "LANGFUSE_BASE_URL and the keys") from None


def annotation_scores(trace_ids: list[str], *, timeout_s: float = 30.0) -> list[AnnotationScore]:
    """Every ``source=ANNOTATION`` score on these traces, with author and queue.

    Raises:
        ConfigError: Langfuse is not configured. SyncError: Langfuse refused or is unreachable.
    """
    api = _api(timeout_s)
    out: list[AnnotationScore] = []
    try:
        for k in range(0, len(trace_ids), _TRACES_PER_REQUEST):
            batch = ",".join(trace_ids[k:k + _TRACES_PER_REQUEST])
            cursor = None
            while True:
                got = api.scores.get_many(trace_id=batch, source="ANNOTATION", limit=_PAGE,
                                          cursor=cursor, fields="details,subject,annotation")
                out += [_one(s) for s in got.data]
                cursor = got.meta.cursor
                if not cursor:
                    break
    except Exception as exc:
        raise SyncError(f"cannot read the annotation scores: {exc}",
                        fix="check LANGFUSE_BASE_URL and the keys; rerun to retry") from None
    return out


def _one(s: Any) -> AnnotationScore:
    subject = getattr(s, "subject", None)
    trace = getattr(subject, "trace_id", None) or getattr(subject, "id", None) \
        if subject is not None else None
    return AnnotationScore(
        score_id=s.id, trace_id=trace, name=s.name, value=s.value, data_type=str(s.data_type),
        author=s.author_user_id, timestamp=s.timestamp.isoformat(), comment=s.comment,
        queue_id=s.queue_id, metadata=dict(s.metadata or {}))
