"""calibrate align: no leakage across folds, and a simulator that alignment can (or cannot) fix.

The labelled set is the bundled sample with its expected scores as the lawyers' labels; the judges
are simulated (no network).
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pytest

from legal_judge.calibration.align import align_on, make_folds
from legal_judge.calibration.of_record import judges_lacking_validation
from legal_judge.calibration.rescore import build_judge, judge_items
from legal_judge.calibration.rubrics import rubric_specs
from legal_judge.calibration.validation_data import LawyerSet
from legal_judge.calibration.validation_run import build_report, save_validation
from legal_judge.calibration.validation_schema import CalibrationRef
from legal_judge.dataset import load_dataset, sample_dataset_path
from legal_judge.policy import load_policy
from legal_judge.store import Store

RUBRICS = ("legal_soundness", "citation_quality", "jurisdiction_awareness", "completeness")


def _lawyers() -> LawyerSet:
    _, specs = rubric_specs("legal_judge_set")
    items = load_dataset(sample_dataset_path())
    out = LawyerSet([CalibrationRef(calibration_id="cal-t", run_id="r", quarter="2026-Q4",
                                    created_at="2026-11-20T00:00:00+00:00", n_items=len(items))],
                    specs, "legal_judge_set")
    for item in items:
        e = item.metadata["expected_scores"]
        out.items[item.id], out.runs[item.id] = item, "r"
        for rubric in RUBRICS:
            out.humans.setdefault(rubric, {})[item.id] = float(e[rubric])
        out.humans.setdefault("hallucination", {})[item.id] = e["hallucination"]
        out.lawyers_pass[item.id] = not (e["legal_soundness"] <= 1 or e[
            "jurisdiction_awareness"] == 0 or e["hallucination"] == "hallucinated")
    return out


@pytest.fixture
def store(tmp_path: Path) -> Store:
    return Store(tmp_path / "store.sqlite3")


def test_folds_are_seeded_stratified_and_disjoint() -> None:
    lawyers = _lawyers()
    folds = make_folds(lawyers, 5, seed=3)
    assert folds == make_folds(lawyers, 5, seed=3) and folds != make_folds(lawyers, 5, seed=4)
    keys = [k for f in folds for k in f]
    assert sorted(keys) == lawyers.keys and len(set(keys)) == len(keys)
    fails = [sum(1 for k in f if lawyers.lawyers_pass[k] is False) for f in folds]
    assert max(fails) - min(fails) <= 1  # stratified by the lawyers' pass/fail


def test_no_fold_sees_its_own_items_and_alignment_helps_held_out(store: Store,
                                                                   tmp_path: Path) -> None:
    lawyers = _lawyers()
    result = align_on(store, lawyers, "simulated:lenient", out=tmp_path / "out",
                      policy=load_policy(), folds=5, k=4, seed=0)
    for plan in result.folds:
        assert set(plan.example_keys).isdisjoint(plan.eval_keys)
        for key in plan.example_keys:  # the examples are in the rendered prompt ...
            assert lawyers.items[key].response.strip()[:2000] in plan.system_prompt
        for key in plan.eval_keys:  # ... and no item the fold is scored on
            assert lawyers.items[key].response.strip() not in plan.system_prompt, key
    cf = result.report.cross_fit
    assert cf is not None and cf.incumbent_agreement is not None
    assert cf.cross_fitted_agreement is not None and cf.in_sample_agreement is not None
    assert cf.cross_fitted_agreement > cf.incumbent_agreement
    assert cf.in_sample_agreement >= cf.cross_fitted_agreement
    assert result.report.verdict == "better"
    assert (result.prompt.root / "prompts" / "judge_system.v2.j2").is_file()
    saved = json.loads((tmp_path / "out" / "validation.json").read_text("utf-8"))
    assert saved["validation_id"] == result.report.validation_id
    assert store.validations.latest_of_judge(str(result.report.candidate.judge_id))


def test_an_in_sample_only_improvement_is_not_called_better(store: Store,
                                                            tmp_path: Path) -> None:
    result = align_on(store, _lawyers(), "simulated:lenient-stubborn", out=tmp_path / "out",
                      policy=load_policy(), folds=5, k=4, seed=0)
    cf = result.report.cross_fit
    assert cf is not None and cf.in_sample_agreement is not None
    assert cf.cross_fitted_agreement == cf.incumbent_agreement
    assert cf.in_sample_agreement > cf.cross_fitted_agreement  # it copied its examples
    assert result.report.verdict in ("not worse", "cannot tell")


def test_missing_unfit_and_expired_validations_are_named(store: Store, tmp_path: Path) -> None:
    good = align_on(store, _lawyers(), "simulated:lenient", out=tmp_path / "a",
                    policy=load_policy(), folds=5, k=4).report
    lawyers = _lawyers()
    fair = judge_items(build_judge(store, "simulated:fair"), lawyers.items)
    lenient = judge_items(build_judge(store, "simulated:lenient"), lawyers.items)
    weak = build_report(lawyers, lenient, fair, load_policy())
    save_validation(store, weak)
    assert weak.verdict == "worse"
    ids = {"good": good.candidate.judge_id, "weak": weak.candidate.judge_id, "new": "0123abcd"}
    lacking = judges_lacking_validation(store, ids, now=datetime(2026, 12, 1, tzinfo=UTC))
    assert set(lacking) == {"weak", "new"}
    assert "no validation of record for judge_id 0123abcd" in lacking["new"]
    assert f"its validation {weak.validation_id} says" in lacking["weak"]
    # The labels were made on 2026-11-20: 120 days later the validation has expired.
    later = judges_lacking_validation(store, {"good": ids["good"]},
                                      now=datetime(2027, 4, 1, tzinfo=UTC))
    assert "expired 2027-03-20" in later["good"]


def test_the_validation_requirement_is_met_only_on_positive_evidence(store: Store,
                                                                     tmp_path: Path) -> None:
    from legal_judge.calibration import validation_requirement

    good = align_on(store, _lawyers(), "simulated:lenient", out=tmp_path / "a",
                    policy=load_policy(), folds=5, k=4).report
    when = datetime(2026, 12, 1, tzinfo=UTC)
    judges = {"good": str(good.candidate.judge_id)}
    met = validation_requirement(store, judges, required=True, now=when)
    assert met["met"] and met["lacking"] == {} and "all 1 judge(s)" in met["reason"]
    unmet = validation_requirement(store, {**judges, "new": "0123abcd"}, required=True, now=when)
    assert not unmet["met"] and set(unmet["lacking"]) == {"new"}
    assert unmet["reason"].endswith("lack a usable validation of record: new")
    # A run that recorded no judge ids cannot show the evidence: not met, never a default green.
    assert not validation_requirement(store, {}, required=True)["met"]
    off = validation_requirement(store, {"new": "0123abcd"}, required=False)
    assert off["met"] and not off["required"]


def test_the_lawyers_notes_draft_is_cross_validated_without_leaking(store: Store,
                                                                   tmp_path: Path) -> None:
    lawyers = _lawyers()
    for key in lawyers.keys:  # a comment naming its own item, so a leak would show
        lawyers.comments[key] = f"note-on-{lawyers.items[key].id}: check the governing statute"
    result = align_on(store, lawyers, "simulated:lenient", out=tmp_path / "out",
                      policy=load_policy(), folds=5, k=4, seed=0)
    cf = result.report.cross_fit
    assert cf is not None and cf.notes_count > 0
    assert len(result.notes_folds) == 5
    for plan in result.notes_folds:
        assert "## Lawyers' notes" in plan.system_prompt
        for key in plan.eval_keys:  # no fold's notes come from an item it is scored on
            assert f"note-on-{lawyers.items[key].id}:" not in plan.system_prompt, key
    # The simulated lenient judge heeds notes on its false passes: fewer false passes held out.
    assert cf.notes_cross_fitted_false_pass is not None
    assert cf.notes_cross_fitted_agreement is not None and cf.incumbent_agreement is not None
    assert cf.notes_cross_fitted_agreement > cf.incumbent_agreement
    draft = result.notes_file.read_text("utf-8")
    assert "Edit before use" in draft and "note-on-" in draft


def test_without_comments_there_is_no_notes_figure(store: Store, tmp_path: Path) -> None:
    result = align_on(store, _lawyers(), "simulated:lenient", out=tmp_path / "out",
                      policy=load_policy(), folds=5, k=4, seed=0)
    cf = result.report.cross_fit
    assert cf is not None and cf.notes_count == 0 and cf.notes_cross_fitted_agreement is None
    assert result.notes_folds == []


def test_a_validation_won_under_an_override_says_so_wherever_it_decides(store: Store) -> None:
    """`calibrate promote` said "may go to production" for a validation won under
    `--override validation.agreement_margin=0.5`, printing neither the policy nor the override;
    the release gate's validation of record accepted it silently too."""
    from legal_judge.calibration import validation_requirement
    from legal_judge.calibration.promote import promote

    lawyers = _lawyers()
    fair = judge_items(build_judge(store, "simulated:fair"), lawyers.items)
    lenient = judge_items(build_judge(store, "simulated:lenient"), lawyers.items)
    loose = load_policy().with_settings(None, ["validation.agreement_margin=0.5"])
    report = build_report(lawyers, fair, lenient, loose)
    save_validation(store, report)
    assert report.verdict in ("better", "not worse")
    override = "validation.agreement_margin=0.5 (policy 0.05)"
    lines = promote(store, str(report.validation_id))
    assert lines[0].startswith(f"validation {report.validation_id} was decided under policy: ")
    assert f"policy override: {override}" in lines and "may go to production" in lines[-1]
    req = validation_requirement(store, {"fair": str(report.candidate.judge_id)}, required=True,
                                 now=datetime(2026, 12, 1, tzinfo=UTC))
    assert req["met"] and f"fair's validation {report.validation_id} was decided under " \
        f"{override}" in req["reason"]
