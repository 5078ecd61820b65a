"""The only module that imports ``langfuse`` (SDK v5): delivery, prompts, datasets, evaluators.

Configuration is the SDK's: ``LANGFUSE_PUBLIC_KEY``, ``LANGFUSE_SECRET_KEY``, ``LANGFUSE_BASE_URL``
(``LANGFUSE_TIMEOUT`` seconds per request, default 5). The rest of the package talks to
:mod:`legal_judge.sync.sink`, which calls :func:`deliver_outbox` here.

Delivery is synchronous and bounded: spans go through a recording OTLP exporter (so a failed export
is known, not only logged), ``force_flush`` gets the remaining time, scores are posted with
``api.scores.create`` (``max_retries=0``, per-request timeout) so a 207 rejection or an outage leaves
the outbox row pending. Observation ids are derived from seeds through a deterministic OpenTelemetry
id generator and start/end times come from the store, so a resend updates instead of duplicating.

Evaluator adapter example (``run_experiment`` calls it once per item)::

    from langfuse import get_client
    from legal_judge.sync.langfuse_sync import ensemble_evaluator

    def score_fn(item):            # BenchmarkItem -> EnsembleResult, e.g. the runner's ensemble
        return my_ensemble.judge_one(item)

    get_client().run_experiment(
        name="legal-judge-smoke",
        data=[{"input": {"id": "q1", "prompt": "Is a verbal lease valid?"}}],
        task=lambda *, item, **kw: my_system_under_test(item["input"]["prompt"]),
        evaluators=[ensemble_evaluator(score_fn)],
    )
"""

from __future__ import annotations

import base64
import contextvars
import math
import os
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast
from urllib.parse import quote

from langfuse import Evaluation, Langfuse, LangfuseOtelSpanAttributes, propagate_attributes
from langfuse.api import ConfigCategory, CreateTextPromptRequest, Prompt_Text
from langfuse.api.commons.errors import NotFoundError as LfNotFound
from langfuse.api.scores import CreateScoreRequest
from langfuse.model import TextPromptClient
from opentelemetry import context as otel_context
from opentelemetry import trace as otel_trace
from opentelemetry.exporter.otlp.proto.http import Compression
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SpanExporter, SpanExportResult
from opentelemetry.sdk.trace.id_generator import IdGenerator, RandomIdGenerator

from legal_judge.assets.catalogue import load_assets
from legal_judge.errors import ConfigError, InputError, Problem, SyncError
from legal_judge.models import BenchmarkItem, EnsembleResult
from legal_judge.store import Store
from legal_judge.sync.mask import Masker, load_masker
from legal_judge.sync.plan import (
    ExperimentLink,
    ObsPlan,
    ScoreConfigSpec,
    ScorePlan,
    TracePlan,
    det_id,
    run_plans,
    score_config_specs,
    span_id,
)
from legal_judge.sync.plan_dataset import (
    DATASET_ITEM_KEY,
    EXPERIMENT_ENVIRONMENT,
    dataset_run_links,
    is_dataset_run,
)
from legal_judge.sync.plan_debias import debias_plan
from legal_judge.sync.plan_estimate import estimate_scores
from legal_judge.sync.plan_other import audit_plan, calibration_plan, label_scores
from legal_judge.sync.prompts import (
    judge_prompt_name,
    local_prompts,
    parse_references,
    reference_label,
    remote_matches,
)

__all__ = [
    "LangfuseSettings", "configured", "require_settings", "deliver_outbox", "diff_prompts", "ensemble_evaluator",
    "evaluations_from_result", "link_dataset_run", "load_langfuse_dataset", "promote_prompt", "pull_prompt",
    "push_dataset", "push_prompts", "resolve_prompt_versions", "settings_from_env",
]

_NEXT_SPAN_ID: contextvars.ContextVar[int | None] = contextvars.ContextVar("lj_span_id", default=None)


@dataclass(frozen=True)
class LangfuseSettings:
    """Where and how to reach Langfuse."""

    public_key: str
    secret_key: str
    base_url: str
    timeout_s: float = 5.0


def settings_from_env() -> LangfuseSettings | None:
    """Settings from the SDK's environment variables, or None when any of the three is missing."""
    pk, sk = os.environ.get("LANGFUSE_PUBLIC_KEY"), os.environ.get("LANGFUSE_SECRET_KEY")
    url = os.environ.get("LANGFUSE_BASE_URL") or os.environ.get("LANGFUSE_HOST")
    if not (pk and sk and url):
        return None
    return LangfuseSettings(pk, sk, url.rstrip("/"), float(os.environ.get("LANGFUSE_TIMEOUT", 5)))


def configured() -> bool:
    """True when LANGFUSE_PUBLIC_KEY, LANGFUSE_SECRET_KEY and LANGFUSE_BASE_URL are set."""
    return settings_from_env() is not None


def require_settings() -> LangfuseSettings:
    """The settings, or a ConfigError that names the missing variables."""
    s = settings_from_env()
    if s is None:
        raise ConfigError("Langfuse is not configured", code="langfuse-unconfigured",
                          fix="set LANGFUSE_PUBLIC_KEY, LANGFUSE_SECRET_KEY and LANGFUSE_BASE_URL")
    return s


# client ----------------------------------------------------------------------------------------
class _SeededIds(IdGenerator):
    """Span ids from a context variable when set (deterministic observations), else random."""

    def __init__(self) -> None:
        self._random = RandomIdGenerator()

    def generate_span_id(self) -> int:
        return _NEXT_SPAN_ID.get() or self._random.generate_span_id()

    def generate_trace_id(self) -> int:
        return self._random.generate_trace_id()


class _RecordingExporter(SpanExporter):
    """The SDK's OTLP exporter, counting exports that failed (the SDK only logs them)."""

    def __init__(self, inner: SpanExporter) -> None:
        self.inner, self.failures, self.exported = inner, 0, 0

    def export(self, spans: Any) -> SpanExportResult:
        try:
            result = self.inner.export(spans)
        except Exception:  # transport errors must count as failures, never escape the BSP thread
            result = SpanExportResult.FAILURE
        if result == SpanExportResult.SUCCESS:
            self.exported += len(spans)
        else:
            self.failures += 1
        return result

    def shutdown(self) -> None:
        self.inner.shutdown()

    def force_flush(self, timeout_millis: int = 30000) -> bool:
        return True


@dataclass
class _Client:
    settings: LangfuseSettings
    lf: Langfuse
    provider: TracerProvider
    exporter: _RecordingExporter


_CLIENT: _Client | None = None


def _client(settings: LangfuseSettings) -> _Client:
    """One client per settings; a change of settings shuts the old one down (SDK singletons)."""
    global _CLIENT
    if _CLIENT is not None and _CLIENT.settings == settings:
        return _CLIENT
    if _CLIENT is not None:
        from langfuse._client.resource_manager import LangfuseResourceManager  # private: reset

        _CLIENT.provider.shutdown()
        LangfuseResourceManager.reset()
    auth = base64.b64encode(f"{settings.public_key}:{settings.secret_key}".encode()).decode()
    from langfuse._version import __version__ as sdk_version

    # the same endpoint and headers the SDK's own exporter uses
    otlp = OTLPSpanExporter(
        endpoint=f"{settings.base_url}/api/public/otel/v1/traces",
        headers={"Authorization": f"Basic {auth}", "x-langfuse-sdk-name": "python",
                 "x-langfuse-sdk-version": sdk_version, "x-langfuse-public-key": settings.public_key,
                 "x-langfuse-ingestion-version": "4"},
        timeout=settings.timeout_s, compression=Compression.Gzip)
    exporter = _RecordingExporter(otlp)
    provider = TracerProvider(id_generator=_SeededIds())
    lf = Langfuse(public_key=settings.public_key, secret_key=settings.secret_key,
                  base_url=settings.base_url, timeout=math.ceil(settings.timeout_s),
                  tracer_provider=provider, span_exporter=exporter, sample_rate=1.0,
                  flush_interval=0.2)
    _CLIENT = _Client(settings, lf, provider, exporter)
    return _CLIENT


class _Deadline:
    def __init__(self, seconds: float) -> None:
        self.end = time.monotonic() + seconds

    def left(self) -> float:
        return self.end - time.monotonic()

    def options(self) -> Any:
        left = self.left()
        if left <= 0:
            raise TimeoutError("flush timeout reached")
        return {"timeout_in_seconds": max(1, math.ceil(left)), "max_retries": 0}


# traces and scores -----------------------------------------------------------------------------
def _ns(dt: Any) -> int:
    return int(dt.timestamp() * 1e9)


def _start(c: _Client, tid: str, o: ObsPlan, parent: Any, base: Any) -> Any:
    ctx = otel_trace.set_span_in_context(parent, base)
    token = _NEXT_SPAN_ID.set(int(span_id(tid, o.key), 16))
    try:
        # private SDK helpers: the public API cannot set start times or span ids
        otel_span = c.lf._otel_tracer.start_span(o.name, context=ctx, start_time=_ns(o.start))
    finally:
        _NEXT_SPAN_ID.reset(token)
    if o.parent is None:
        otel_span.set_attribute(LangfuseOtelSpanAttributes.AS_ROOT, True)
    prompt = None
    if o.prompt is not None:
        prompt = TextPromptClient(Prompt_Text(name=o.prompt[0], version=o.prompt[1], prompt="",
                                              config={}, labels=[], tags=[]))
    extra: dict[str, Any] = {}
    if o.as_type == "generation":
        extra = {"model": o.model, "model_parameters": o.model_parameters,
                 "usage_details": o.usage, "cost_details": o.cost, "prompt": prompt}
    return c.lf._create_observation_from_otel_span(
        otel_span=otel_span, as_type=cast(Any, o.as_type), input=o.input, output=o.output,
        metadata=o.metadata, level=cast(Any, o.level), status_message=o.status_message, **extra)


def _emit(c: _Client, plan: TracePlan) -> None:
    tid = plan.trace_id
    remote = otel_trace.NonRecordingSpan(otel_trace.SpanContext(
        trace_id=int(tid, 16), span_id=int(span_id(tid, "__remote_parent__"), 16), is_remote=True,
        trace_flags=otel_trace.TraceFlags(otel_trace.TraceFlags.SAMPLED)))
    with propagate_attributes(session_id=plan.session_id, trace_name=plan.name, tags=plan.tags,
                              metadata={k: str(v)[:200] for k, v in plan.metadata.items()}):
        base = otel_context.get_current()
        made: dict[str, Any] = {}
        for o in plan.observations:
            parent = made[o.parent]._otel_span if o.parent else remote
            made[o.key] = _start(c, tid, o, parent, base)
            if plan.experiment is not None:
                made[o.key]._otel_span.set_attributes(_experiment_attributes(plan.experiment,
                                                                             root=o.parent is None))
        for o in reversed(plan.observations):
            made[o.key].end(end_time=_ns(o.end))


def _experiment_attributes(link: ExperimentLink, *, root: bool) -> dict[str, str]:
    """The span attributes of a dataset-run item, as the SDK's ``run_experiment`` sets them: the
    experiment ids on every span of the trace, its description and expected output on the root."""
    a = LangfuseOtelSpanAttributes
    attrs = {a.EXPERIMENT_ID: link.experiment_id, a.EXPERIMENT_NAME: link.experiment_name,
             a.EXPERIMENT_METADATA: link.metadata, a.EXPERIMENT_DATASET_ID: link.dataset_id,
             a.EXPERIMENT_ITEM_ID: link.item_id, a.EXPERIMENT_ITEM_METADATA: link.item_metadata,
             a.EXPERIMENT_ITEM_ROOT_OBSERVATION_ID: link.root_observation_id,
             a.ENVIRONMENT: EXPERIMENT_ENVIRONMENT}
    if root:
        attrs.update({a.EXPERIMENT_DESCRIPTION: link.description,
                      a.EXPERIMENT_ITEM_EXPECTED_OUTPUT: link.expected_output})
    return attrs


_PROJECT_IDS: dict[LangfuseSettings, str] = {}


def _project_id(c: _Client) -> str:
    """The project the keys belong to (the experiment id derives from it); asked once."""
    if c.settings not in _PROJECT_IDS:
        got = c.lf.api.projects.get(request_options={
            "timeout_in_seconds": max(1, math.ceil(c.settings.timeout_s)), "max_retries": 0})
        if not got.data:
            raise SyncError("Langfuse returned no project for these keys",
                            fix="check LANGFUSE_PUBLIC_KEY and LANGFUSE_SECRET_KEY")
        _PROJECT_IDS[c.settings] = str(got.data[0].id)
    return _PROJECT_IDS[c.settings]


def link_dataset_run(store: Store, run_id: str, plans: list[TracePlan], *,
                     masker: Masker) -> list[TracePlan]:
    """Mark the traces of a run over a Langfuse dataset as the items of its dataset run.

    A run over a file is returned unchanged (no request is made).
    """
    if not is_dataset_run(store, run_id):
        return plans
    links = dataset_run_links(store, run_id, project_id=_project_id(_client(require_settings())),
                              masker=masker)
    for plan in plans:
        plan.experiment = links.get(plan.trace_id)
    return plans


def _score_request(s: ScorePlan, config_ids: dict[str, str]) -> CreateScoreRequest:
    cid = config_ids.get(s.config) if s.config else None
    return CreateScoreRequest(
        id=s.id, trace_id=s.trace_id or None, session_id=s.session_id, name=s.name, value=s.value,
        data_type=cast(Any, s.data_type),
        observation_id=span_id(s.trace_id, s.observation_key) if s.observation_key else None,
        comment=s.comment, metadata=s.metadata, config_id=cid, source=cast(Any, s.source),
        timestamp=s.timestamp)


class Undeliverable(Exception):
    """An entity no retry can deliver as it stands: it is parked with this reason and fix."""

    def __init__(self, reason: str, fix: str) -> None:
        super().__init__(reason)
        self.reason, self.fix = reason, fix


_RETRY_PARKED = "then `legal-judge sync --retry-parked`"


def _post_scores(c: _Client, scores: list[ScorePlan], config_ids: dict[str, str],
                 dl: _Deadline) -> None:
    for i in range(0, len(scores), 100):
        batch = [_score_request(s, config_ids) for s in scores[i:i + 100]]
        resp = c.lf.api.scores.create(request=batch, request_options=dl.options())
        if getattr(resp, "rejected", 0):
            msgs = "; ".join(e.message for e in resp.errors[:3])
            raise Undeliverable(
                f"Langfuse rejected {resp.rejected} scores: {msgs}",
                "make the Langfuse score config of that name match the rubric (type, range, "
                "categories); the next `legal-judge sync` retries it")


def ensure_score_configs(c: _Client, specs: list[ScoreConfigSpec],
                         dl: _Deadline) -> dict[str, tuple[str, str]]:
    """Score config ids by name (created once: existing configs are reused by name)."""
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


def _flush_spans(c: _Client, dl: _Deadline) -> None:
    before = c.exporter.failures
    left = dl.left()
    if left <= 0 or not c.provider.force_flush(timeout_millis=int(left * 1000)):
        raise TimeoutError("span export did not finish within the flush timeout")
    if c.exporter.failures != before:
        raise SyncError("Langfuse did not accept the span export (OTLP)",
                        fix="check LANGFUSE_BASE_URL and the keys; `legal-judge sync` retries")


@dataclass
class DeliveryResult:
    """What one delivery attempt did.

    ``parked``: row id -> (reason, fix) of rows newly parked (a row retried by itself and parked
    again is not new); ``retried``: parked rows tried again.
    """

    delivered: list[int] = field(default_factory=list)
    failed: dict[int, str] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    timed_out: bool = False
    parked: dict[int, tuple[str, str]] = field(default_factory=dict)
    retried: list[int] = field(default_factory=list)
    quiet: set[int] = field(default_factory=set)


def _plans_for(row: dict[str, Any], store: Store, masker: Masker,
               configs: dict[str, tuple[str, str]]) -> tuple[list[TracePlan], list[ScorePlan],
                                                              list[str]]:
    kind, eid = row["entity_kind"], row["entity_id"]
    if kind == "run":
        plans = run_plans(store, eid, masker=masker, configs=set(configs),
                          judge_name=judge_prompt_name())
        return link_dataset_run(store, eid, plans, masker=masker), estimate_scores(store, eid), []
    if kind == "audit":
        return [audit_plan(store, eid, masker=masker)], [], []
    if kind == "calibration":
        return [calibration_plan(store, eid, masker=masker)], [], []
    if kind in ("human_labels", "labels"):
        scores, skipped = label_scores(store, eid, masker=masker,
                                       kinds={k: v[1] for k, v in configs.items()})
        return [], [*scores, *estimate_scores(store, eid)], [
            f"label not mapped to a score config: {s}" for s in skipped]
    if kind == "debias_experiment":
        return [debias_plan(store, eid, masker=masker)], [], []
    raise Undeliverable(
        f"legal-judge {_version()} cannot deliver '{kind}' entities (queued by a newer version?)",
        "upgrade legal-judge: a new version retries parked entities by itself")


def _version() -> str:
    from legal_judge import __version__

    return __version__


def _local_problem(row: dict[str, Any], exc: Exception) -> tuple[str, str]:
    """Reason and fix for an entity whose Langfuse objects cannot be built from the store."""
    if isinstance(exc, Undeliverable):
        return exc.reason, exc.fix
    what = f"{row['entity_kind']} {row['entity_id']}"
    if isinstance(exc, KeyError):
        return (f"the store no longer holds {what}",
                f"`legal-judge sync --drop {row['entity_id']}` removes it from the outbox")
    return (f"cannot build the Langfuse objects of {what} from the store: "
            f"{type(exc).__name__}: {exc}",
            f"report it (`legal-judge sync --status` shows it), {_RETRY_PARKED} after an upgrade")


def _refused(exc: Exception) -> tuple[str, str] | None:
    """Reason and fix when Langfuse refused this entity's content (a resend would not help)."""
    if isinstance(exc, Undeliverable):
        return exc.reason, exc.fix
    status = getattr(exc, "status_code", None)
    if status in (400, 404, 413, 422):
        body = str(getattr(exc, "body", "") or exc)[:300]
        return (f"Langfuse refused it (HTTP {status}): {body}",
                "correct what Langfuse names (or upgrade legal-judge); the next "
                "`legal-judge sync` retries it")
    return None


def deliver_outbox(store: Store, *, timeout_s: float = 10.0, masker: Masker | None = None,
                   retry_parked: bool = False) -> DeliveryResult:
    """Deliver every pending outbox row to Langfuse within ``timeout_s`` (plus at most ~1 s).

    Rows delivered are marked synced; a row that failed for a reason a rerun can resolve (an
    outage, a timeout) is marked with its error and stays pending. A row that cannot be delivered
    as it stands (a kind this version does not know, an entity the store no longer holds, content
    Langfuse refuses) is parked with its reason and fix, and never blocks the others. Parked rows
    are retried: refused content by every sync (the fix is made in Langfuse), the others by
    another legal-judge version (the fix is an upgrade), all of them with ``retry_parked``.
    Never raises for Langfuse being down or slow.
    """
    result = DeliveryResult()
    # Refused content is retried by every sync (its fix is made in Langfuse), the rest by another
    # version (the fix is an upgrade) or on request; a retried row parked again is not news.
    auto = {p["id"] for p in store.outbox_parked()
            if p["park_retry"] == "sync" or p["parked_by"] != _version()}
    retry = [p["id"] for p in store.outbox_parked() if retry_parked or p["id"] in auto]
    rows = store.outbox_pending()
    if not rows and not retry:
        return result
    masker = masker if masker is not None else load_masker()
    dl = _Deadline(timeout_s)
    try:
        c = _client(require_settings())
        configs = ensure_score_configs(c, score_config_specs(load_assets()), dl)
    except Exception as exc:  # outage, auth, timeout: nothing delivered, the outbox stays
        _fail(store, result, [r["id"] for r in rows], exc)
        return result
    if retry:
        store.outbox_unpark(retry)
        result.retried = retry
        result.quiet = auto if not retry_parked else set()
        rows = store.outbox_pending()
    config_ids = {k: v[0] for k, v in configs.items()}
    for row in rows:
        try:
            traces, scores, notes = _plans_for(row, store, masker, configs)
        except Exception as exc:  # built from the store alone: the same next time
            _park(store, result, row["id"], *_local_problem(row, exc), retry="upgrade")
            continue
        try:
            for plan in traces:
                _emit(c, plan)
                scores = [*scores, *plan.scores]
            _flush_spans(c, dl)
            _post_scores(c, scores, config_ids, dl)
        except Exception as exc:
            refused = _refused(exc)
            if refused is not None:
                _park(store, result, row["id"], *refused, retry="sync")
                continue
            _fail(store, result, [row["id"]], exc)
            if result.timed_out:
                rest = [r["id"] for r in rows
                        if r["id"] not in result.failed and r["id"] not in result.parked
                        and r["id"] not in result.delivered]
                _fail(store, result, rest, exc)
                break
            continue
        result.notes += notes
        store.outbox_mark([row["id"]])
        result.delivered.append(row["id"])
    return result


def _park(store: Store, result: DeliveryResult, row_id: int, reason: str, fix: str, *,
          retry: str) -> None:
    store.outbox_park([row_id], reason=reason, fix=fix, by=_version(), retry=retry)
    if row_id not in result.quiet:
        result.parked[row_id] = (reason, fix)


def _fail(store: Store, result: DeliveryResult, ids: list[int], exc: BaseException) -> None:
    if not ids:
        return
    message = f"{type(exc).__name__}: {exc}"
    if isinstance(exc, TimeoutError) or "timed out" in str(exc).lower() or "Timeout" in message:
        result.timed_out = True
    store.outbox_mark(ids, error=message)
    result.failed.update({i: message for i in ids})


# prompts ---------------------------------------------------------------------------------------
def _enc(name: str) -> str:
    return quote(name, safe="")


def _get(c: _Client, name: str, *, label: str | None = None, version: int | None = None,
         resolve: bool = True) -> Any:
    try:
        # resolve is sent either way: `prompts pull` promises resolved references whatever the
        # server's default.
        return c.lf.api.prompts.get(_enc(name), label=label, version=version, resolve=resolve,
                                    request_options={"max_retries": 0})
    except LfNotFound:
        return None


def _relabel(c: _Client, name: str, version: int, label: str) -> Any:
    return c.lf.api.prompt_version.update(name=_enc(name), version=version, new_labels=[label])


def push_prompts(*, label: str | None = None, judge_name: str | None = None) -> list[dict[str, Any]]:
    """Create a Langfuse version for each repository prompt whose content hash changed.

    Only ``label`` is set, and only on the versions this push creates or finds holding the
    repository's content (``latest`` is Langfuse's own); the judge prompt references its rubrics
    with the same label (``latest`` without one), so a staging push leaves production as it was.

    Returns:
        One row per prompt: name, kind, action (``created``/``labeled``/``unchanged``), version,
        sha256.

    Raises:
        SyncError: Langfuse refused or was unreachable.
    """
    c = _client(require_settings())
    rows = []
    try:
        for lp in local_prompts(load_assets(), judge_name=judge_name, label=reference_label(label)):
            # The version holding this label already may hold the content though a newer one
            # (a UI edit) took `latest`: then nothing is created for this label.
            found = [p for p in (_get(c, lp.name, label=label, resolve=False) if label else None,
                                 _get(c, lp.name, label="latest", resolve=False))
                     if p is not None and remote_matches(lp, p.prompt, p.config)]
            if found:
                cur, action = found[0], "unchanged"
                if label and label not in cur.labels:
                    _relabel(c, lp.name, int(cur.version), label)
                    action = "labeled"
                rows.append({"name": lp.name, "kind": lp.kind, "action": action,
                             "version": cur.version, "sha256": lp.sha256})
                continue
            made = c.lf.api.prompts.create(request=CreateTextPromptRequest(
                name=lp.name, prompt=lp.text, config=lp.config, labels=[label] if label else [],
                tags=["legal_judge", lp.kind],
                commit_message=f"legal-judge push ({lp.config['legal_judge']['asset']})"))
            rows.append({"name": lp.name, "kind": lp.kind, "action": "created",
                         "version": made.version, "sha256": lp.sha256})
    except (ConfigError, SyncError):
        raise
    except Exception as exc:
        raise SyncError(f"prompt push failed: {exc}",
                        fix="check LANGFUSE_BASE_URL and the keys, then run it again") from None
    return rows


def _references(c: _Client, raw: str) -> list[dict[str, Any]]:
    """Each reference of a raw prompt with the version it resolves to now (None: unresolved)."""
    out = []
    for ref in parse_references(raw):
        version = int(ref["version"]) if "version" in ref else None
        dep = _get(c, ref.get("name", ""), label=None if version else ref.get("label"),
                   version=version, resolve=False)
        out.append({"name": ref.get("name"), "label": ref.get("label"),
                    "version": int(dep.version) if dep is not None else None})
    return out


def pull_prompt(name: str, *, label: str | None = "production",
                version: int | None = None) -> dict[str, Any]:
    """One prompt version with its references resolved, and the versions they resolved to.

    Returns:
        ``name``, ``version``, ``labels``, ``prompt`` (resolved text), ``config`` and
        ``references`` (name, label, resolved version per reference of the stored text).
    """
    c = _client(require_settings())
    by_label = None if version else label
    try:
        got = _get(c, name, label=by_label, version=version)
        raw = _get(c, name, label=by_label, version=version, resolve=False) if got else None
        refs = _references(c, raw.prompt) if raw is not None else []
    except Exception as exc:
        raise SyncError(f"cannot fetch prompt {name}: {exc}", fix="check LANGFUSE_BASE_URL") from None
    if got is None:
        from legal_judge.errors import NotFoundError

        raise NotFoundError(f"no Langfuse prompt {name} with {'version ' + str(version) if version else 'label ' + str(label)}",
                            fix="`legal-judge prompts diff` lists the prompts and their versions")
    return {"name": got.name, "version": got.version, "labels": list(got.labels),
            "prompt": got.prompt, "config": got.config, "references": refs}


def promote_prompt(name: str, version: int, *, label: str = "production") -> list[str]:
    """Move ``label`` to ``version`` of ``name``; returns that version's labels.

    Raises:
        ConfigError: the version references its rubrics by another label (labelled ``label`` it
            would compose the other label's rubrics).
        NotFoundError: no such version.
    """
    c = _client(require_settings())
    try:
        raw = _get(c, name, version=version, resolve=False)
        refs = parse_references(raw.prompt) if raw is not None else []
        others = sorted({r["label"] for r in refs
                         if "version" not in r and r.get("label") not in (None, label)})
        if others:
            raise ConfigError(
                f"{name} v{version} references its rubrics by label '{others[0]}': labelled "
                f"'{label}' it would compose the '{others[0]}' rubrics",
                code="prompt-reference-label",
                fix=f"`legal-judge prompts push --label {label}` labels the rubric versions "
                    f"'{label}' and creates the judge version that references them")
        got = _relabel(c, name, version, label)
    except LfNotFound:
        from legal_judge.errors import NotFoundError

        raise NotFoundError(f"no Langfuse prompt {name} version {version}",
                            fix="`legal-judge prompts diff` shows the versions") from None
    except ConfigError:
        raise
    except Exception as exc:
        raise SyncError(f"promote failed: {exc}", fix="check LANGFUSE_BASE_URL") from None
    return list(got.labels)


def diff_prompts(*, label: str = "latest") -> list[dict[str, Any]]:
    """Repository prompts against Langfuse's ``label`` version: same / changed / missing.

    The judge prompt is compared as composed for the label that version's references follow
    (recorded in its config), so a judge pushed with ``--label production`` is "same" under any
    label as long as the repository's content did not change.
    """
    c = _client(require_settings())
    out = []
    assets = load_assets()
    try:
        for lp in local_prompts(assets, label=label):
            cur = _get(c, lp.name, label=label, resolve=False)
            ref = ((cur.config or {}).get("legal_judge") or {}).get("rubric_label") \
                if cur is not None and lp.kind == "judge" else None
            if ref and ref != label:
                lp = next(p for p in local_prompts(assets, label=str(ref)) if p.name == lp.name)
            remote = (cur.config or {}).get("sha256") if cur is not None else None
            out.append({"name": lp.name, "local_sha256": lp.sha256, "remote_version":
                        cur.version if cur else None, "remote_sha256": remote,
                        "status": "missing" if cur is None else
                        ("same" if remote_matches(lp, cur.prompt, cur.config) else "changed")})
    except Exception as exc:
        raise SyncError(f"prompt diff failed: {exc}", fix="check LANGFUSE_BASE_URL") from None
    return out


def create_annotation_queue(*, name: str, run_id: str, trace_seeds: list[str],
                            rubrics: list[dict[str, Any]], timeout_s: float = 30.0) -> str:
    """An annotation queue for lawyers: one score config per rubric, one item per sampled trace.

    ``trace_seeds`` are ``"{run_id}:{item_id}"``: the queue points at the judges' own traces, so
    the lawyers' scores land next to the judges' (``legal-judge sync`` delivers those traces).

    Returns:
        The queue id.

    Raises:
        SyncError: Langfuse refused or was unreachable.
    """
    c = _client(require_settings())
    dl = _Deadline(timeout_s)
    wanted = {r["name"] for r in rubrics}
    try:
        configs = ensure_score_configs(
            c, [s for s in score_config_specs(load_assets()) if s.name in wanted], dl)
        queue = c.lf.api.annotation_queues.create_queue(
            name=name, score_config_ids=[configs[n][0] for n in sorted(wanted) if n in configs],
            description=f"legal-judge calibration sample of run {run_id}",
            request_options=dl.options())
        for seed in trace_seeds:
            c.lf.api.annotation_queues.create_queue_item(
                queue.id, object_id=Langfuse.create_trace_id(seed=seed), object_type="TRACE",
                request_options=dl.options())
    except SyncError:
        raise
    except Exception as exc:
        raise SyncError(f"cannot create the annotation queue: {exc}",
                        fix="check LANGFUSE_BASE_URL and the keys; the CSV template still works") from None
    return str(queue.id)


def resolve_prompt_versions(*, label: str = "production",
                            judge_name: str | None = None) -> dict[str, int]:
    """The composed prompt versions a run uses: the judge prompt and each rubric it references.

    The runner records the result in its run config under ``langfuse_prompts`` (generations then
    link to that judge prompt version; old runs keep theirs).
    """
    c = _client(require_settings())
    name = judge_name or judge_prompt_name()
    try:
        judge = _get(c, name, label=label, resolve=False)
        if judge is None:
            raise SyncError(f"no Langfuse prompt {name} with label {label}",
                            fix="run `legal-judge prompts push` and promote a version")
        versions = {name: int(judge.version)}
        for ref in _references(c, judge.prompt):
            if ref["version"] is not None:
                versions[str(ref["name"])] = int(ref["version"])
    except SyncError:
        raise
    except Exception as exc:
        raise SyncError(f"cannot resolve prompt versions: {exc}", fix="check LANGFUSE_BASE_URL") from None
    return versions


# datasets --------------------------------------------------------------------------------------
def push_dataset(path: str | Path, *, name: str, masker: Masker | None = None) -> int:
    """Upload a benchmark file as a Langfuse dataset (item ids derive from name + item id)."""
    from legal_judge.dataset import load_dataset

    items = load_dataset(path)
    masker = masker if masker is not None else load_masker()
    c = _client(require_settings())
    try:
        c.lf.create_dataset(name=name, description=f"legal-judge benchmark from {Path(path).name}",
                            metadata={"source": "legal-judge"})
        for it in items:
            c.lf.create_dataset_item(
                dataset_name=name, id=det_id(f"dataset:{name}:{it.id}"),
                input=masker.deep({"prompt": it.prompt, "response": it.response,
                                   "jurisdiction": it.jurisdiction,
                                   "system_under_test": it.system_under_test}),
                expected_output=masker.deep({"expected_signals": it.expected_signals}),
                metadata=masker.deep({"item_id": it.id, **it.metadata}))
    except Exception as exc:
        raise SyncError(f"dataset push failed: {exc}", fix="check LANGFUSE_BASE_URL") from None
    return len(items)


def load_langfuse_dataset(name: str) -> list[BenchmarkItem]:
    """A Langfuse dataset as benchmark items (for ``legal-judge run langfuse:NAME``).

    Raises:
        InputError: every item with no prompt, an id holding a control character or an
            ``expected_pass`` that is no verdict (exit 2), with its position and field.
    """
    from legal_judge.dataset import id_problem, normalise_expected_pass

    c = _client(require_settings())
    try:
        ds = c.lf.get_dataset(name)
    except LfNotFound:
        from legal_judge.errors import NotFoundError

        raise NotFoundError(f"no Langfuse dataset {name}",
                            fix="`legal-judge datasets push FILE --name NAME` creates it") from None
    except Exception as exc:
        raise SyncError(f"cannot load dataset {name}: {exc}", fix="check LANGFUSE_BASE_URL") from None
    out, problems = [], []
    where = f"langfuse:{name}"
    for i, it in enumerate(ds.items, start=1):
        inp = it.input if isinstance(it.input, dict) else {"prompt": it.input}
        meta = dict(it.metadata) if isinstance(it.metadata, dict) else {}
        # Kept with the item, so the run's traces link back to it as a dataset run.
        link = {"id": it.id, "dataset_id": it.dataset_id or ds.id, "dataset_name": name}
        exp = it.expected_output if isinstance(it.expected_output, dict) else {}
        item_id = str(meta.pop("item_id", it.id))
        # The same rules as a dataset file: a printable id, a boolean expected_pass.
        if (why := id_problem(item_id)) is not None:
            problems.append(Problem(where, i, "metadata.item_id", f"item {it.id}: {why}"))
            continue
        if "expected_pass" in meta:
            flag, why = normalise_expected_pass(meta["expected_pass"])
            if flag is None:
                problems.append(Problem(where, i, "metadata.expected_pass",
                                        f"item {it.id}: {why}"))
                continue
            meta["expected_pass"] = flag
        try:
            out.append(BenchmarkItem(
                id=item_id, prompt=str(inp.get("prompt") or ""),
                response=inp.get("response") or "", jurisdiction=inp.get("jurisdiction"),
                system_under_test=inp.get("system_under_test"), dataset=f"langfuse:{name}",
                expected_signals=exp.get("expected_signals") or [],
                metadata={**meta, DATASET_ITEM_KEY: link}))
        except Exception as exc:
            problems.append(Problem(where, i, None, f"item {it.id}: {exc}"))
    if problems:
        raise InputError(problems, fix=f"correct these items of the Langfuse dataset {name} (in "
                         "Langfuse, or in the benchmark file, then `legal-judge datasets push "
                         f"FILE --name {name}`): items need input.prompt and input.response, "
                         "a metadata.item_id without control characters and a boolean "
                         "metadata.expected_pass")
    return out


# experiments -----------------------------------------------------------------------------------
def evaluations_from_result(result: EnsembleResult) -> list[Evaluation]:
    """The ensemble's decision as Langfuse ``Evaluation`` objects (one per rubric + overall)."""
    evals = [Evaluation(name=k, value=float(v), metadata={"level": "ensemble"})
             for k, v in sorted(result.scores.items())]
    if result.hallucination:
        evals.append(Evaluation(name="hallucination", value=result.hallucination,
                                data_type="CATEGORICAL"))
    if result.overall:
        evals.append(Evaluation(name="overall", value=1.0 if result.overall == "pass" else 0.0,
                                data_type="BOOLEAN", comment=result.reason,
                                metadata={"valid_judges": result.valid_judges}))
    return evals


def ensemble_evaluator(score_fn: Callable[[BenchmarkItem], EnsembleResult]
                       ) -> Callable[..., list[Evaluation]]:
    """An evaluator for ``run_experiment(evaluators=[...])`` that runs ``score_fn`` on each item."""
    def evaluator(*, input: Any, output: Any, expected_output: Any = None,  # noqa: A002
                  metadata: Any = None, **_: Any) -> list[Evaluation]:
        inp = input if isinstance(input, dict) else {"prompt": str(input)}
        exp = expected_output if isinstance(expected_output, dict) else {}
        item = BenchmarkItem(
            id=str(inp.get("id") or (metadata or {}).get("item_id") or det_id(str(inp))),
            prompt=str(inp.get("prompt") or input), response=str(output),
            jurisdiction=inp.get("jurisdiction"),
            expected_signals=list(exp.get("expected_signals") or []))
        return evaluations_from_result(score_fn(item))
    return evaluator
