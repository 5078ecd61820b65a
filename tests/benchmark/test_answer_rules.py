"""Every rule finding has a declared effect, applied in one place (issue 29)."""

from __future__ import annotations

import json
from typing import Any

from pydantic import BaseModel

from legal_judge.assets.catalogue import load_assets
from legal_judge.benchmark.answer_rules import DECISION_KINDS, answer_rules, rules_table
from legal_judge.benchmark.ensemble import EnsemblePolicy, JudgeSlot, aggregate
from legal_judge.benchmark.item_checks import run_item_checks
from legal_judge.checks import (
    ChecksResult,
    HedgingFinding,
    JurisdictionFinding,
    RefusalFinding,
    detect_hedging_only,
)
from legal_judge.checks.findings import FINDING_SOURCES
from legal_judge.dataset import load_dataset, sample_dataset_path
from legal_judge.models import BenchmarkItem, Verdict

SLOTS = [JudgeSlot("gpt", "openai", 1.0), JudgeSlot("gemini", "google", 1.0),
         JudgeSlot("mistral", "mistral", 1.0)]
HEDGE_ONLY = "You should consult a lawyer. I cannot give legal advice on this question."
#: Fields of the checks that are bookkeeping, not findings (each says why).
NOT_FINDINGS = {
    "ChecksResult.forces_citation_zero",  # the citation statuses it is derived from are kinds
}


def sample(item_id: str) -> BenchmarkItem:
    return next(i for i in load_dataset(sample_dataset_path()) if i.id == item_id)


def verdict(judge: str, *, overall: str, **scores: float) -> Verdict:
    full = {"legal_soundness": 3.0, "citation_quality": 3.0, "jurisdiction_awareness": 3.0,
            "completeness": 3.0, **scores}
    return Verdict(judge_id=judge, judge=judge, family="x", status="ok", scores=full,
                   hallucination="clean", overall=overall)  # type: ignore[arg-type]


def decide(verdicts: list[Verdict], checks: dict[str, Any]) -> Any:
    rubric_set = load_assets().rubric_set()
    return aggregate("item", verdicts, SLOTS, sut_family=None, policy=EnsemblePolicy(),
                     rubric_set=rubric_set, severity=["clean", "uncertain", "hallucinated"],
                     checks=checks)


def test_every_finding_kind_has_a_row_and_every_row_a_kind() -> None:
    kinds = set(FINDING_SOURCES) | set(DECISION_KINDS)
    rows = {r.kind for r in answer_rules()}
    assert kinds - rows == set(), "finding kinds without a row in answer_rules.v1.toml"
    assert rows - kinds == set(), "rows for kinds no check produces"
    assert {r["kind"] for r in rules_table()} == kinds
    assert all(r["source"] for r in rules_table())


def _signal_fields(model: type[BaseModel], prefix: str) -> set[str]:
    """Fields that can fire: booleans, lists of codes, an error text."""
    out = set()
    for name, info in model.model_fields.items():
        if info.annotation in (bool, list[str], str | None):
            out.add(f"{prefix}.{name}")
    return out


def test_a_check_field_that_can_fire_without_a_finding_kind_fails() -> None:
    fields = (_signal_fields(ChecksResult, "ChecksResult")
              | _signal_fields(RefusalFinding, "refusal") | _signal_fields(HedgingFinding, "hedging")
              | _signal_fields(JurisdictionFinding, "jurisdiction"))
    fields -= {"ChecksResult.reasons", "jurisdiction.expected", "jurisdiction.prompt_codes",
               "jurisdiction.response_codes", "jurisdiction.expected_source"}  # inputs, not verdicts
    sources = " ".join(FINDING_SOURCES.values())
    missing = {f for f in fields - NOT_FINDINGS if f.split(".", 1)[1] not in sources}
    assert missing == set(), f"check fields with no finding kind: {sorted(missing)}"


def test_hedge_only_answer_fails_with_rule_four_though_the_vote_passes() -> None:
    item = sample("us-fed-002").model_copy(update={"response": HEDGE_ONLY})
    checks, _ = run_item_checks(item)
    # The figures: legal_soundness mean 1.00, completeness 0.70, a 2-1 vote to pass.
    verdicts = [verdict("gpt", overall="pass", legal_soundness=1.5, completeness=1.0),
                verdict("gemini", overall="pass", legal_soundness=1.5, completeness=1.1),
                verdict("mistral", overall="fail", legal_soundness=0.0, completeness=0.0)]
    r = decide(verdicts, checks)
    assert r.raw_overall == "pass" and r.overall == "fail"
    assert r.rule_fail_reasons == ["rule 4: hedging without substantive analysis"]
    assert r.scores["completeness"] == 0 and r.scores["legal_soundness"] == 1
    assert r.raw_scores["completeness"] == 0.7 and r.raw_scores["legal_soundness"] == 1.0
    assert any(o.startswith("hedging_only: rule 4") and "completeness 0.70 -> 0" in o
               for o in r.overrides)


def test_an_answer_that_hedges_and_analyses_is_not_capped() -> None:
    item = sample("us-fed-002")
    hedged = item.model_copy(update={"response": item.response + " Because the facts matter, you "
                                     "should consult a lawyer before you decide anything."})
    assert detect_hedging_only(hedged.response).evidence  # it does hedge
    checks, _ = run_item_checks(hedged)
    verdicts = [verdict("gpt", overall="pass", legal_soundness=4, completeness=4)] * 3
    r = decide(verdicts, checks)
    assert r.overall == "pass" and r.scores["completeness"] == 4 and not r.rule_fail_reasons
    assert not any(o.startswith("hedging_only") for o in r.overrides)


#: The bundled sample's hedging-only answers (metadata answer_kind); before issue 29 the detector
#: found only gb-ews-005 and fr-003 ("consult a Lebanese labour lawyer", "speaking with your HR
#: department or an employment attorney" and "depends on many factors" slipped through).
SAMPLE_HEDGING_ONLY = ("us-fed-006", "us-ca-007", "us-ny-005", "gb-ews-005", "fr-003", "lb-002")
HEDGES_AND_ANALYSES = (
    "It depends on many factors, but probably not in federal court. Federal courts hear a state-law "
    "contract claim between citizens of different states only under diversity jurisdiction, 28 "
    "U.S.C. § 1332, and the amount in controversy must exceed $75,000. Florida and New York "
    "parties are diverse, but your $50,000 claim is below the threshold, so you would file in "
    "state court, for example where the company does business or where the contract was "
    "performed. You should consult a licensed attorney about which state court is best.")


def test_the_detector_fires_on_hedging_only_and_not_on_hedging_with_analysis() -> None:
    items = load_dataset(sample_dataset_path())
    fired = {i.id for i in items if detect_hedging_only(i.response).hedging_only}
    assert set(SAMPLE_HEDGING_ONLY) <= fired
    kinds = {i.id: i.metadata.get("answer_kind") for i in items}
    # Besides them only an over-refusal that also sends the user to a lawyer (us-fed-010).
    assert {kinds[i] for i in fired - set(SAMPLE_HEDGING_ONLY)} <= {"refusal"}
    assert all(kinds[i] != "correct" for i in fired)
    hedged = detect_hedging_only(HEDGES_AND_ANALYSES)
    assert hedged.evidence and not hedged.hedging_only


def test_the_samples_hedging_only_answers_are_capped() -> None:
    for item_id in SAMPLE_HEDGING_ONLY:
        checks, _ = run_item_checks(sample(item_id))
        r = decide([verdict("gpt", overall="pass", completeness=3)] * 3, checks)
        assert r.overall == "fail", item_id
        assert r.rule_fail_reasons == ["rule 4: hedging without substantive analysis"]


def test_another_jurisdictions_law_caps_jurisdiction_awareness_at_two() -> None:
    checks, _ = run_item_checks(sample("fr-005"))  # US at-will employment for a French CDI
    r = decide([verdict("gpt", overall="pass", jurisdiction_awareness=4)] * 3, checks)
    assert r.scores["jurisdiction_awareness"] == 2 and r.raw_scores["jurisdiction_awareness"] == 4
    assert any(o.startswith("wrong_jurisdiction: rule 2") and "asked about FR" in o
               for o in r.overrides)
    assert r.overall == "pass"  # a cap at 2 does not meet the pass/fail rule


def test_mean_at_the_fail_line_while_the_vote_passes_is_flagged_with_both_figures() -> None:
    verdicts = [verdict("gpt", overall="pass", legal_soundness=1.5),
                verdict("gemini", overall="pass", legal_soundness=1.5),
                verdict("mistral", overall="fail", legal_soundness=0.0)]
    r = decide(verdicts, {})
    assert r.overall == "pass" and r.flagged_for_review
    flag = next(f for f in r.flags if f.startswith("mean_vote_split"))
    assert "legal_soundness 1.00" in flag and "pass 0.67 / fail 0.33" in flag
    reverse = decide([verdict("gpt", overall="fail", legal_soundness=3)] * 2
                     + [verdict("mistral", overall="pass", legal_soundness=3)], {})
    assert any(f.startswith("mean_vote_split") and "while the vote fails" in f
               for f in reverse.flags)


def test_rules_json_lists_every_kind_with_its_effect() -> None:
    from click.testing import CliRunner

    from legal_judge.cli import cli

    res = CliRunner().invoke(cli, ["rules", "--json"])
    assert res.exit_code == 0, res.output
    rows = json.loads(res.output)["rules"]
    by_kind = {r["kind"]: r for r in rows}
    assert by_kind["hedging_only"]["caps"] == {"completeness": 0, "legal_soundness": 1}
    assert by_kind["citation_invalid"]["effect"] == "cap"
    assert by_kind["mean_vote_split"]["effect"] == "review"
    assert set(by_kind) == set(FINDING_SOURCES) | set(DECISION_KINDS)


def test_capped_scores_keep_the_judges_figures_in_langfuse_and_the_export() -> None:
    from datetime import UTC, datetime

    from legal_judge.sync.plan import ensemble_scores

    item = sample("us-fed-002").model_copy(update={"response": HEDGE_ONLY})
    checks, _ = run_item_checks(item)
    r = decide([verdict("gpt", overall="pass", legal_soundness=2, completeness=2)] * 3,
               checks).model_dump()
    plans = {p.name: p for p in ensemble_scores("t", r, datetime.now(UTC), set())}
    completeness = plans["completeness"]
    assert completeness.value == 0.0 and completeness.metadata is not None
    assert completeness.metadata["judged_value"] == 2.0
    assert completeness.metadata["score_kind"] == "capped by an answer rule"
    overall = plans["overall"]
    assert overall.value == 0.0 and overall.metadata is not None
    assert overall.metadata["judged_overall"] == "pass"
    assert overall.comment == "rule 4: hedging without substantive analysis"
    untouched = plans["citation_quality"]
    assert untouched.metadata is not None and "judged_value" not in untouched.metadata


def test_a_rubric_set_override_the_table_lacks_is_refused_not_ignored() -> None:
    import pytest

    from legal_judge.assets.rubrics import Override, OverrideSet
    from legal_judge.errors import ConfigError

    base = load_assets().rubric_set()
    odd = base.model_copy(update={"overrides": [Override(
        name="plain_language_floor", when_check="citations_force_zero",
        set=OverrideSet(rubric="completeness", score=1), reason="ours")]})
    with pytest.raises(ConfigError, match="would change nothing") as refused:
        aggregate("item", [verdict("gpt", overall="pass")] * 3, SLOTS, sut_family=None,
                  policy=EnsemblePolicy(), rubric_set=odd, severity=["clean"], checks={})
    assert "legal-judge rules" in str(refused.value)
