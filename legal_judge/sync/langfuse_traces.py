"""Trace plans (:mod:`legal_judge.sync.plan`) sent to Langfuse as OpenTelemetry spans.

Observation ids are derived from seeds (:func:`~legal_judge.sync.langfuse_client.seeded_span_id`)
and start/end times come from the store, so a resend updates the same observations. A dataset-run
trace carries the experiment attributes the SDK's ``run_experiment`` would set.
"""

from __future__ import annotations

from typing import Any, cast

from langfuse import LangfuseOtelSpanAttributes, propagate_attributes
from langfuse.api import Prompt_Text
from langfuse.model import TextPromptClient
from opentelemetry import context as otel_context
from opentelemetry import trace as otel_trace

from legal_judge.errors import SyncError
from legal_judge.sync.langfuse_client import Deadline, LangfuseClient, seeded_span_id
from legal_judge.sync.plan import ExperimentLink, ObsPlan, TracePlan, span_id
from legal_judge.sync.plan_dataset import EXPERIMENT_ENVIRONMENT

__all__ = ["emit_trace", "experiment_attributes", "flush_spans"]


def _ns(dt: Any) -> int:
    return int(dt.timestamp() * 1e9)


def _start(c: LangfuseClient, tid: str, o: ObsPlan, parent: Any, base: Any) -> Any:
    ctx = otel_trace.set_span_in_context(parent, base)
    with seeded_span_id(int(span_id(tid, o.key), 16)):
        # private SDK helpers: the public API cannot set start times or span ids
        otel_span = c.lf._otel_tracer.start_span(o.name, context=ctx, start_time=_ns(o.start))
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


def emit_trace(c: LangfuseClient, plan: TracePlan) -> None:
    """Start and end every observation of ``plan`` (exported by the next :func:`flush_spans`)."""
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
                made[o.key]._otel_span.set_attributes(experiment_attributes(plan.experiment,
                                                                            root=o.parent is None))
        for o in reversed(plan.observations):
            made[o.key].end(end_time=_ns(o.end))


def experiment_attributes(link: ExperimentLink, *, root: bool) -> dict[str, str]:
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


def flush_spans(c: LangfuseClient, dl: Deadline) -> None:
    """Export the pending spans within what is left of ``dl``.

    Raises:
        TimeoutError: the export did not finish in time. SyncError: Langfuse refused the export.
    """
    before = c.exporter.failures
    left = dl.left()
    if left <= 0 or not c.provider.force_flush(timeout_millis=int(left * 1000)):
        raise TimeoutError("span export did not finish within the flush timeout")
    if c.exporter.failures != before:
        raise SyncError("Langfuse did not accept the span export (OTLP)",
                        fix="check LANGFUSE_BASE_URL and the keys; `legal-judge sync` retries")
