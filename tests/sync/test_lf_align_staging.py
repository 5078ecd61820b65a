"""calibrate align pushes its candidate prompt with the label staging; promote moves production
to it only after a validation that is better or not worse where it gates (issue 31)."""

from __future__ import annotations

from pathlib import Path

from standin import LangfuseStandin

from legal_judge.calibration.align import align_on
from legal_judge.calibration.promote import promote
from legal_judge.calibration.rubrics import rubric_specs
from legal_judge.calibration.validation_data import LawyerSet
from legal_judge.calibration.validation_schema import CalibrationRef
from legal_judge.commands.calibrate_validate import push_staging
from legal_judge.dataset import load_dataset, sample_dataset_path
from legal_judge.policy import load_policy
from legal_judge.store import Store


def _lawyers() -> LawyerSet:
    _, specs = rubric_specs("legal_judge_set")
    items = load_dataset(sample_dataset_path())
    out = LawyerSet([CalibrationRef(calibration_id="cal-t", run_id="r", quarter="2026-Q4",
                                    created_at="2026-11-20T00:00:00+00:00", n_items=len(items))],
                    specs, "legal_judge_set")
    for item in items:
        e = item.metadata["expected_scores"]
        out.items[item.id], out.runs[item.id] = item, "r"
        for rubric in ("legal_soundness", "citation_quality", "jurisdiction_awareness",
                       "completeness", "hallucination"):
            out.humans.setdefault(rubric, {})[item.id] = (e[rubric] if rubric == "hallucination"
                                                          else float(e[rubric]))
        out.lawyers_pass[item.id] = not (e["legal_soundness"] <= 1 or e[
            "jurisdiction_awareness"] == 0 or e["hallucination"] == "hallucinated")
    return out


def test_align_stages_the_candidate_and_promote_labels_it_production(
        standin: LangfuseStandin, store: Store, tmp_path: Path) -> None:
    result = align_on(store, _lawyers(), "simulated:lenient", out=tmp_path / "aligned",
                      policy=load_policy(), folds=5, k=4)
    assert result.report.verdict == "better"
    push_staging(result.prompt.root)
    judge = standin.state.prompts["llm-judge-v2"]
    staged = [p for p in judge if "staging" in p["labels"]]
    assert len(staged) == 1 and "Lawyers' examples" in staged[0]["prompt"]
    assert not any("production" in p["labels"] for p in judge)
    lines = promote(store, result.report.validation_id)
    assert any(line.startswith("Langfuse: llm-judge-v2 v") for line in lines), lines
    # The candidate's content labelled production (its rubric references name production, as
    # `prompts push --label production` composes them); the staged version keeps staging.
    production = [p for p in standin.state.prompts["llm-judge-v2"] if "production" in p["labels"]]
    assert len(production) == 1 and "Lawyers' examples" in production[0]["prompt"]
    assert "staging" in staged[0]["labels"]
