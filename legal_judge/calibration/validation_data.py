"""The lawyer-labelled items a judge change is validated on, and one judge's scores of them.

Items come from one or more stored calibrations (each made on a stored run): the items the
lawyers labelled, their consensus per rubric (:func:`~legal_judge.calibration.data.human_scores`),
their pass/fail (:func:`~legal_judge.calibration.data.lawyers_pass`) and comments. Items of several
calibrations are keyed ``RUN/ITEM`` so two runs' answers to one item id never merge.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from legal_judge.calibration.data import (
    ENSEMBLE,
    from_store,
    human_scores,
    lawyers_pass,
)
from legal_judge.calibration.rubrics import RubricSpec, stored_rubric_set
from legal_judge.calibration.validation_schema import CalibrationRef, JudgeRef
from legal_judge.errors import ConfigError, NotFoundError
from legal_judge.models import BenchmarkItem
from legal_judge.store import Store

__all__ = ["JudgeScores", "LawyerSet", "load_lawyer_set", "scores_of_record"]

Score = float | str


@dataclass
class JudgeScores:
    """One judge's (or ensemble's) scores and pass/fail on the labelled items, by item key."""

    ref: JudgeRef
    scores: dict[str, dict[str, Score]] = field(default_factory=dict)  # rubric -> key -> score
    passed: dict[str, bool | None] = field(default_factory=dict)

    def add(self, key: str, record: dict[str, Any]) -> None:
        """Add one stored verdict or result (``scores``, ``hallucination``, ``overall``)."""
        if record.get("status", "ok") != "ok":
            return
        for rubric, value in scores_of_record(record).items():
            self.scores.setdefault(rubric, {})[key] = value
        overall = record.get("overall")
        self.passed[key] = {"pass": True, "fail": False}.get(str(overall)) if overall else None


def scores_of_record(record: dict[str, Any]) -> dict[str, Score]:
    """A verdict's or result's rubric scores, the categorical hallucination result included."""
    out: dict[str, Score] = {k: float(v) for k, v in (record.get("scores") or {}).items()
                             if v is not None}
    if record.get("hallucination"):
        out["hallucination"] = str(record["hallucination"])
    return out


@dataclass
class LawyerSet:
    """The labelled items and the lawyers' verdicts on them."""

    calibrations: list[CalibrationRef]
    specs: dict[str, RubricSpec]
    rubric_set: str
    items: dict[str, BenchmarkItem] = field(default_factory=dict)
    runs: dict[str, str] = field(default_factory=dict)
    humans: dict[str, dict[str, Score]] = field(default_factory=dict)
    lawyers_pass: dict[str, bool | None] = field(default_factory=dict)
    comments: dict[str, str] = field(default_factory=dict)
    recorded: JudgeScores | None = None

    @property
    def keys(self) -> list[str]:
        """Every labelled item key, sorted."""
        return sorted(self.items)


def load_lawyer_set(store: Store, calibration_ids: list[str]) -> LawyerSet:
    """The labelled items of ``calibration_ids`` with the lawyers' consensus.

    ``recorded`` holds the ensemble results the calibrated runs stored for those items: the
    incumbent, read back instead of judged again.

    Raises:
        NotFoundError: a calibration id is not in the store.
        ConfigError: a calibration made from files only (no stored run to re-score), or
            calibrations of runs with different rubric sets.
    """
    rows = []
    for cal_id in calibration_ids:
        row = store.calibrations.get(cal_id)
        if row is None:
            raise NotFoundError(f"calibration '{cal_id}' is not in the store {store.path}",
                                fix="list them with `legal-judge calibrate history`; make one "
                                    "with `legal-judge calibrate compare RUN_ID`")
        if not row.get("run_id"):
            raise ConfigError(f"calibration {cal_id} was made from files only: it has no stored "
                              "run whose answers a candidate judge could score",
                              code="validation-no-run",
                              fix="calibrate a stored run: `legal-judge calibrate compare RUN_ID`")
        rows.append(row)
    sets = {stored_rubric_set(r) for r in rows}
    if len(sets) > 1:
        raise ConfigError(f"the calibrations use different rubric sets ({', '.join(sorted(sets))})",
                          code="validation-rubric-sets",
                          fix="validate on calibrations of one rubric set at a time")
    several = len({r["run_id"] for r in rows}) > 1
    out: LawyerSet | None = None
    seen: set[str] = set()
    for row in rows:
        run_id = str(row["run_id"])
        if run_id in seen:
            continue  # two calibrations of one run label the same items
        seen.add(run_id)
        data = from_store(store, run_id)
        if out is None:
            out = LawyerSet([], data.specs, data.rubric_set.name,
                            recorded=JudgeScores(JudgeRef(
                                name="recorded ensemble",
                                spec=f"the recorded ensemble of run {run_id}",
                                judge_id=data.judge_ids.get(ENSEMBLE), source="store")))
        humans = human_scores(data.labels, data.specs)
        decided, _ = lawyers_pass(data, humans)
        items = {i["id"]: BenchmarkItem.model_validate(i) for i in store.load_items(run_id)}
        labelled = sorted({lab.item_id for lab in data.labels} & set(items))
        results = store.load_results(run_id)
        notes = {c.item_id: c.comment for c in data.comments}
        for item_id in labelled:
            key = f"{run_id}/{item_id}" if several else item_id
            out.items[key], out.runs[key] = items[item_id], run_id
            for rubric, col in humans.items():
                if item_id in col:
                    out.humans.setdefault(rubric, {})[key] = col[item_id]
            out.lawyers_pass[key] = decided.get(item_id)
            if item_id in notes:
                out.comments[key] = notes[item_id]
            if out.recorded is not None and item_id in results:
                out.recorded.add(key, results[item_id])
        out.calibrations.append(CalibrationRef(
            calibration_id=str(row["id"]), run_id=run_id, quarter=str(row["quarter"]),
            created_at=str(row["created_at"]), n_items=len(labelled)))
    assert out is not None  # calibration_ids is never empty (the CLI requires one)
    if several and out.recorded is not None:
        out.recorded.ref = out.recorded.ref.model_copy(update={
            "spec": "the recorded ensembles of runs " + ", ".join(sorted(seen)), "judge_id": None})
    return out
