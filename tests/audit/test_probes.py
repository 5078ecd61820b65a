"""Discrimination probes: the built-in perturbations degrade only what they say, user probes need no
code, and the simulated judge reads answer quality (fair moves, insensitive and constant do not)."""

from __future__ import annotations

import asyncio
from pathlib import Path

import numpy as np
import pytest

from legal_judge.audit.design import degrade
from legal_judge.audit.dimensions import builtin_dimensions, perturb
from legal_judge.audit.probes import (
    builtin_probes,
    degrade_for,
    is_sound,
    jurisdiction_family,
    legal_sentences,
    load_probe_file,
    resolve_probes,
)
from legal_judge.dataset import load_dataset, sample_dataset_path
from legal_judge.errors import ConfigError, InputError
from legal_judge.judge.config import JudgeConfig
from legal_judge.judge.judge import Judge
from legal_judge.models import BenchmarkItem
from legal_judge.providers.registry import get_provider
from legal_judge.providers.sim_features import answer_quality

SOUND = [i for i in load_dataset(sample_dataset_path()) if is_sound(i)]
BY_ID = {i.id: i for i in SOUND}


def _degrade(probe: str, item_id: str, seed: int = 0) -> BenchmarkItem | None:
    return degrade_for(builtin_probes()[probe], BY_ID[item_id], np.random.default_rng(seed))


def test_sound_items_are_those_the_dataset_marks_correct() -> None:
    assert len(SOUND) == 17 and all(i.metadata["answer_kind"] == "correct" for i in SOUND)
    item = SOUND[0]
    assert not is_sound(item.model_copy(update={"metadata": {"sound": False}}))
    assert is_sound(item.model_copy(update={"metadata": {
        "expected_pass": True, "expected_scores": {"legal_soundness": 5, "completeness": 4}}}))
    assert jurisdiction_family("US-CA") == "US" and jurisdiction_family(None) is None


def test_conclusion_flip_reverses_the_conclusion_and_leaves_the_rest_untouched() -> None:
    original = BY_ID["us-fed-001"].response
    flipped = _degrade("conclusion_flip", "us-fed-001")
    assert flipped is not None
    assert flipped.response.startswith("Yes. On these facts this is very likely lawful pregnancy")
    # Only the short answer and the sentence that states the conclusion change.
    tail = original.split("federal law.", 1)[1]
    assert flipped.response.endswith(tail)
    assert _degrade("conclusion_flip", "us-fed-002").response.startswith("Automatically.")


def test_wrong_jurisdiction_swaps_statutes_and_courts() -> None:
    swapped = _degrade("wrong_jurisdiction", "us-fed-001")
    assert swapped is not None
    assert "U.S.C." not in swapped.response and "EEOC" not in swapped.response
    assert "Equality Act 2010" in swapped.response and "Employment Tribunal" in swapped.response
    gb = _degrade("wrong_jurisdiction", "gb-ews-009")
    assert gb is not None and "Consumer Rights Act" not in gb.response and "§" in gb.response
    assert _degrade("wrong_jurisdiction", "fr-001") is None  # no swap for FR: not applicable


def test_fabricated_authority_is_a_new_case_supporting_the_conclusion() -> None:
    fake = _degrade("fabricated_authority", "us-ny-002")
    assert fake is not None
    added = fake.response.replace(BY_ID["us-ny-002"].response.split(".")[0], "", 1)
    assert " v. " in fake.response.split("(Ely")[0] and "U.S." in added
    names = [c.split(" v")[0] for c in builtin_probes()["fabricated_authority"]
             .params["citations"]["US"]]
    assert any(n in fake.response for n in names)
    assert not any(n in BY_ID["us-ny-002"].response for n in names)


def test_hedge_partial_and_missing_elements() -> None:
    hedge = _degrade("hedge_only", "eu-001")
    assert hedge is not None and ("lawyer" in hedge.response or "attorney" in hedge.response)
    assert "GDPR" not in hedge.response
    full = legal_sentences(BY_ID["us-fed-002"].response)
    assert full[1] == "Miranda v. Arizona, 384 U.S. 436 (1966), requires warnings before " \
                      "custodial interrogation."
    part = _degrade("partial_answer", "us-fed-002")
    assert part is not None and legal_sentences(part.response) == full[:4]  # 60% of 6, rounded
    missing = _degrade("missing_elements", "us-fed-002")
    assert missing is not None and "Miranda" not in missing.response
    assert "custodial interrogation" not in missing.response


def test_user_probe_file_find_replace_and_bad_files(tmp_path: Path) -> None:
    f = tmp_path / "probes.yaml"
    f.write_text("probes:\n  - name: wrong_deadline\n    description: a wrong deadline\n"
                 "    perturbation: find_replace\n    rubrics: [legal_soundness]\n"
                 "    checks: [{rubric: legal_soundness, at_most: 2}]\n"
                 "    params: {rules: [{find: '21 days', replace: '90 days'}]}\n")
    probe = load_probe_file(f)["wrong_deadline"]
    item = BY_ID["us-ca-002"]
    degraded = degrade_for(probe, item, np.random.default_rng(0))
    assert degraded is not None and "90 days" in degraded.response
    assert degrade_for(probe, BY_ID["us-fed-001"], np.random.default_rng(0)) is None
    assert [p.name for p in resolve_probes(["wrong_deadline", "hedge_only"], extra_file=f)] == \
        ["wrong_deadline", "hedge_only"]
    assert resolve_probes(["none"]) == [] and len(resolve_probes(None)) == 6
    with pytest.raises(ConfigError, match="unknown probe"):
        resolve_probes(["nope"])
    f.write_text("probes:\n  - {name: x, description: d, perturbation: nope, rubrics: [a]}\n"
                 "  - {name: y, description: d, perturbation: hedge_only, rubrics: []}\n")
    with pytest.raises(InputError) as info:
        load_probe_file(f)
    assert "rubrics" in str(info.value)
    f.write_text("probes:\n  - {name: x, description: d, perturbation: hedge_only, rubrics: [a],"
                 " checks: [{rubric: a}]}\n")
    with pytest.raises(InputError, match="exactly one of"):
        load_probe_file(f)


def _score(spec: str, item: BenchmarkItem) -> dict[str, float]:
    judge = Judge(JudgeConfig(spec=spec), get_provider(spec), store=None)
    verdict = asyncio.run(judge.judge(item))
    return {**verdict.scores, "fail": float(verdict.overall == "fail"),
            "hallucinated": float(verdict.hallucination == "hallucinated")}


@pytest.mark.parametrize(("probe", "rubric"), [
    ("conclusion_flip", "legal_soundness"), ("wrong_jurisdiction", "jurisdiction_awareness"),
    ("fabricated_authority", "citation_quality"), ("hedge_only", "completeness"),
    ("partial_answer", "completeness"), ("missing_elements", "completeness")])
def test_the_fair_simulator_reads_quality_the_insensitive_one_does_not(probe: str,
                                                                      rubric: str) -> None:
    item = BY_ID["us-fed-002"]
    degraded = _degrade(probe, "us-fed-002")
    assert degraded is not None
    fair = _score("simulated:fair", item)[rubric] - _score("simulated:fair", degraded)[rubric]
    assert fair >= 1.0
    blind = _score("simulated:insensitive", item)[rubric] - \
        _score("simulated:insensitive", degraded)[rubric]
    assert abs(blind) < 1.0
    const = _score("simulated:constant", degraded)
    assert const[rubric] == 3.0 and const["fail"] == 0.0 and const["hallucinated"] == 0.0


def test_the_rules_of_the_judge_prompt_hold_for_the_fair_simulator() -> None:
    flipped = _score("simulated:fair", _degrade("conclusion_flip", "us-ca-001"))
    assert flipped["legal_soundness"] <= 1 and flipped["fail"] == 1.0  # pass/fail flips
    fake = _score("simulated:fair", _degrade("fabricated_authority", "gb-ews-002"))
    assert fake["citation_quality"] == 0.0 and fake["hallucinated"] == 1.0  # rule 1
    wrong = _score("simulated:fair", _degrade("wrong_jurisdiction", "eu-003"))
    assert wrong["jurisdiction_awareness"] <= 2  # rule 2


def test_bias_variants_carry_the_same_quality_so_they_cannot_move_a_fair_judge() -> None:
    # The simulator's quality reading must not see a bias dimension's attribute: A and B of every
    # pair, at both quality levels, read the same against the reference.
    rng = np.random.default_rng(0)
    for dim in builtin_dimensions().values():
        if dim.perturbation == "swap_order":
            continue
        for item in SOUND:
            family = jurisdiction_family(item.jurisdiction)
            for base in (item, degrade(item)):
                sub = "group_b" if dim.effective_kind == "demographic" else None
                pair = perturb(dim, base, rng, subgroup=sub)
                qa = answer_quality(pair.a.response, item.response, family)
                qb = answer_quality(pair.b.response, item.response, family)
                assert qa == qb, (dim.name, item.id)
