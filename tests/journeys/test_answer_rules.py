"""Every answer decision follows the seed's rules, in every path (issue 29).

A team debugs a failed item: the rule table says what each finding does, a hedge-only answer
fails with rule 4 while an answer that hedges and analyses does not, `judge` gives the decision
`run` stored, a one-off answer is judged without filling `runs list`, a pasted swap setting is
refused, and `audit diff` calls a bias that grew `worse`.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from legal_judge.dataset import sample_dataset_path

from .conftest import Journey

HEDGE_ONLY = "You should consult a lawyer. I cannot give legal advice on this question."


def _sample() -> dict[str, dict[str, Any]]:
    rows = [json.loads(line) for line in sample_dataset_path().read_text(encoding="utf-8")
            .splitlines() if line.strip()]
    return {r["id"]: r for r in rows}


def _result(journey: Journey, run_id: str, item_id: str) -> dict[str, Any]:
    rows = journey.query("SELECT result_json FROM ensemble_results WHERE run_id = ? AND item_id = ?",
                         run_id, item_id)
    assert rows, f"no stored result for {item_id}"
    return dict(json.loads(rows[0][0]))


def _runs(journey: Journey) -> list[str]:
    return [r[0] for r in journey.query("SELECT id FROM runs ORDER BY id")]


def test_rules_table_and_hedge_only_answer_fails_with_rule_four(journey: Journey) -> None:
    # `legal-judge rules --json` lists every finding kind with its effect.
    rules = json.loads(journey("rules", "--json").out)["rules"]
    by_kind = {r["kind"]: r for r in rules}
    assert by_kind["hedging_only"]["effect"] == "cap"
    assert by_kind["hedging_only"]["caps"] == {"completeness": 0, "legal_soundness": 1}
    assert by_kind["jurisdiction_different"]["caps"] == {"jurisdiction_awareness": 2}
    assert by_kind["mean_vote_split"]["effect"] == "review"
    shown = journey("rules")
    assert "hedging_only" in shown.out and "cap" in shown.out

    # Defect: us-fed-002 answered "consult a lawyer" only passed on a 2-1 vote; nothing acted on
    # `hedging only: yes`. An answer that hedges *and* analyses must not be capped.
    sample = _sample()
    hedge = {**sample["us-fed-002"], "response": HEDGE_ONLY}
    analysed = {**sample["us-fed-002"], "id": "us-fed-002-hedged",
                "response": sample["us-fed-002"]["response"]
                + " Because the facts matter, consult a lawyer before you decide anything."}
    data = journey.cwd / "bench.jsonl"
    data.write_text("\n".join(json.dumps(r) for r in (hedge, analysed, sample["us-fed-006"]))
                    + "\n", encoding="utf-8")
    out = journey.cwd / "results.jsonl"
    ran = journey("run", str(data), "--ensemble", "demo", "--quiet", "--run-id", "r-hedge",
                  "--out", str(out))
    assert "items with rule overrides (`legal-judge rules`): 2" in " ".join(ran.out.split())
    stored = _result(journey, "r-hedge", "us-fed-002")
    assert stored["overall"] == "fail"
    assert stored["rule_fail_reasons"] == ["rule 4: hedging without substantive analysis"]
    assert stored["scores"]["completeness"] == 0 and stored["scores"]["legal_soundness"] <= 1
    assert "completeness" in stored["raw_scores"]  # the judges' own mean beside the cap
    # us-fed-006 ("depends on many factors ... consult a licensed attorney") passed before.
    assert _result(journey, "r-hedge", "us-fed-006")["rule_fail_reasons"] == [
        "rule 4: hedging without substantive analysis"]
    kept = _result(journey, "r-hedge", "us-fed-002-hedged")
    assert kept["overall"] == "pass" and not kept["rule_fail_reasons"]
    assert not any(o.startswith("hedging_only") for o in kept["overrides"])
    rows = {r["item_id"]: r for r in map(json.loads, out.read_text(encoding="utf-8").splitlines())}
    assert rows["us-fed-002"]["rule_fail_reasons"] == "rule 4: hedging without substantive analysis"
    assert rows["us-fed-002"]["ensemble.completeness"] == 0
    assert rows["us-fed-002"]["ensemble.completeness.judged"] == stored["raw_scores"]["completeness"]


def test_judge_gives_the_runs_decision_and_a_one_off_answer_stores_nothing(
        journey: Journey) -> None:
    journey("run", str(sample_dataset_path()), "--ensemble", "demo", "--ids", "us-fed-004",
            "--quiet", "--run-id", "r-004")
    stored = _result(journey, "r-004", "us-fed-004")
    (verdict_json,) = journey.query("SELECT verdict_json FROM verdicts WHERE run_id = 'r-004' "
                                    "AND judge = 'gpt-4o (simulated)'")[0]
    in_run = json.loads(verdict_json)

    # Defect: `judge` ran no rule checks and printed citation_quality 4.2 / pass for us-fed-004.
    judged = json.loads(journey("judge", "--judge", "simulated:demo-openai", "--item",
                                "us-fed-004", "--json").out)
    verdict = judged["verdicts"][0]
    for field in ("judge_id", "scores", "hallucination", "overall"):
        assert verdict[field] == in_run[field], field
    assert judged["result"]["scores"]["citation_quality"] == 0
    assert judged["result"]["overall"] == stored["overall"] == "fail"
    assert [o.split(":", 1)[0] for o in judged["result"]["overrides"]] == ["fabricated_source"]
    assert judged["saved"] is False
    printed = journey("judge", "--judge", "simulated:demo-openai", "--item", "us-fed-004")
    assert "citation_invalid [cap]" in printed.out and "override: fabricated_source" in printed.out
    assert "14 F.4th 882" in printed.out and "not stored" in printed.out
    # The whole ensemble through `judge` gives the run's stored decision, field by field.
    whole = json.loads(journey("judge", "--ensemble", "demo", "--item", "us-fed-004",
                               "--json").out)["result"]
    for field in ("overall", "scores", "raw_scores", "hallucination", "votes", "overrides",
                  "rule_fail_reasons", "flags", "flagged_for_review"):
        assert whole[field] == stored[field], field

    # A one-off answer: findings and overrides printed beside the scores; `runs list` unchanged.
    before = _runs(journey)
    one_off = journey("judge", "--judge", "simulated:demo-google", "--prompt",
                      "Can my landlord in Paris keep my deposit?", "--response", HEDGE_ONLY,
                      "--jurisdiction", "FR")
    assert "hedging_only [cap]" in one_off.out and "rule: rule 4" in one_off.out
    assert "overall: fail" in one_off.out
    assert _runs(journey) == before
    saved = journey("judge", "--judge", "simulated:demo-google", "--prompt",
                    "Can my landlord in Paris keep my deposit?", "--response", HEDGE_ONLY,
                    "--save")
    assert "stored as run" in saved.out and len(_runs(journey)) == len(before) + 1
    # Naming no answer, or two, is the user's to fix.
    assert "--prompt TEXT --response TEXT" in journey("judge", "--judge", "simulated:demo-google",
                                                       expect=2).text


def test_swap_in_an_ensemble_is_refused_and_audit_diff_says_worse(journey: Journey) -> None:
    demo = (Path(sample_dataset_path()).parent / "ensemble.demo.toml").read_text(encoding="utf-8")
    ensemble = journey.cwd / "mine.toml"
    ensemble.write_text(demo.replace('spec = "simulated:demo-openai"\n',
                                     'spec = "simulated:demo-openai"\n'
                                     'debias = { mode = "swap" }\n', 1), encoding="utf-8")
    # Defect: pasted from `debias compare`, swap changed nothing in a pointwise ensemble, silently.
    refused = journey("run", str(sample_dataset_path()), "--ensemble", str(ensemble), "--limit",
                      "2", expect=2)
    flat = " ".join(refused.text.split())
    assert "swap changes pairwise judging only; for position bias in pointwise scoring use" in flat
    assert 'mode = "aware", bias = "position"' in flat
    assert _runs(journey) == [] if journey.store_file.exists() else True

    # Defect: position +0.72 -> +1.12 after a mitigation was shown as "still flagged".
    old = [1, 0.5, 1, 0.5, 0.5, 1, 0.5, 1, 0.5, 0.7]
    new = [1.5, 1, 1.5, 0.5, 1, 1.5, 1, 1.5, 0.5, 1.2]
    paths = []
    for name, diffs in (("old", old), ("new", new)):
        report = {"audit_metadata": {"significance_threshold": 0.05},
                  "extensions": {"target": {"spec": "simulated:demo-openai"}},
                  "dimension_results": [{
                      "dimension": "position", "flagged": True,
                      "mean_difference": round(sum(diffs) / len(diffs), 2),
                      "effect_size": 0.72 if name == "old" else 1.12,
                      "test_pairs": [{"variant_a_input": f"a{i}", "variant_b_input": f"b{i}",
                                      "variant_a_score": d, "variant_b_score": 0.0,
                                      "difference": d, "exceeds_threshold": True}
                                     for i, d in enumerate(diffs)]}]}
        path = journey.cwd / f"{name}.json"
        path.write_text(json.dumps(report), encoding="utf-8")
        paths.append(str(path))
    diff = journey("audit", "diff", *paths)
    assert "worse" in diff.out and "still flagged" not in diff.out
    rows = json.loads(journey("audit", "diff", *paths, "--json").out)
    assert rows[0]["status"] == "worse" and rows[0]["moved_away_p"] < 0.05
