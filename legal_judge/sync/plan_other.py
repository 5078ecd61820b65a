"""Trace plans for bias audits and calibrations, and score plans for human labels (pure).

* An audit is one trace (seed ``audit:<id>``): a ``chain`` root with the audit config as input and
  the overall assessment as output, one ``guardrail`` per dimension result (``WARNING`` when
  flagged; test pairs are counted, not copied), and trace scores ``bias.<dimension>.flagged``
  (BOOLEAN), ``bias.<dimension>.effect_size`` and ``.p_value`` (NUMERIC), ``bias.severity``
  (CATEGORICAL).
* A calibration is one trace (seed ``calibration:<id>``): root input = quarter/judge/run, output =
  the report; one ``evaluator`` per rubric found under ``rubrics``/``per_rubric``/``by_rubric``
  in the report carrying ``calibration.<metric>`` scores (numbers NUMERIC, booleans BOOLEAN), and
  the report's top-level numbers and booleans as ``calibration.<key>`` trace scores.
* Human labels become ``source=ANNOTATION`` scores named after the rubric, with the rubric's score
  config, on the same trace as the judges' scores (``f"{run_id}:{item_id}"``).
"""

from __future__ import annotations

import json
from typing import Any

from legal_judge.store import Store
from legal_judge.sync.mask import Masker
from legal_judge.sync.plan import ObsPlan, ScorePlan, TracePlan, det_id, item_trace_id, score, ts
from legal_judge.sync.plan_tags import simulated_labels

__all__ = ["audit_plan", "calibration_plan", "label_scores"]

_RUBRIC_KEYS = ("rubrics", "per_rubric", "by_rubric")


def _is_num(v: Any) -> bool:
    return isinstance(v, int | float) and not isinstance(v, bool)


def audit_plan(store: Store, audit_id: str, *, masker: Masker) -> TracePlan:
    """The trace of one bias audit."""
    row = store.audits.get(audit_id) or {}
    if not row:
        raise KeyError(f"audit {audit_id}")
    tid, when = det_id(f"audit:{audit_id}"), ts(row["created_at"])
    report = json.loads(row["report_json"]) if row["report_json"] else {}
    sim_tags, sim_meta = simulated_labels(
        ((report.get("extensions") or {}).get("settings") or {}).get("simulated"))
    plan = TracePlan(tid, "legal_judge.audit", None, tags=["legal_judge", "audit", *sim_tags],
                     metadata={"audit_id": audit_id, "judge_id": row["judge_id"], **sim_meta})
    overall = report.get("overall_assessment") or {}
    plan.observations.append(ObsPlan(
        "root", "bias_audit", "chain", when, when,
        input=masker.deep(json.loads(row["config_json"])),
        output=masker.deep({"status": row["status"], "severity": row["severity"], **overall}),
        metadata={"audit_id": audit_id, "judge_id": row["judge_id"]}))
    for d in report.get("dimension_results") or []:
        dim = str(d.get("dimension"))
        key = f"dim:{dim}"
        summary = {k: v for k, v in d.items() if k != "test_pairs"}
        summary["n_test_pairs"] = len(d.get("test_pairs") or [])
        plan.observations.append(ObsPlan(key, f"bias.{dim}", "guardrail", when, when, "root",
                                         output=masker.deep(summary),
                                         level="WARNING" if d.get("flagged") else None))
        if isinstance(d.get("flagged"), bool):
            plan.scores.append(score(tid, f"bias.{dim}.flagged", float(d["flagged"]), "BOOLEAN",
                                     when, meta={"audit_id": audit_id}))
        for metric in ("effect_size", "p_value", "mean_difference"):
            if _is_num(d.get(metric)):
                plan.scores.append(score(tid, f"bias.{dim}.{metric}", float(d[metric]), "NUMERIC",
                                         when, meta={"audit_id": audit_id}))
    severity = row["severity"] or overall.get("severity")
    if severity:
        plan.scores.append(score(tid, "bias.severity", str(severity), "CATEGORICAL", when,
                                 comment=masker(overall.get("summary") or "") or None,
                                 meta={"audit_id": audit_id, "status": row["status"]}))
    return plan


def calibration_plan(store: Store, calibration_id: str, *, masker: Masker) -> TracePlan:
    """The trace of one calibration."""
    row = store.calibrations.get(calibration_id) or {}
    if not row:
        raise KeyError(f"calibration {calibration_id}")
    tid, when = det_id(f"calibration:{calibration_id}"), ts(row["created_at"])
    report = json.loads(row["report_json"])
    meta = {"calibration_id": calibration_id, "quarter": row["quarter"]}
    plan = TracePlan(tid, "legal_judge.calibration", row["run_id"],
                     tags=["legal_judge", "calibration"], metadata=meta)
    plan.observations.append(ObsPlan(
        "root", "calibration", "chain", when, when,
        input={k: row[k] for k in ("quarter", "judge_id", "run_id", "rubric_set")},
        output=masker.deep(report), metadata=meta))
    per_rubric: dict[str, Any] = next((report[k] for k in _RUBRIC_KEYS if isinstance(report.get(k), dict)), {})
    for rubric, metrics in sorted(per_rubric.items()):
        if not isinstance(metrics, dict):
            continue
        key = f"rubric:{rubric}"
        plan.observations.append(ObsPlan(key, f"calibration.{rubric}", "evaluator", when, when,
                                         "root", output=masker.deep(metrics)))
        plan.scores += _metric_scores(tid, metrics, when, obs=key, meta={**meta, "rubric": rubric})
    plan.scores += _metric_scores(tid, report, when, obs=None, meta=meta)
    return plan


def _metric_scores(tid: str, metrics: dict[str, Any], when: Any, *, obs: str | None,
                   meta: dict[str, Any]) -> list[ScorePlan]:
    out = []
    for name, v in sorted(metrics.items()):
        if isinstance(v, bool):
            out.append(score(tid, f"calibration.{name}", float(v), "BOOLEAN", when, obs=obs,
                             meta=meta))
        elif _is_num(v) and v == v:  # NaN is not a score
            out.append(score(tid, f"calibration.{name}", float(v), "NUMERIC", when, obs=obs,
                             meta=meta))
    return out


def _label_value(rubric: str, raw: str, kinds: dict[str, str]) -> tuple[float | str, str] | None:
    kind = kinds.get(rubric)
    if kind == "BOOLEAN":
        low = raw.strip().lower()
        return (1.0, kind) if low in ("pass", "1", "true") else (0.0, kind)
    if kind == "CATEGORICAL":
        return raw.strip(), kind
    if kind == "NUMERIC":
        try:
            return float(raw), kind
        except ValueError:
            return None
    return None


def label_scores(store: Store, run_id: str, *, masker: Masker,
                 kinds: dict[str, str]) -> tuple[list[ScorePlan], list[str]]:
    """ANNOTATION scores of a run's human labels, and the labels that could not be mapped.

    Args:
        kinds: score config name -> data type (labels need a config: ANNOTATION requires one).
    """
    rows = store.labels.rows_for_run(run_id)
    # As in calibration.labels.load_labels: a label of this run wins over a run-less one (old
    # stores) for the same item, rubric and annotator; both would map to the same score id.
    chosen: dict[tuple[str, str, str], dict[str, Any]] = {}
    # Labels read from Langfuse (calibrate import --from-langfuse) are there already.
    rows = [r for r in rows if not str(r.get("source") or "").startswith("langfuse:")]
    for r in rows:
        key = (r["item_id"], r["rubric"], r["annotator"])
        if key not in chosen or r["run_id"] is not None:
            chosen[key] = r
    out, skipped = [], []
    for r in sorted(chosen.values(), key=lambda x: x["id"]):
        mapped = _label_value(r["rubric"], str(r["score"]), kinds)
        if mapped is None:
            skipped.append(f"{r['item_id']}/{r['rubric']}/{r['annotator']}")
            continue
        tid = item_trace_id(run_id, r["item_id"])
        out.append(score(tid, r["rubric"], mapped[0], mapped[1], ts(r["labeled_at"]),
                         meta={"annotator": masker(r["annotator"]), "label_source": r["source"],
                               "level": "human"},
                         config=r["rubric"], source="ANNOTATION", who=r["annotator"]))
    return out, skipped
