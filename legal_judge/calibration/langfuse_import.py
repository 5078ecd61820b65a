"""``calibrate import --from-langfuse``: the lawyers' ANNOTATION scores as labels, all or nothing.

The scores are read with :mod:`legal_judge.sync.langfuse_labels` (from a queue's traces, or from
every item trace of a run), mapped back to (run, item) through the deterministic trace id
``seed = f"{run_id}:{item_id}"``, and validated and stored exactly like a file
(:func:`~legal_judge.calibration.labels.store_raw_labels`): per-run keys, every problem at once,
nothing stored on any problem. Scores of other names (not a rubric nor ``overall``) are skipped
and counted; an escalation queue's ``human.<rubric>`` scores count as ``<rubric>``. The annotator
is the score's ``metadata.annotator`` or its Langfuse author; the lawyers' score comments are
kept (one comment per item and annotator, as a sheet's comment cell).
"""

from __future__ import annotations

from typing import Any

from legal_judge.calibration.label_sheet import RawComment, RawLabel
from legal_judge.calibration.labels import store_raw_labels
from legal_judge.calibration.rubrics import PASS_FAIL, RubricSpec, with_pass_fail
from legal_judge.calibration.schema import ImportSummary
from legal_judge.errors import ConfigError, Problem
from legal_judge.store import Store
from legal_judge.sync.plan import HUMAN_PREFIX, item_trace_id

__all__ = ["import_from_langfuse"]


def _traces(store: Store, run_id: str | None) -> dict[str, tuple[str, str]]:
    """trace id -> (run_id, item_id) for the run's items (every run's when None)."""
    return {item_trace_id(r, i): (r, i) for r, i in store.item_keys(run_id or None)}


def _value(spec: RubricSpec, value: Any) -> Any:
    if spec.name == PASS_FAIL.name and isinstance(value, bool | int | float):
        return "pass" if float(value) >= 0.5 else "fail"
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


def import_from_langfuse(store: Store, specs: dict[str, RubricSpec], *, queue_id: str | None,
                         run_id: str | None, replace: bool = False,
                         timeout_s: float = 30.0) -> tuple[ImportSummary, int]:
    """Import the ANNOTATION scores of a queue (or of a run's traces) as lawyer labels.

    Returns:
        The import summary and how many scores were skipped (names that are not labels).

    Raises:
        ConfigError: neither or both of queue and run, or Langfuse not configured.
        SyncError: Langfuse unreachable. InputError: every problem; nothing stored.
    """
    from legal_judge.sync.langfuse_labels import annotation_scores, queue_trace_ids

    if queue_id is None and run_id is None:
        raise ConfigError("--from-langfuse needs --queue QUEUE_ID or --run RUN_ID",
                          code="calibration-args",
                          fix="legal-judge calibrate import --from-langfuse --queue QUEUE_ID")
    traces = _traces(store, run_id)
    if run_id is not None:
        store.get_run(run_id)
    wanted = queue_trace_ids(queue_id, timeout_s=timeout_s) if queue_id else sorted(traces)
    origin = f"langfuse:queue/{queue_id}" if queue_id else f"langfuse:run/{run_id}"
    specs_all = with_pass_fail(specs)
    raws, problems, skipped = [], [], 0
    comments: dict[tuple[str, str, str], RawComment] = {}
    for k, s in enumerate(annotation_scores(wanted, timeout_s=timeout_s), start=1):
        # An escalation queue's scores are the lawyers' own configs, human.<rubric>.
        name = s.name.removeprefix(HUMAN_PREFIX)
        if name not in specs_all:
            skipped += 1
            continue
        where = traces.get(s.trace_id or "")
        if where is None:
            problems.append(Problem(origin, k, s.name, f"score {s.score_id} is on trace "
                                    f"{s.trace_id}, which is no item of "
                                    f"{'run ' + run_id if run_id else 'this store'}"))
            continue
        annotator = str(s.metadata.get("annotator") or s.author or "")
        raws.append(RawLabel(k, where[1], where[0], name, _value(specs_all[name], s.value),
                             annotator, s.timestamp))
        if s.comment and s.comment.strip():
            # One comment per item, run and annotator (as a sheet row has): their notes joined.
            key = (where[0], where[1], annotator)
            before = comments.get(key)
            text = s.comment.strip() if before is None else f"{before.text}\n{s.comment.strip()}"
            if before is None or s.comment.strip() not in str(before.text):
                comments[key] = RawComment(k, where[1], where[0], annotator, s.timestamp, text)
    summary = store_raw_labels(store, raws, problems, specs, origin=origin, source=origin,
                               run_id=run_id, replace=replace, send=False,
                               comments=list(comments.values()))
    return summary, skipped
