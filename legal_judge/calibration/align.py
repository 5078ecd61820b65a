"""``calibrate align``: build a candidate judge from the lawyers' labels, validated without leaking.

The labelled items are split into seeded folds stratified by the lawyers' pass/fail. For each
evaluation fold the few-shot candidate is built only from the other folds' items (its examples
never include an item it is then scored on) and scores the fold: together the folds give the
*cross-fitted* scores, which are what the validation verdict is computed on. The final candidate
is built on all labels and saved as a new prompt version; its agreement on the same labels it was
built from is reported beside the cross-fitted one as *in-sample* (an optimistic figure, never
the basis of a verdict). The lawyers' comments on the judge's errors are written as a "lawyers'
notes" draft for a person to edit; that draft is cross-validated the same way (each fold's notes
gathered from the other folds only), so the person knows whether it helps on items it never saw
before applying it. Its figures are reported beside the few-shot candidate's; the verdict is the
few-shot candidate's.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from legal_judge.calibration.align_prompt import (
    CandidatePrompt,
    build_candidate,
    choose_examples,
    gather_notes,
    lawyers_notes,
    render_examples,
    render_notes,
)
from legal_judge.calibration.rescore import build_judge, judge_items
from legal_judge.calibration.validation_data import JudgeScores, LawyerSet, load_lawyer_set
from legal_judge.calibration.validation_run import build_report, save_validation
from legal_judge.calibration.validation_schema import CrossFit, JudgeRef, ValidationReport
from legal_judge.errors import ConfigError
from legal_judge.policy import PolicyInForce
from legal_judge.store import Store

__all__ = ["AlignResult", "FoldPlan", "align_judge", "align_on", "make_folds"]


@dataclass(frozen=True)
class FoldPlan:
    """One evaluation fold: its items, the examples its candidate shows, the rendered prompt."""

    fold: int
    eval_keys: tuple[str, ...]
    example_keys: tuple[str, ...]
    system_prompt: str


@dataclass(frozen=True)
class AlignResult:
    """The validation of the cross-fitted candidate and where the final candidate was saved."""

    report: ValidationReport
    folds: list[FoldPlan]
    prompt: CandidatePrompt
    notes_file: Path
    #: The lawyers' notes draft's folds (its cross-validation); empty without any note.
    notes_folds: list[FoldPlan] = field(default_factory=list)


def make_folds(lawyers: LawyerSet, folds: int, seed: int) -> list[list[str]]:
    """Seeded folds stratified by the lawyers' pass/fail (undecided items form a stratum too)."""
    rng = np.random.default_rng(seed)
    out: list[list[str]] = [[] for _ in range(folds)]
    turn = 0
    for stratum in (True, False, None):
        keys = [k for k in lawyers.keys if lawyers.lawyers_pass.get(k) is stratum]
        for key in rng.permutation(np.array(keys, dtype=object)).tolist() if keys else []:
            out[turn % folds].append(str(key))
            turn += 1
    return [sorted(f) for f in out]


def _agreement(judge: JudgeScores, lawyers: LawyerSet) -> float | None:
    decided = [k for k in lawyers.keys if lawyers.lawyers_pass.get(k) is not None]
    if not decided:
        return None
    return sum(1 for k in decided if judge.passed.get(k) is lawyers.lawyers_pass[k]) / len(decided)


def _false_pass(judge: JudgeScores, lawyers: LawyerSet) -> float | None:
    fails = [k for k in lawyers.keys if lawyers.lawyers_pass.get(k) is False]
    return (sum(1 for k in fails if judge.passed.get(k) is not False) / len(fails)
            if fails else None)


#: What builds a candidate from training keys: (its prompt block, the example keys it shows).
Builder = Callable[[list[str]], tuple[str, list[str]]]


def _cross_fitted(store: Store, spec: str, lawyers: LawyerSet, baseline: JudgeScores,
                  fold_keys: list[list[str]], build: Builder, folder: Path,
                  name: str) -> tuple[JudgeScores, list[FoldPlan]]:
    """Each fold scored by a candidate built from the other folds only (a fold whose training
    items give an empty block keeps the incumbent's scores: the candidate there *is* the
    incumbent)."""
    from legal_judge.assets.catalogue import load_assets

    crossed = JudgeScores(JudgeRef(name=name, spec=spec, judge_id=None, source="calibrate align"))
    plans = []
    for number, eval_keys in enumerate(fold_keys, start=1):
        train = [key for key in lawyers.keys if key not in set(eval_keys)]
        block, examples = build(train)
        if block:
            prompt = build_candidate(folder / f"fold-{number}", block, examples)
            judge = build_judge(store, spec, assets=prompt.assets, rubric_set=lawyers.rubric_set)
        else:
            judge = build_judge(store, spec, assets=load_assets(), rubric_set=lawyers.rubric_set)
        scored = judge_items(judge, {key: lawyers.items[key] for key in eval_keys})
        for rubric, col in scored.scores.items():
            crossed.scores.setdefault(rubric, {}).update(col)
        crossed.passed.update(scored.passed)
        first = lawyers.items[eval_keys[0]] if eval_keys else next(iter(lawyers.items.values()))
        plans.append(FoldPlan(number, tuple(eval_keys), tuple(examples),
                              judge.messages(first)[0].content))
    return crossed, plans


def align_judge(store: Store, calibration_ids: list[str], spec: str, *, out: Path,
                policy: PolicyInForce, folds: int = 5, k: int = 4, seed: int = 0) -> AlignResult:
    """Build the few-shot candidate of ``spec`` and validate it cross-fitted (see the module).

    Raises:
        ConfigError: fewer labelled items than folds, or ``k`` < 1.
        NotFoundError: an unknown calibration.
    """
    return align_on(store, load_lawyer_set(store, calibration_ids), spec, out=out,
                    policy=policy, folds=folds, k=k, seed=seed)


def align_on(store: Store, lawyers: LawyerSet, spec: str, *, out: Path, policy: PolicyInForce,
             folds: int = 5, k: int = 4, seed: int = 0) -> AlignResult:
    """:func:`align_judge` on a labelled set already loaded (tests build one by hand).

    Raises:
        ConfigError: fewer labelled items than folds, or ``k`` < 1.
    """
    if k < 1 or folds < 2 or len(lawyers.items) < folds:
        raise ConfigError(f"align needs k >= 1, at least 2 folds and an item per fold "
                          f"(k={k}, folds={folds}, {len(lawyers.items)} labelled items)",
                          code="align-args", fix="use --folds 5 --k 4 on 20 or more labels")
    baseline = judge_items(build_judge(store, spec, rubric_set=lawyers.rubric_set),
                           lawyers.items, name=spec)
    baseline.ref = baseline.ref.model_copy(update={"spec": spec})
    from legal_judge.assets.catalogue import load_assets

    assets = load_assets()

    def few_shot(train: list[str]) -> tuple[str, list[str]]:
        examples = choose_examples(lawyers, baseline, train, k)
        return render_examples(assets, lawyers, baseline, examples), examples

    def notes_only(train: list[str]) -> tuple[str, list[str]]:
        return render_notes(assets, gather_notes(lawyers, baseline, train)), []

    fold_keys = make_folds(lawyers, folds, seed)
    crossed, plans = _cross_fitted(store, spec, lawyers, baseline, fold_keys, few_shot,
                                   out / "folds", f"{spec} + lawyers' examples (cross-fitted)")
    block, examples = few_shot(lawyers.keys)
    final = build_candidate(out / "prompt", block, examples)
    final_judge = build_judge(store, spec, assets=final.assets, rubric_set=lawyers.rubric_set)
    in_sample = judge_items(final_judge, lawyers.items)
    crossed.ref = crossed.ref.model_copy(update={"judge_id": final_judge.judge_id})
    notes = out / "lawyers-notes.md"
    notes.write_text(lawyers_notes(lawyers, baseline, lawyers.keys), encoding="utf-8")
    noted, note_plans = _cross_fitted(store, spec, lawyers, baseline, fold_keys, notes_only,
                             out / "notes-folds", f"{spec} + lawyers' notes (cross-fitted)")
    n_notes = sum(len(v) for v in gather_notes(lawyers, baseline, lawyers.keys).values())
    cross = CrossFit(method="few-shot", folds=folds, seed=seed, k=k,
                     in_sample_agreement=_agreement(in_sample, lawyers),
                     cross_fitted_agreement=_agreement(crossed, lawyers),
                     incumbent_agreement=_agreement(baseline, lawyers),
                     incumbent_false_pass=_false_pass(baseline, lawyers),
                     in_sample_false_pass=_false_pass(in_sample, lawyers),
                     cross_fitted_false_pass=_false_pass(crossed, lawyers),
                     prompt_dir=str(final.root), notes_file=str(notes),
                     fold_items=[list(p.eval_keys) for p in plans],
                     notes_count=n_notes,
                     notes_cross_fitted_agreement=_agreement(noted, lawyers) if n_notes else None,
                     notes_cross_fitted_false_pass=(_false_pass(noted, lawyers) if n_notes
                                                    else None))
    report = build_report(lawyers, crossed, baseline, policy, cross_fit=cross, notes=[
        "verdicts on cross-fitted scores: each item scored by a candidate built without it",
        f"final candidate: {final.template} v{final.version} in {final.root}/prompts "
        f"(judge_id {final_judge.judge_id}); use it with LEGAL_JUDGE_ASSETS={final.root}"])
    save_validation(store, report)
    (out / "validation.json").write_text(json.dumps(report.model_dump(mode="json"), indent=2),
                                         encoding="utf-8")
    return AlignResult(report, plans, final, notes, note_plans if n_notes else [])
