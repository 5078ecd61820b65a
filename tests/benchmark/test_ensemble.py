"""Same-family weighting, aggregation, vote and quorum, exactly as DESIGN.md fixes them."""

from __future__ import annotations

import pytest

from legal_judge.assets.catalogue import load_assets
from legal_judge.benchmark.ensemble import (
    EnsemblePolicy,
    JudgeSlot,
    aggregate,
    check_policy,
    compute_weights,
)
from legal_judge.errors import ConfigError
from legal_judge.models import Verdict

POLICY = EnsemblePolicy()
SLOTS = [JudgeSlot("gpt", "openai", 1.0), JudgeSlot("gemini", "google", 1.0),
         JudgeSlot("claude", "anthropic", 1.0)]


def weights(slots: list[JudgeSlot], sut: str | None) -> dict[str, float]:
    return {w.judge: w.weight for w in compute_weights(slots, sut, POLICY)}


def test_no_judge_same_family_keeps_equal_weights() -> None:
    assert weights(SLOTS, "meta") == pytest.approx({"gpt": 1 / 3, "gemini": 1 / 3, "claude": 1 / 3})


def test_one_of_three_same_family_others_already_carry_two_thirds() -> None:
    w = weights(SLOTS, "anthropic")
    assert w == pytest.approx({"gpt": 1 / 3, "gemini": 1 / 3, "claude": 1 / 3})
    assert w["gpt"] + w["gemini"] >= 0.6


def test_two_of_three_same_family_other_raised_to_sixty_percent() -> None:
    slots = [JudgeSlot("claude-a", "anthropic", 1), JudgeSlot("claude-b", "anthropic", 1),
             JudgeSlot("gpt", "openai", 1)]
    w = weights(slots, "anthropic")
    assert w == pytest.approx({"claude-a": 0.2, "claude-b": 0.2, "gpt": 0.6})
    reasons = {x.judge: x.reason for x in compute_weights(slots, "anthropic", POLICY)}
    assert "raised to 60%" in reasons["gpt"]


def test_one_same_family_with_heavy_weight_is_rebalanced() -> None:
    slots = [JudgeSlot("claude", "anthropic", 3), JudgeSlot("gpt", "openai", 1),
             JudgeSlot("gemini", "google", 1)]
    w = weights(slots, "anthropic")
    assert w["claude"] == pytest.approx(0.4)
    assert w["gpt"] == pytest.approx(0.3) and w["gemini"] == pytest.approx(0.3)


def test_all_same_family_refused_unless_allowed() -> None:
    slots = [JudgeSlot("a", "openai", 1), JudgeSlot("b", "openai", 1)]
    with pytest.raises(ConfigError) as exc:
        check_policy(slots, "openai", POLICY)
    assert exc.value.code == "ensemble-same-family-only"
    warn = check_policy(slots, "openai", EnsemblePolicy(allow_same_family_only=True))
    assert warn and "self-preference" in warn[0]


def test_single_same_family_judge_refused_even_if_allowed() -> None:
    with pytest.raises(ConfigError) as exc:
        check_policy([JudgeSlot("a", "openai", 1)], "openai", EnsemblePolicy(allow_same_family_only=True))
    assert exc.value.code == "ensemble-same-family-single"
    assert check_policy([JudgeSlot("a", "openai", 1)], "google", POLICY) == []


def v(judge: str, family: str, *, ls: float = 4, overall: str = "pass", hall: str = "clean",
      status: str = "ok") -> Verdict:
    if status != "ok":
        return Verdict(judge_id="x", judge=judge, family=family, status=status, reason="bad")  # type: ignore[arg-type]
    return Verdict(judge_id="x", judge=judge, family=family, status="ok",
                   scores={"legal_soundness": ls, "citation_quality": 3.0}, hallucination=hall,  # type: ignore[arg-type]
                   overall=overall)  # type: ignore[arg-type]


def agg(verdicts: list[Verdict], slots: list[JudgeSlot] = SLOTS, sut: str | None = "meta",
        checks: dict | None = None):  # type: ignore[no-untyped-def,type-arg]
    assets = load_assets()
    return aggregate("i", verdicts, slots, sut_family=sut, policy=POLICY,
                     rubric_set=assets.rubric_set(), severity=["clean", "uncertain", "hallucinated"],
                     checks=checks)


def test_weighted_mean_and_majority_vote() -> None:
    r = agg([v("gpt", "openai", ls=5), v("gemini", "google", ls=2, overall="fail"),
             v("claude", "anthropic", ls=2, overall="fail")])
    assert r.status == "ok" and r.scores["legal_soundness"] == pytest.approx(3.0)
    assert r.overall == "fail" and r.votes == pytest.approx({"pass": 1 / 3, "fail": 2 / 3})


def test_inconclusive_judge_weights_renormalised() -> None:
    slots = [JudgeSlot("claude-a", "anthropic", 1), JudgeSlot("claude-b", "anthropic", 1),
             JudgeSlot("gpt", "openai", 1)]
    r = agg([v("claude-a", "anthropic", ls=5), v("claude-b", "anthropic", status="inconclusive"),
             v("gpt", "openai", ls=2)], slots=slots, sut="anthropic")
    w = {x.judge: x.weight for x in r.weights}
    assert w == pytest.approx({"claude-a": 0.4, "gpt": 0.6})
    assert r.scores["legal_soundness"] == pytest.approx(0.4 * 5 + 0.6 * 2)


def test_quorum_not_met_is_inconclusive_not_passed() -> None:
    r = agg([v("gpt", "openai"), v("gemini", "google", status="inconclusive"),
             v("claude", "anthropic", status="error")])
    assert r.status == "inconclusive" and r.overall is None and r.scores == {}
    assert "quorum is 2" in (r.reason or "")


def test_vote_tie_fails() -> None:
    slots = SLOTS[:2]
    r = agg([v("gpt", "openai", overall="pass"), v("gemini", "google", overall="fail")], slots=slots)
    assert r.votes["pass"] == pytest.approx(r.votes["fail"]) and r.overall == "fail"


def test_hallucination_tie_resolves_to_more_severe() -> None:
    slots = SLOTS[:2]
    r = agg([v("gpt", "openai", hall="clean"), v("gemini", "google", hall="uncertain")], slots=slots)
    assert r.hallucination == "uncertain"
    r2 = agg([v("gpt", "openai", hall="hallucinated"), v("gemini", "google", hall="clean"),
              v("claude", "anthropic", hall="clean")])
    assert r2.hallucination == "clean"  # plurality wins when there is no tie


def test_rule_one_override_forces_citation_zero_and_is_visible() -> None:
    verdicts = [v("gpt", "openai"), v("gemini", "google"), v("claude", "anthropic")]
    r = agg(verdicts, checks={"forces_citation_zero": True, "reasons": ["Varghese: not_found"]})
    assert r.scores["citation_quality"] == 0 and r.raw_scores["citation_quality"] == 3.0
    assert r.overrides and "fabricated_source" in r.overrides[0] and "Varghese" in r.overrides[0]
    clean = agg(verdicts, checks={"forces_citation_zero": False, "reasons": []})
    assert clean.scores["citation_quality"] == 3.0 and clean.overrides == []


def test_disagreement_flags_item_for_review() -> None:
    r = agg([v("gpt", "openai", ls=5), v("gemini", "google", ls=1), v("claude", "anthropic", ls=3)])
    assert r.disagreement["legal_soundness"]["range"] == 4
    assert r.disagreement["legal_soundness"]["sd"] == pytest.approx(2.0)
    assert r.flagged_for_review


def test_verdict_is_weighted_as_the_judge_in_its_slot_not_by_the_name_it_carries() -> None:
    """Issue 20 item 1: a renamed judge's cached verdicts carry the old display name."""
    renamed = [JudgeSlot("openai", "openai", 1.0), JudgeSlot("google", "google", 1.0),
               JudgeSlot("anthropic", "anthropic", 1.0)]
    # All three names stale: the old code found no valid slot and divided by zero.
    r = agg([v("gpt", "openai", ls=5), v("gemini", "google", ls=2, overall="fail"),
             v("claude", "anthropic", ls=2, overall="fail")], slots=renamed)
    assert r.status == "ok" and r.scores["legal_soundness"] == pytest.approx(3.0)
    assert {w.judge for w in r.weights} == {"openai", "google", "anthropic"}
    # One name kept, two renamed: the old code raised KeyError on the renamed ones.
    mixed = [JudgeSlot("gpt", "openai", 1.0), JudgeSlot("google", "google", 1.0),
             JudgeSlot("anthropic", "anthropic", 1.0)]
    r = agg([v("gpt", "openai", ls=5), v("gemini", "google", ls=2, overall="fail"),
             v("claude", "anthropic", ls=2, overall="fail")], slots=mixed)
    assert r.scores["legal_soundness"] == pytest.approx(3.0) and r.overall == "fail"


def test_weights_follow_the_slot_family_when_the_verdict_says_otherwise() -> None:
    # A verdict cached before a `family = ...` override still counts as the configured family.
    slots = [JudgeSlot("a", "meta", 1.0), JudgeSlot("b", "google", 1.0), JudgeSlot("c", "openai", 1.0)]
    r = agg([v("a", "openai", ls=5), v("b", "google", ls=2), v("c", "openai", ls=2)], slots=slots,
            sut="meta")
    w = {x.judge: x.weight for x in r.weights}
    assert w["a"] == pytest.approx(1 / 3) and w["a"] == pytest.approx(w["b"])
    assert next(x for x in r.weights if x.judge == "a").same_family


def test_verdicts_and_slots_must_line_up() -> None:
    with pytest.raises(ValueError, match="2 verdicts for 3 judges"):
        agg([v("gpt", "openai"), v("gemini", "google")])


def _numpy_disagreement(scores: list[float]) -> dict[str, float]:
    """The formula the ensemble used with numpy (the reference the pure-Python one must equal)."""
    import numpy as np

    arr = np.asarray(scores, dtype=float)
    return {"range": float(arr.max() - arr.min()),
            "sd": float(arr.std(ddof=1)) if arr.size > 1 else 0.0}


def test_sample_sd_is_numpys_number_exactly_for_random_inputs() -> None:
    import random

    from legal_judge.benchmark.ensemble import sample_sd

    rng = random.Random(18)
    for _ in range(20_000):
        values = [rng.choice([float(rng.randint(0, 5)), rng.uniform(0, 5), rng.uniform(-1e9, 1e9)])
                  for _ in range(rng.randint(1, 12))]
        assert sample_sd(values) == _numpy_disagreement(values)["sd"], values


def test_aggregate_disagreement_equals_the_numpy_formula() -> None:
    import random

    rng = random.Random(4)
    for _ in range(300):
        verdicts = [v(s.name, s.family, ls=rng.choice([rng.randint(0, 5), round(rng.uniform(0, 5), 3)]))
                    for s in SLOTS]
        r = agg(verdicts)
        for rubric in ("legal_soundness", "citation_quality"):
            assert r.disagreement[rubric] == _numpy_disagreement(
                [x.scores[rubric] for x in verdicts])


def test_weights_are_values_shared_by_the_items_that_have_them() -> None:
    """Every item of a run carries its judges' weights; they were copied per item (a tenth of
    aggregating a cached item). They are frozen now, so sharing them cannot leak a change."""
    from pydantic import ValidationError

    slots = [JudgeSlot("a", "openai", 1.0), JudgeSlot("b", "google", 1.0)]
    first, second = compute_weights(slots, "openai", POLICY), compute_weights(slots, "openai", POLICY)
    assert first == second and [w.weight for w in first] == [0.4, 0.6]
    with pytest.raises(ValidationError):
        first[0].weight = 0.9
    assert compute_weights(slots, "openai", POLICY)[0].weight == 0.4
