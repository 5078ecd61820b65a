"""Gather what a comparison needs: judge scores, pass/fail decisions and lawyers' labels.

From the store (a judged run) or from files alone (scores produced elsewhere). Judges are keyed by
name; ``ensemble`` is the ensemble. Categorical rubrics (hallucination) keep their category here and
are encoded to severity indexes only for statistics.
"""

from __future__ import annotations

import csv
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from legal_judge.assets.rubrics import DEFAULT_RUBRIC_SET, RubricSet
from legal_judge.benchmark.ensemble_config import ENSEMBLE, ensemble_judge_id
from legal_judge.calibration.label_sheet import RawLabel, read_label_sheet
from legal_judge.calibration.labels import (
    Label,
    load_comments,
    load_labels,
    validate_comments,
    validate_labels,
)
from legal_judge.calibration.rubrics import (
    PASS_FAIL,
    RubricSpec,
    rubric_specs,
    stored_rubric_set,
    with_pass_fail,
)
from legal_judge.calibration.schema import LawyerComment
from legal_judge.errors import InputError, Problem
from legal_judge.store import Store

__all__ = [
    "ENSEMBLE",
    "ComparisonData",
    "ensemble_judge_id",
    "from_files",
    "from_store",
    "human_pass",
    "human_scores",
    "lawyers_pass",
    "rule_pass",
]

Score = float | str


@dataclass
class ComparisonData:
    """Judge scores and lawyers' labels, aligned by item id."""

    rubric_set: RubricSet
    specs: dict[str, RubricSpec]
    source: Literal["store", "files"]
    run_id: str | None
    labels: list[Label]
    scores: dict[str, dict[str, dict[str, Score]]] = field(default_factory=dict)
    judge_pass: dict[str, dict[str, bool | None]] = field(default_factory=dict)
    judge_ids: dict[str, str | None] = field(default_factory=dict)
    pass_source: Literal["verdict", "rule"] = "verdict"
    comments: list[LawyerComment] = field(default_factory=list)

    @property
    def judges(self) -> list[str]:
        """``ensemble`` first, then the judges by name."""
        return sorted(self.scores, key=lambda j: (j != ENSEMBLE, j))


def _scores_of(record: dict[str, Any]) -> dict[str, Score]:
    out: dict[str, Score] = {k: float(v) for k, v in record.get("scores", {}).items()}
    if record.get("hallucination"):
        out["hallucination"] = str(record["hallucination"])
    return out


def _decision(overall: object) -> bool | None:
    return {"pass": True, "fail": False}.get(str(overall)) if overall else None


def from_store(store: Store, run_id: str) -> ComparisonData:
    """Judge scores of a run (ensemble and each judge) and the labels of its items.

    Raises:
        NotFoundError: the run is not in the store.
    """
    config = store.get_run(run_id)["config"]
    rset, specs = rubric_specs(stored_rubric_set(config))
    data = ComparisonData(rset, specs, "store", run_id, load_labels(store, run_id, specs),
                          comments=load_comments(store, run_id))
    for item_id, result in store.load_results(run_id).items():
        if result.get("status") == "ok":
            data.scores.setdefault(ENSEMBLE, {})[item_id] = _scores_of(result)
            data.judge_pass.setdefault(ENSEMBLE, {})[item_id] = _decision(result.get("overall"))
    ids: dict[str, Counter[str]] = defaultdict(Counter)
    for (item_id, judge), verdict in store.load_verdicts(run_id).items():
        ids[judge][verdict["judge_id"]] += 1
        if verdict.get("status") == "ok":
            data.scores.setdefault(judge, {})[item_id] = _scores_of(verdict)
            data.judge_pass.setdefault(judge, {})[item_id] = _decision(verdict.get("overall"))
    # A judge's id can only change mid-run if the run was resumed with another config; the most
    # frequent id is the one the calibration speaks for.
    data.judge_ids = {j: c.most_common(1)[0][0] for j, c in ids.items()}
    data.judge_ids[ENSEMBLE] = ensemble_judge_id(config, data.judge_ids)
    data.scores = _by_rubric(data.scores)
    return data


def _by_rubric(per_item: dict[str, dict[str, dict[str, Score]]]) -> dict[str, dict[str, dict[str, Score]]]:
    """judge -> item -> rubric  becomes  judge -> rubric -> item."""
    out: dict[str, dict[str, dict[str, Score]]] = {}
    for judge, items in per_item.items():
        table = out.setdefault(judge, {})
        for item_id, scores in items.items():
            for rubric, value in scores.items():
                table.setdefault(rubric, {})[item_id] = value
    return out


def _read_scores(path: Path, specs: dict[str, RubricSpec]) -> tuple[
        dict[str, dict[str, dict[str, Score]]], dict[str, str | None], list[Problem]]:
    file, problems = str(path), []
    scores: dict[str, dict[str, dict[str, Score]]] = {}
    judge_ids: dict[str, str | None] = {}
    if not path.is_file():
        raise InputError([Problem(file, None, None, "file not found")])
    with path.open(newline="", encoding="utf-8-sig") as fh:
        reader = csv.DictReader(fh)
        missing = {"item_id", "rubric", "judge", "score"} - set(reader.fieldnames or [])
        if missing:
            raise InputError([Problem(file, 1, c, "required column is missing") for c in sorted(missing)])
        for line, rec in enumerate(reader, start=2):
            judge, item_id, rubric = (rec.get(k, "").strip() for k in ("judge", "item_id", "rubric"))
            spec = specs.get(rubric)
            if not judge or not item_id:
                problems.append(Problem(file, line, "judge" if not judge else "item_id", "is empty"))
            if spec is None:
                problems.append(Problem(file, line, "rubric", f"unknown rubric '{rubric}'"))
                continue
            value, why = spec.parse(rec.get("score"), whole=False)
            if why or value is None:
                problems.append(Problem(file, line, "score", why or "no score"))
                continue
            scores.setdefault(judge, {}).setdefault(rubric, {})[item_id] = value
            judge_ids.setdefault(judge, (rec.get("judge_id") or "").strip() or None)
    return scores, judge_ids, problems


def from_files(scores_path: Path, labels_path: Path, *, rubric_set: str = DEFAULT_RUBRIC_SET) -> ComparisonData:
    """Judge scores (``item_id, rubric, judge, score[, judge_id]``) and labels from files alone.

    Without a ``judge_id`` column a judge is identified by its name. Pass/fail comes from the
    rubric set's rule applied to each side's scores.

    Raises:
        InputError: every problem of both files, with line and field.
    """
    rset, specs = rubric_specs(rubric_set)
    scores, judge_ids, problems = _read_scores(scores_path, specs)
    known: dict[str, set[str]] = {i: set() for table in scores.values() for col in table.values() for i in col}
    sheet = read_label_sheet(labels_path, specs)
    raws, found = sheet.labels, sheet.problems
    problems += _label_runs(raws, str(labels_path), known)
    labels, bad = validate_labels(raws, file=str(labels_path), specs=specs, known=known)
    notes, bad_notes = validate_comments(sheet.comments, file=str(labels_path), known=known)
    problems += found + bad + bad_notes
    if problems:
        raise InputError(list(dict.fromkeys(problems)), fix="correct the lines listed above")
    data = ComparisonData(rset, specs, "files", None, labels, scores, pass_source="rule",
                          comments=[LawyerComment(item_id=n.item_id, annotator=n.annotator,
                                                  comment=n.text) for n in notes])
    data.judge_ids = {j: judge_ids.get(j) or j for j in scores}
    items = set(known)
    data.judge_pass = {j: {i: rule_pass(rset, {r: col[i] for r, col in scores[j].items() if i in col})
                           for i in items} for j in scores}
    return data


def _label_runs(raws: list[RawLabel], file: str, known: dict[str, set[str]]) -> list[Problem]:
    """Files mode: a scores file has no runs, so a label's ``run_id`` (the filled ``calibrate
    sample`` template has one) is taken as given, as long as each item's labels name one run.
    Labels of two runs of one item id judge two different answers and must not be averaged."""
    runs: dict[str, set[str]] = defaultdict(set)
    for raw in raws:
        if raw.run_id and raw.item_id in known:
            runs[raw.item_id].add(raw.run_id)
    problems = []
    for item_id, named in sorted(runs.items()):
        if len(named) > 1:
            problems.append(Problem(file, None, "run_id",
                                    f"item '{item_id}' has labels of {len(named)} runs "
                                    f"({', '.join(sorted(named))}); the scores file has no runs: "
                                    "compare one run's labels at a time"))
        else:
            known[item_id] = named
    return problems


def rule_pass(rset: RubricSet, scores: dict[str, Score]) -> bool | None:
    """The rubric set's pass/fail rule on one item, or None when a rubric of the rule is missing."""
    needed = {c.rubric for c in rset.pass_fail.fail_if}
    if not needed <= set(scores):
        return None
    numeric = {k: float(v) for k, v in scores.items() if not isinstance(v, str)}
    categorical = {k: v for k, v in scores.items() if isinstance(v, str)}
    return not rset.fail_reasons(numeric, categorical)


def human_scores(labels: list[Label], specs: dict[str, RubricSpec]) -> dict[str, dict[str, Score]]:
    """One human score per rubric and item: the annotators' mean, or for a category their most
    frequent value (a tie goes to the more severe value, as the ensemble's vote does).
    """
    grouped: dict[tuple[str, str], list[Score]] = defaultdict(list)
    for label in labels:
        grouped[(label.rubric, label.item_id)].append(label.score)
    out: dict[str, dict[str, Score]] = defaultdict(dict)
    specs = with_pass_fail(specs)
    for (rubric, item_id), values in grouped.items():
        spec = specs[rubric]
        if spec.kind == "numeric":
            out[rubric][item_id] = sum(float(v) for v in values) / len(values)
        else:
            counts = Counter(str(v) for v in values)
            out[rubric][item_id] = max(counts, key=lambda v: (counts[v], spec.values.index(v)))
    return dict(out)


def human_pass(rset: RubricSet, humans: dict[str, dict[str, Score]]) -> dict[str, bool | None]:
    """The lawyers' pass/fail per item, from the same rule the judges use."""
    items = {i for r, col in humans.items() if r != PASS_FAIL.name for i in col}
    return {i: rule_pass(rset, {r: col[i] for r, col in humans.items()
                                if i in col and r != PASS_FAIL.name}) for i in items}


def lawyers_pass(data: ComparisonData, humans: dict[str, dict[str, Score]]
                 ) -> tuple[dict[str, bool | None], str]:
    """The lawyers' pass/fail per item, and where it came from (``rule``, ``lawyers``, ``mixed``).

    Their own pass/fail (the sheet's ``pass_fail`` column; a tie among lawyers counts as fail,
    the more severe value) wins; elsewhere the rubric set's rule on their rubric scores decides.
    """
    own = humans.get(PASS_FAIL.name, {})
    out = human_pass(data.rubric_set, humans)
    for item_id, value in own.items():
        out[item_id] = value == "pass"
    decided = {i for i, v in out.items() if v is not None}
    if not own:
        return out, "rule"
    return out, "lawyers" if decided <= set(own) else "mixed"
