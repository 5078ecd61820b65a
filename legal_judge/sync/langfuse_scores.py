"""Scores and score configs in Langfuse: the configs made once by name, the scores posted in batches.

Scores are posted with ``api.scores.create`` (no SDK retries, the delivery's deadline per request),
so a 207 rejection or an outage is known and leaves the outbox row pending or parked.
"""

from __future__ import annotations

from typing import Any, cast

from langfuse.api import ConfigCategory
from langfuse.api.scores import CreateScoreRequest

from legal_judge.sync.langfuse_client import Deadline, LangfuseClient, Undeliverable
from legal_judge.sync.plan import ScoreConfigSpec, ScorePlan, span_id

__all__ = ["ensure_score_configs", "post_scores"]

_BATCH = 100


def _score_request(s: ScorePlan, config_ids: dict[str, str]) -> CreateScoreRequest:
    cid = config_ids.get(s.config) if s.config else None
    return CreateScoreRequest(
        id=s.id, trace_id=s.trace_id or None, session_id=s.session_id, name=s.name, value=s.value,
        data_type=cast(Any, s.data_type),
        observation_id=span_id(s.trace_id, s.observation_key) if s.observation_key else None,
        comment=s.comment, metadata=s.metadata, config_id=cid, source=cast(Any, s.source),
        timestamp=s.timestamp)


def post_scores(c: LangfuseClient, scores: list[ScorePlan], config_ids: dict[str, str],
                dl: Deadline) -> None:
    """Post ``scores`` (linked to the config ids by name) in batches of 100.

    Raises:
        Undeliverable: Langfuse rejected some of them (a config of that name does not fit).
    """
    for i in range(0, len(scores), _BATCH):
        batch = [_score_request(s, config_ids) for s in scores[i:i + _BATCH]]
        resp = c.lf.api.scores.create(request=batch, request_options=dl.options())
        if getattr(resp, "rejected", 0):
            msgs = "; ".join(e.message for e in resp.errors[:3])
            raise Undeliverable(
                f"Langfuse rejected {resp.rejected} scores: {msgs}",
                "make the Langfuse score config of that name match the rubric (type, range, "
                "categories); the next `legal-judge sync` retries it")


def ensure_score_configs(c: LangfuseClient, specs: list[ScoreConfigSpec],
                         dl: Deadline) -> dict[str, tuple[str, str]]:
    """Score config ``(id, data type)`` by name (created once: existing configs are reused by name)."""
    existing: dict[str, tuple[str, str]] = {}
    page = 1
    while True:
        got = c.lf.api.score_configs.get(page=page, limit=100, request_options=dl.options())
        existing.update({cfg.name: (cfg.id, str(cfg.data_type)) for cfg in got.data
                         if not cfg.is_archived})
        if page >= (got.meta.total_pages or 1):
            break
        page += 1
    for s in specs:
        if s.name in existing:
            continue
        kwargs: dict[str, Any] = {"description": s.description}
        if s.min_value is not None:
            kwargs.update(min_value=s.min_value, max_value=s.max_value)
        if s.categories:
            kwargs["categories"] = [ConfigCategory(label=lb, value=v) for lb, v in s.categories]
        cfg = c.lf.api.score_configs.create(name=s.name, data_type=s.data_type,
                                            request_options=dl.options(), **kwargs)
        existing[s.name] = (cfg.id, str(cfg.data_type))
    return existing
