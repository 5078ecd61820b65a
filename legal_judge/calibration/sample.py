"""Draw the quarterly sample for the lawyers and write it as a spreadsheet/JSONL template.

The sample is reproducible: a numpy ``Generator`` seeded with a recorded seed draws it, and the seed
with every setting is stored as a ``calibration_sample`` row of ``runs``. Lawyers see the items in a
shuffled order and never the judges' scores, so the template does not anchor them.
"""

from __future__ import annotations

import csv
import hashlib
import json
from collections import defaultdict
from pathlib import Path
from typing import Any, Literal, Protocol

import numpy as np

from legal_judge import stats
from legal_judge.assets.catalogue import load_assets
from legal_judge.assets.rubrics import DEFAULT_RUBRIC_SET
from legal_judge.calibration.rubrics import RubricSpec, rubric_specs
from legal_judge.calibration.schema import SampledItem, SampleReport
from legal_judge.errors import ConfigError
from legal_judge.store import Store, canonical_json

__all__ = [
    "AnnotationQueueSink",
    "Stratify",
    "disagreement_score",
    "draw_sample",
    "item_strata",
    "neutralise_cell",
    "guide_path",
    "run_samples",
    "sheet_guide",
    "template_columns",
    "write_template",
]

Stratify = Literal["pass_fail", "rubric", "disagreement"]
SAMPLE_KIND = "calibration_sample"
_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")
TEXT_COLUMNS = ("run_id", "item_id", "prompt", "response", "jurisdiction")
VERDICT_COLUMNS = ("pass_fail", "comment")
TAIL_COLUMNS = ("annotator", "labeled_at")
GUIDE_MARK = "#"


class AnnotationQueueSink(Protocol):
    """The Langfuse side of the sample: an annotation queue with one score config per rubric.

    Implemented by the Langfuse module (``legal_judge.sync.sink``); the calibration code only calls it.
    ``trace_seeds`` are ``f"{run_id}:{item_id}"``, the seed of each item's deterministic trace id.
    ``human`` (an escalation's queue) names the score configs ``human.<rubric>``, apart from
    the judges'. Returns the queue id.
    """

    def create_annotation_queue(
        self, *, name: str, run_id: str, trace_seeds: list[str], rubrics: list[dict[str, Any]],
        human: bool = False,
    ) -> str: ...


def neutralise_cell(value: object) -> str:
    """A CSV cell that a spreadsheet will not run as a formula (OWASP CSV injection)."""
    text = "" if value is None else str(value)
    return "'" + text if text.startswith(_FORMULA_START) else text


def disagreement_score(result: dict[str, Any], verdicts: list[dict[str, Any]]) -> float:
    """How much the judges disagreed on an item: the largest score range over the rubrics.

    Computed from the judges' own verdicts when present; otherwise the largest figure in the
    ensemble's ``disagreement`` block. A split hallucination call counts as a range of 1.
    """
    ok = [v for v in verdicts if v.get("status") == "ok"]
    if ok:
        ranges = [0.0]
        rubrics = {r for v in ok for r in v.get("scores", {})}
        for r in rubrics:
            vals = [float(v["scores"][r]) for v in ok if r in v.get("scores", {})]
            ranges.append(max(vals) - min(vals))
        if len({v.get("hallucination") for v in ok if v.get("hallucination")}) > 1:
            ranges.append(1.0)
        return max(ranges)
    block = result.get("disagreement") or {}
    values = [float(x) for inner in block.values() for x in inner.values()]
    return max(values, default=0.0)


def _stratum(
    result: dict[str, Any], score: float, stratify: Stratify | None, rubric: str
) -> str:
    if stratify is None:
        return "all"
    if stratify == "pass_fail":
        return str(result.get("overall") or "undecided")
    if stratify == "rubric":
        value = result.get("scores", {}).get(rubric)
        return f"{rubric}={int(np.floor(float(value) + 0.5))}" if value is not None else f"{rubric}=none"
    if result.get("flagged_for_review"):
        return "flagged"
    return "disagree" if score > 0 else "agree"


def _eligible(store: Store, run_id: str) -> list[tuple[str, dict[str, Any], float]]:
    store.get_run(run_id)
    results = store.load_results(run_id)
    verdicts: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for (item_id, _judge), verdict in store.load_verdicts(run_id).items():
        verdicts[item_id].append(verdict)
    out = []
    for item in store.load_items(run_id):
        result = results.get(item["id"])
        if result is not None and result.get("status") == "ok":
            out.append((item["id"], result, disagreement_score(result, verdicts[item["id"]])))
    return out


def _enriched(pool: list[tuple[str, dict[str, Any], float]],
              enrich: int) -> list[tuple[str, dict[str, Any], float]]:
    """The items reserved for disagreement: flagged first, then the largest score range."""
    ranked = sorted(pool, key=lambda p: (not p[1].get("flagged_for_review"), -p[2]))
    return [p for p in ranked if p[1].get("flagged_for_review") or p[2] > 0][:enrich]


def item_strata(store: Store, run_id: str, settings: dict[str, Any]) -> dict[str, str]:
    """The stratum of every conclusive item of a run under a recorded sample's settings.

    What a stratified estimate needs: how many items of the run each stratum holds, not only the
    sampled ones. The items reserved by ``enrich`` form the stratum ``enriched`` (taken whole).
    """
    pool = _eligible(store, run_id)
    taken = {p[0] for p in _enriched(pool, int(settings.get("enrich") or 0))}
    stratify = settings.get("stratify")
    rubric = str(settings.get("stratify_rubric") or "legal_soundness")
    return {item_id: "enriched" if item_id in taken else _stratum(result, score, stratify, rubric)
            for item_id, result, score in pool}


def run_samples(store: Store, run_id: str) -> list[dict[str, Any]]:
    """The recorded samples of a run: their settings and sampled item ids, oldest first."""
    out = []
    for sample in store.runs_of_kind(SAMPLE_KIND):
        config = sample["config"]
        if config.get("run_id") == run_id:
            out.append({**config, "sample_id": sample["id"]})
    return out


def draw_sample(
    store: Store,
    run_id: str,
    *,
    n: int = 50,
    stratify: Stratify | None = None,
    seed: int | None = None,
    enrich: int = 0,
    stratify_rubric: str = "legal_soundness",
) -> SampleReport:
    """Draw a reproducible sample of judged items of a run for the lawyers.

    Args:
        store: The store holding the run.
        run_id: The judged run to sample from (items with a conclusive ensemble result).
        n: How many items to sample.
        stratify: ``pass_fail`` (by the ensemble's verdict), ``rubric`` (by the rounded ensemble
            score of ``stratify_rubric``, so the whole scale is covered for the fitted correction),
            ``disagreement`` (flagged / disagree / agree) or None (simple random sample).
        seed: Seed of the numpy generator; drawn at random and recorded when None.
        enrich: Slots reserved for the items the judges disagreed on most (flagged first).
        stratify_rubric: The rubric used by ``stratify="rubric"``.

    Returns:
        A :class:`SampleReport` (also recorded in the store as a ``calibration_sample`` run).

    Raises:
        NotFoundError: unknown run. ConfigError: bad ``n``/``enrich`` or no conclusive item.
    """
    if n < 1 or enrich < 0 or enrich > n:
        raise ConfigError(f"bad sample size n={n}, enrich={enrich}", code="calibration-sample",
                          fix="use n >= 1 and 0 <= --enrich <= n")
    pool = _eligible(store, run_id)
    if not pool:
        raise ConfigError(f"run '{run_id}' has no conclusive ensemble result to sample",
                          code="calibration-sample", fix="finish the run first (legal-judge run ...)")
    if seed is None:
        seed = int(np.random.default_rng().integers(2**32))
    rng = np.random.default_rng(seed)
    enriched = _enriched(pool, enrich)
    taken = {p[0] for p in enriched}
    strata: dict[str, list[str]] = defaultdict(list)
    for item_id, result, score in pool:
        if item_id not in taken:
            strata[_stratum(result, score, stratify, stratify_rubric)].append(item_id)
    alloc = stats.proportional_allocation({k: len(v) for k, v in sorted(strata.items())},
                                          n - len(enriched))
    chosen = [SampledItem(item_id=i, stratum="enriched", reason="enriched") for i, _, _ in enriched]
    for key in sorted(strata):
        picks = rng.choice(len(strata[key]), size=alloc[key], replace=False)
        chosen += [SampledItem(item_id=strata[key][int(j)], stratum=key, reason="random")
                   for j in np.sort(picks)]
    chosen = [chosen[int(j)] for j in rng.permutation(len(chosen))]
    notes = []
    if len(chosen) < n:
        notes.append(f"only {len(chosen)} conclusive items in the run; fewer than the {n} asked")
    if enriched:
        notes.append(f"{len(enriched)} items were added for high judge disagreement: the sample "
                     "is not uniformly random, which tends to inflate measured divergence")
    settings = {"run_id": run_id, "seed": seed, "n": n, "stratify": stratify, "enrich": enrich,
                "stratify_rubric": stratify_rubric}
    report = SampleReport(
        sample_id="sample-" + hashlib.sha256(canonical_json(settings).encode()).hexdigest()[:12],
        run_id=run_id, seed=seed, n_requested=n, n_eligible=len(pool), stratify=stratify,
        enrich=enrich, items=chosen, notes=notes,
        strata={k: sum(1 for c in chosen if c.stratum == k) for k in sorted({c.stratum for c in chosen})},
    )
    _record(store, report, settings)
    return report


def _record(store: Store, report: SampleReport, settings: dict[str, Any]) -> None:
    if not store.run_exists(report.sample_id):
        store.create_run(report.sample_id, kind=SAMPLE_KIND,
                         config={**settings, "items": [i.item_id for i in report.items]})
        store.finish_run(report.sample_id, status="finished", summary={"items": len(report.items)})


def template_columns(specs: dict[str, RubricSpec], rubrics: list[str]) -> list[str]:
    """Header of the lawyers' template: item text, one empty column per rubric, the lawyer's own
    pass/fail and comment, annotator, date."""
    return [*TEXT_COLUMNS, *[r for r in rubrics if r in specs], *VERDICT_COLUMNS, *TAIL_COLUMNS]


def sheet_guide(run_id: str, rubrics: list[str]) -> list[list[str]]:
    """The lawyers' guide sheet: how to fill the template, each rubric's definition and scale.

    A second sheet beside the template (``<template>.guide.csv``) rather than rows inside it, so
    the template stays a plain table that spreadsheets, pandas and ``calibrate import`` read as
    is (the import also skips rows whose first cell starts with ``#``, should a lawyer paste the
    guide into the sheet).
    """
    assets = load_assets()
    out = [["column", "what to enter", "definition", "levels"],
           ["(every row)", "one row per answer",
            f"legal-judge calibration sheet for run {run_id}: score each answer from the answer "
            "alone; leave a rubric empty only if it does not apply", ""]]
    for name in rubrics:
        r = assets.rubric(name)
        if r.kind == "numeric" and r.scale is not None:
            scale = f"a whole number {int(r.scale.min)}-{int(r.scale.max)}"
        else:
            scale = "one of: " + ", ".join(r.values or [])
        levels = " | ".join(f"{k}: {v}" for k, v in sorted(r.guide.items(), reverse=True))
        out.append([name, scale, f"{r.title}: {' '.join(r.description.split())}", levels])
    out += [["pass_fail", "pass or fail", "your overall verdict: would you let this answer reach "
             "a client? It is the lawyers' verdict the judges' pass rate is checked against", ""],
            ["comment", "free text (may span lines)", "why, in a sentence: stored with your "
             "scores and shown beside the answers the judges got wrong", ""],
            ["annotator", "your name", "the same spelling on every row", ""],
            ["labeled_at", "a date", "YYYY-MM-DD", ""]]
    return out


def guide_path(path: Path) -> Path:
    """Where the guide sheet of a template goes: ``x.csv`` -> ``x.guide.csv``."""
    return path.with_name(f"{path.stem}.guide.csv")


def write_template(
    store: Store, report: SampleReport, path: Path, *, rubric_set: str = DEFAULT_RUBRIC_SET
) -> Path:
    """Write the sample as a CSV (formula-safe) or JSONL template with empty score fields.

    Args:
        store: The store holding the run.
        report: The drawn sample.
        path: ``.csv`` or ``.jsonl`` destination.
        rubric_set: The rubric set whose rubrics get a column; optional rubrics get one when the
            ensemble scored them on a sampled item.

    Returns:
        The path written.
    """
    rset, specs = rubric_specs(rubric_set)
    items = {it["id"]: it for it in store.load_items(report.run_id)}
    results = store.load_results(report.run_id)
    rubrics = list(rset.rubrics) + [
        o.rubric for o in rset.optional_rubrics
        if any(o.rubric in results.get(s.item_id, {}).get("scores", {}) for s in report.items)
    ]
    columns = template_columns(specs, rubrics)
    rows = []
    for sampled in report.items:
        item = items[sampled.item_id]
        row: dict[str, Any] = dict.fromkeys(columns)
        row.update(run_id=report.run_id, item_id=item["id"], prompt=item.get("prompt"),
                   response=item.get("response"), jurisdiction=item.get("jurisdiction"))
        rows.append(row)
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.suffix.lower() in (".jsonl", ".csv"):
        with guide_path(path).open("w", newline="", encoding="utf-8-sig") as fh:
            csv.writer(fh).writerows([[neutralise_cell(c) for c in row] for row in
                                      sheet_guide(report.run_id, [r for r in rubrics if r in specs])])
    if path.suffix.lower() == ".jsonl":
        path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), "utf-8")
        return path
    if path.suffix.lower() != ".csv":
        raise ConfigError(f"unsupported template format '{path.suffix}'", code="calibration-format",
                          fix="name the output file .csv or .jsonl")
    # utf-8-sig: spreadsheet programs need the BOM to read accented and Arabic text correctly.
    with path.open("w", newline="", encoding="utf-8-sig") as fh:
        writer = csv.writer(fh)
        writer.writerow(columns)
        writer.writerows([neutralise_cell(r[c]) for c in columns] for r in rows)
    return path
