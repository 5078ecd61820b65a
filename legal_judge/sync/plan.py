"""What a store entity looks like in Langfuse, computed from store rows (pure; no langfuse import).

A run becomes one :class:`TracePlan` per judged item: a root ``chain`` observation (the item), one
``generation`` per provider call of each judge (``judge_calls`` rows), one ``span`` per structured
debias pass in ``Verdict.extra`` (e.g. ``self_debias``), one ``evaluator`` for the ensemble and one
``guardrail`` per rule-based check in ``EnsembleResult.checks``. Judge scores sit on each judge's
last verdict generation, ensemble scores on the trace. Every id derives from a seed and every
timestamp from a store row, so sending a plan twice updates the same objects.

Score names: a rubric's name (``legal_soundness``, ``hallucination``, ``overall``) always means the
ensemble's figure, on the trace; each judge's own score is ``judge.<rubric>`` on its generation,
with the judge in the metadata and its own score config, so Langfuse charts never mix the two.

A run over a Langfuse dataset is also a dataset run: :mod:`legal_judge.sync.plan_dataset` fills
``TracePlan.experiment`` (an :class:`ExperimentLink`).

Everything user-provided passes through the :class:`~legal_judge.sync.mask.Masker` here.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime, timedelta
from typing import Any

from legal_judge.assets.catalogue import Assets
from legal_judge.providers.pricing import cost_usd
from legal_judge.store import Store
from legal_judge.sync.mask import Masker
from legal_judge.sync.plan_tags import run_labels

__all__ = ["HUMAN_PREFIX", "ExperimentLink", "ObsPlan", "ScoreConfigSpec", "ScorePlan", "TracePlan",
           "det_id", "human_score_config_specs", "human_score_name", "item_trace_id",
           "judge_score_name", "run_plans", "score_config_specs", "span_id"]

RUN_PROMPTS_KEY = "langfuse_prompts"
HALLUCINATION_VALUES = ["clean", "uncertain", "hallucinated"]
PRIMARY_PURPOSE = "verdict"
JUDGE_PREFIX = "judge."
HUMAN_PREFIX = "human."
#: Langfuse refuses score config names longer than this; longer names are sent without a config.
MAX_CONFIG_NAME = 35


def human_score_name(name: str) -> str:
    """The name of a lawyer's score for ``name`` in an escalation queue: ``human.<name>``, so
    Langfuse charts never mix the lawyers' scores with the judges' (``name``, ``judge.<name>``)."""
    return f"{HUMAN_PREFIX}{name}"


def judge_score_name(name: str) -> str:
    """The name of one judge's score for ``name`` (a rubric, ``hallucination`` or ``overall``)."""
    return f"{JUDGE_PREFIX}{name}"


def det_id(seed: str) -> str:
    """32-hex id from a seed; equal to ``Langfuse.create_trace_id(seed=seed)``."""
    return hashlib.sha256(seed.encode("utf-8")).digest()[:16].hex()


def span_id(trace_id: str, key: str) -> str:
    """16-hex observation id of ``key`` inside a trace."""
    digest = hashlib.sha256(f"{trace_id}:{key}".encode()).digest()[:8]
    return digest.hex() if any(digest) else "0000000000000001"


def item_trace_id(run_id: str, item_id: str) -> str:
    """The trace of one judged item (the design's seed ``f"{run_id}:{item_id}"``)."""
    return det_id(f"{run_id}:{item_id}")


@dataclass
class ObsPlan:
    """One observation; ``parent`` is another observation's key (None: the trace's root)."""

    key: str
    name: str
    as_type: str
    start: datetime
    end: datetime
    parent: str | None = None
    input: Any = None
    output: Any = None
    metadata: dict[str, Any] | None = None
    level: str | None = None
    status_message: str | None = None
    model: str | None = None
    model_parameters: dict[str, Any] | None = None
    usage: dict[str, int] | None = None
    cost: dict[str, float] | None = None
    prompt: tuple[str, int] | None = None


@dataclass
class ScorePlan:
    """One score; ``config`` names a score config (resolved to its id when sent)."""

    id: str
    name: str
    value: float | str
    data_type: str
    trace_id: str
    timestamp: datetime
    observation_key: str | None = None
    comment: str | None = None
    metadata: dict[str, Any] | None = None
    config: str | None = None
    source: str = "API"
    session_id: str | None = None  # a run-level score: on the run's session, not on a trace


@dataclass
class TracePlan:
    """One trace with its observations and scores."""

    trace_id: str
    name: str
    session_id: str | None
    observations: list[ObsPlan] = field(default_factory=list)
    scores: list[ScorePlan] = field(default_factory=list)
    tags: list[str] = field(default_factory=list)
    metadata: dict[str, str] = field(default_factory=dict)
    experiment: ExperimentLink | None = None


@dataclass(frozen=True)
class ExperimentLink:
    """What links one item's trace to its dataset item in a dataset run (span attributes).

    ``expected_output``, ``metadata`` and ``item_metadata`` are JSON text, as the SDK sends them.
    """

    experiment_id: str
    experiment_name: str
    dataset_id: str
    item_id: str
    root_observation_id: str
    description: str
    expected_output: str
    metadata: str
    item_metadata: str


@dataclass(frozen=True)
class ScoreConfigSpec:
    """A score config to create once per project."""

    name: str
    data_type: str
    min_value: float | None = None
    max_value: float | None = None
    categories: tuple[tuple[str, float], ...] = ()
    description: str = ""


def score_config_specs(assets: Assets) -> list[ScoreConfigSpec]:
    """Configs for every rubric (numeric 0-5, categorical values) plus ``overall``: the ensemble's
    under the rubric's name, each judge's under ``judge.<name>`` (names Langfuse would refuse as
    too long are left out; their scores go without a config)."""
    base = [ScoreConfigSpec("overall", "BOOLEAN", description="pass (1) / fail (0), legal-judge")]
    for name in sorted(assets.rubrics):
        r = assets.rubric(name)
        if r.kind == "numeric" and r.scale is not None:
            base.append(ScoreConfigSpec(name, "NUMERIC", float(r.scale.min), float(r.scale.max),
                                        description=r.title))
        else:
            cats = tuple((v, float(i)) for i, v in enumerate(r.values or HALLUCINATION_VALUES))
            base.append(ScoreConfigSpec(name, "CATEGORICAL", categories=cats, description=r.title))
    ensemble = [replace(s, description=f"{s.description} (ensemble)") for s in base]
    judges = [replace(s, name=judge_score_name(s.name),
                      description=f"{s.description} (one judge; the judge is in the metadata)")
              for s in base]
    return [s for s in (*ensemble, *judges) if len(s.name) <= MAX_CONFIG_NAME]


def human_score_config_specs(assets: Assets) -> list[ScoreConfigSpec]:
    """The lawyers' configs of an escalation queue: every rubric and pass/fail (``overall``),
    named ``human.<name>``; the same types and scales as the judges' configs."""
    base = [s for s in score_config_specs(assets) if not s.name.startswith(JUDGE_PREFIX)]
    return [replace(s, name=human_score_name(s.name),
                    description=s.description.replace("(ensemble)", "(a lawyer, not a judge)"))
            for s in base if len(human_score_name(s.name)) <= MAX_CONFIG_NAME]


def ts(value: str) -> datetime:
    """A store timestamp (ISO; naive means UTC) as an aware datetime."""
    parsed = datetime.fromisoformat(value)
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)


def score(trace_id: str, name: str, value: float | str, data_type: str, when: datetime, *,
          obs: str | None = None, comment: str | None = None, meta: dict[str, Any] | None = None,
          config: str | None = None, source: str = "API", who: str = "") -> ScorePlan:
    """A score with an id derived from where it sits, its name and who gave it."""
    sid = det_id(f"score:{trace_id}:{obs or 'trace'}:{name}:{source}:{who}")
    return ScorePlan(sid, name, value, data_type, trace_id, when, obs,
                     comment[:500] if comment else None, meta, config, source)


def verdict_scores(tid: str, obs: str, v: dict[str, Any], when: datetime, masker: Masker,
                   configs: set[str]) -> list[ScorePlan]:
    """Scores of one judge's verdict, on its generation, named ``judge.<rubric>``."""
    if v.get("status") != "ok":
        return []
    meta = {"level": "judge", "judge": v["judge"], "judge_id": v["judge_id"],
            "family": v.get("family")}
    rationales = v.get("rationales") or {}

    def named(rubric: str) -> tuple[str, str | None]:
        name = judge_score_name(rubric)
        return name, name if name in configs else None

    out = []
    for rubric, val in sorted((v.get("scores") or {}).items()):
        name, config = named(rubric)
        out.append(score(tid, name, float(val), "NUMERIC", when, obs=obs,
                         meta={**meta, "rubric": rubric}, config=config,
                         comment=masker(rationales[rubric]) if rationales.get(rubric) else None))
    if v.get("hallucination"):
        note = rationales.get("hallucination")
        name, config = named("hallucination")
        out.append(score(tid, name, v["hallucination"], "CATEGORICAL", when, obs=obs,
                         meta={**meta, "rubric": "hallucination"}, config=config,
                         comment=masker(note) if note else None))
    if v.get("overall"):
        name, config = named("overall")
        out.append(score(tid, name, 1.0 if v["overall"] == "pass" else 0.0, "BOOLEAN", when,
                         obs=obs, meta={**meta, "rubric": "overall"}, config=config,
                         comment=masker(v.get("summary") or "") or None))
    return out


def ensemble_scores(tid: str, r: dict[str, Any], when: datetime,
                    configs: set[str]) -> list[ScorePlan]:
    """The ensemble's official scores, on the trace."""
    meta = {"level": "ensemble", "valid_judges": r.get("valid_judges"),
            "flags": r.get("flags") or [], "status": r.get("status")}
    calibrated = next((str(f).split(":", 1)[1] for f in r.get("flags") or []
                       if str(f).startswith("calibrated:")), None)
    out = [score(tid, name, float(val), "NUMERIC", when,
                 meta={**meta, "disagreement": (r.get("disagreement") or {}).get(name),
                       **_calibrated_meta(calibrated, r, name), **_capped_meta(r, name, val)},
                 config=name if name in configs else None)
           for name, val in sorted((r.get("scores") or {}).items())]
    if r.get("hallucination"):
        out.append(score(tid, "hallucination", r["hallucination"], "CATEGORICAL", when, meta=meta,
                         config="hallucination" if "hallucination" in configs else None))
    if r.get("overall"):
        forced = r.get("rule_fail_reasons") or []
        out.append(score(tid, "overall", 1.0 if r["overall"] == "pass" else 0.0, "BOOLEAN", when,
                         meta={**meta, "votes": r.get("votes"),
                               **({"judged_overall": r.get("raw_overall"),
                                   "rule_fail_reasons": forced} if forced else {})},
                         comment=r.get("reason") or ("; ".join(forced) if forced else None),
                         config="overall" if "overall" in configs else None))
    return out


def _capped_meta(r: dict[str, Any], name: str, value: Any) -> dict[str, Any]:
    """A score an answer rule capped says so, with the judges' own mean beside it."""
    judged = (r.get("raw_scores") or {}).get(name)
    if judged is None or judged == value or any(str(f).startswith("calibrated:")
                                                 for f in r.get("flags") or []):
        return {}  # unchanged (a calibrated score has its own raw_value)
    return {"judged_value": judged, "score_kind": "capped by an answer rule",
            "overrides": r.get("overrides") or []}


def _calibrated_meta(correction_id: str | None, r: dict[str, Any], name: str) -> dict[str, Any]:
    """A calibrated score says so: the correction that produced it and the judges' own value."""
    if correction_id is None:
        return {}
    return {"calibrated": correction_id, "score_kind": "calibrated (isotonic correction)",
            "raw_value": (r.get("raw_scores") or {}).get(name)}


def _flagged(value: Any) -> bool:
    return isinstance(value, dict) and (value.get("passed") is False or value.get("ok") is False
                                        or bool(value.get("flagged")) or bool(value.get("force_zero")))


def _call_obs(tid: str, c: dict[str, Any], prompt: tuple[str, int] | None,
              masker: Masker) -> ObsPlan:
    req = json.loads(c["request_json"])
    usage = json.loads(c["usage_json"]) if c["usage_json"] else {}
    it, ot = usage.get("input_tokens"), usage.get("output_tokens")
    end = ts(c["created_at"])
    start = end - timedelta(milliseconds=c["latency_ms"] or 0)
    model = req.get("model")
    cost = cost_usd(model, it, ot) if model and not c["cached"] else None
    return ObsPlan(
        key=f"call:{c['id']}", name=f"{c['purpose']}.{c['judge']}", as_type="generation",
        start=start, end=end, parent="root",
        input={"judge": c["judge"], "purpose": c["purpose"], "attempt": c["attempt"],
               "n_messages": req.get("n_messages")},
        output=masker(c["response_text"]) if c["response_text"] is not None else None,
        metadata={"judge": c["judge"], "purpose": c["purpose"], "attempt": c["attempt"],
                  "cached": bool(c["cached"]), "retries": c["retries"]},
        level="ERROR" if c["error"] else None,
        status_message=masker(c["error"]) if c["error"] else None,
        model=model,
        model_parameters={k: req[k] for k in ("temperature", "max_tokens", "seed")
                          if req.get(k) is not None},
        usage={k: v for k, v in (("input", it), ("output", ot)) if v is not None} or None,
        cost={"total": cost} if cost is not None else ({"total": 0.0} if c["cached"] else None),
        prompt=prompt if c["purpose"] == PRIMARY_PURPOSE else None,
    )


def _judge_prompt(run_config: dict[str, Any], judge_name: str) -> tuple[str, int] | None:
    versions = run_config.get(RUN_PROMPTS_KEY) or {}
    v = versions.get(judge_name)
    return (judge_name, int(v)) if v else None


def item_plan(run: dict[str, Any], item: dict[str, Any], *, verdicts: list[dict[str, Any]],
              calls: list[dict[str, Any]], result: dict[str, Any] | None, masker: Masker,
              configs: set[str], judge_name: str) -> TracePlan:
    """The trace of one judged item."""
    run_id, item_id = run["id"], item["id"]
    tid = item_trace_id(run_id, item_id)
    tags, meta = run_labels(run, item)  # simulated, system under test, release: UI filters
    plan = TracePlan(tid, "legal_judge.item", run_id, tags=["legal_judge", run["kind"], *tags],
                     metadata={"run_id": run_id, "item_id": item_id, **meta})
    prompt = _judge_prompt(run["config"], judge_name)
    call_obs = [_call_obs(tid, c, prompt, masker) for c in calls]
    obs = list(call_obs)
    for row in verdicts:
        v, when = json.loads(row["verdict_json"]), ts(row["created_at"])
        mine = [o for o, c in zip(call_obs, calls, strict=True)
                if c["judge"] == row["judge"] and c["purpose"] == PRIMARY_PURPOSE and not c["error"]]
        if mine:
            gen_key = mine[-1].key
        else:  # no call log (e.g. a verdict imported or from an old store): one generation for it
            gen_key = f"verdict:{row['judge']}"
            obs.append(ObsPlan(gen_key, f"{PRIMARY_PURPOSE}.{row['judge']}", "generation",
                               when - timedelta(milliseconds=v.get("latency_ms") or 0), when,
                               parent="root", output=masker(v.get("raw") or ""), prompt=prompt,
                               usage={"input": v["input_tokens"], "output": v["output_tokens"]}
                               if v.get("input_tokens") is not None else None,
                               cost={"total": v["cost_usd"]} if v.get("cost_usd") is not None
                               else None, metadata={"judge": row["judge"]}))
        for k, val in sorted((v.get("extra") or {}).items()):
            if isinstance(val, dict):
                obs.append(ObsPlan(f"extra:{row['judge']}:{k}", f"{k}.{row['judge']}.outcome", "span",
                                   when, when, parent=gen_key, output=masker.deep(val),
                                   metadata={"judge": row["judge"], "pass": k}))
        plan.scores += verdict_scores(tid, gen_key, v, when, masker, configs)
    root_out: Any = None
    if result is not None:
        r, when = json.loads(result["result_json"]), ts(result["created_at"])
        obs.append(ObsPlan("ensemble", "ensemble", "evaluator", when, when, parent="root",
                           input={row["judge"]: {k: json.loads(row["verdict_json"]).get(k) for k in
                                                 ("status", "scores", "hallucination", "overall")}
                                  for row in verdicts},
                           output=masker.deep({k: v for k, v in r.items() if k != "checks"})))
        for name, val in sorted((r.get("checks") or {}).items()):
            obs.append(ObsPlan(f"check:{name}", f"check.{name}", "guardrail", when, when,
                               parent="root", output=masker.deep(val),
                               level="WARNING" if _flagged(val) else None))
        plan.scores += ensemble_scores(tid, r, when, configs)
        root_out = masker.deep({k: r.get(k) for k in ("status", "overall", "scores",
                                                      "hallucination", "flags", "reason")})
    starts = [o.start for o in obs] or [ts(run["created_at"])]
    ends = [o.end for o in obs] or starts
    item_in = {k: item.get(k) for k in ("id", "prompt", "response", "jurisdiction",
                                        "expected_signals", "system_under_test", "dataset")}
    plan.observations = [ObsPlan("root", "judge_item", "chain", min(starts), max(ends),
                                 input=masker.deep(item_in), output=root_out,
                                 metadata={"run_id": run_id, "item_id": item_id}), *obs]
    return plan


def run_plans(store: Store, run_id: str, *, masker: Masker, configs: set[str],
              judge_name: str) -> list[TracePlan]:
    """One trace plan per item of a run, from the store."""
    run = store.get_run(run_id)
    verdicts = store.verdict_rows(run_id)
    calls = store.call_rows(run_id)
    results = {r["item_id"]: r for r in store.result_rows(run_id)}
    return [item_plan(run, item,
                      verdicts=[v for v in verdicts if v["item_id"] == item["id"]],
                      calls=[c for c in calls if c["item_id"] == item["id"]],
                      result=results.get(item["id"]), masker=masker, configs=configs,
                      judge_name=judge_name)
            for item in store.load_items(run_id)]

