"""The run's own gates (benchmark/run_gate.py): nothing scored fails, the [run] share gate.

The run end to end (status, exit codes, resume) is in tests/journeys/test_no_green_without_judging.py.
"""

from __future__ import annotations

from typing import Any

import pytest

from legal_judge.benchmark.run_gate import no_judgment, run_gate
from legal_judge.policy import RunPolicy

SPEC_A = "openai-compatible:llama3.1:70b@http://10.0.0.1:8000/v1"


class FakeStore:
    """What no_judgment reads of a store: the run's config and its failed calls."""

    def __init__(self, errors: list[tuple[str, str, int]]) -> None:
        self.errors = errors

    def get_run(self, run_id: str) -> dict[str, Any]:
        return {"config": {"ensemble": {"judges": [
            {"spec": SPEC_A, "name": None},
            {"spec": "anthropic:claude-sonnet-4-5", "name": "claude"}]}}}

    def call_errors(self, run_id: str) -> list[tuple[str, str, int]]:
        return self.errors


def _summary(**kw: Any) -> dict[str, Any]:
    return {"items": 2, "scored": 0, "inconclusive": ["a", "b"],
            "calls": {"calls": 6, "failed": 6}} | kw


def test_a_scored_run_has_no_failure() -> None:
    assert no_judgment(FakeStore([]), "r", _summary(scored=1)) is None  # type: ignore[arg-type]


def test_failed_calls_are_one_line_without_provider_names_or_fixes() -> None:
    # The provider name (a model with a colon in it) and the error's fix line are left out, so
    # the same cause at two judges is counted once.
    store = FakeStore([
        (SPEC_A, "openai-compatible:llama3.1:70b: connection refused at http://10.0.0.1:8000/v1",
         4),
        ("claude", "anthropic:claude-sonnet-4-5: HTTP 401: invalid x-api-key\n  fix: check the "
                   "key in ANTHROPIC_API_KEY", 2)])
    got = no_judgment(store, "r", _summary())  # type: ignore[arg-type]
    assert got is not None and got.external and got.exit_code == 3
    assert got.reason == ("no item could be judged: 6 of 6 calls failed: connection refused at "
                          "http://10.0.0.1:8000/v1 (4); HTTP 401: invalid x-api-key (2)")
    one = FakeStore([(SPEC_A, "openai-compatible:llama3.1:70b: connection refused at U", 3),
                     ("claude", "anthropic:claude-sonnet-4-5: connection refused at U", 3)])
    got = no_judgment(one, "r", _summary())  # type: ignore[arg-type]
    assert got is not None
    assert got.reason == "no item could be judged: 6 of 6 calls failed: connection refused at U"


def test_judges_that_answered_but_never_validly_fail_without_a_resume() -> None:
    got = no_judgment(FakeStore([]), "r1",  # type: ignore[arg-type]
                      _summary(calls={"calls": 18, "failed": 0}))
    assert got is not None and not got.external and got.exit_code == 1
    assert got.reason.startswith("no item could be judged: 2 of 2 items INCONCLUSIVE")
    empty = no_judgment(FakeStore([]), "r", _summary(items=0, inconclusive=[]))  # type: ignore[arg-type]
    assert empty is not None and empty.reason == "no item could be judged: the run has no items"


@pytest.mark.parametrize(("inconclusive", "items", "limit", "passed"), [
    (0, 57, 0.10, True), (1, 10, 0.10, True),   # at the limit passes (the limit is allowed)
    (2, 10, 0.10, False), (1, 4, 0.0, False), (0, 0, 0.10, False),  # no items: no evidence
])
def test_the_run_gate_holds_the_share_to_the_policy(inconclusive: int, items: int, limit: float,
                                                     passed: bool) -> None:
    gate = run_gate({"items": items, "inconclusive": ["x"] * inconclusive},
                    RunPolicy(max_inconclusive_share=limit))
    assert gate.passed is passed
    assert gate.line.startswith("run gate: passed" if passed else "run gate: FAILED")


def test_the_run_gate_line_names_share_counts_and_limit() -> None:
    gate = run_gate({"items": 4, "inconclusive": ["a"]}, RunPolicy())
    assert gate.line == ("run gate: FAILED: inconclusive share 25.0% (1 of 4 items) > policy "
                         "limit 10.0% (run.max_inconclusive_share)")
    assert gate.as_dict() == {"passed": False, "inconclusive": 1, "items": 4, "share": 0.25,
                              "max_inconclusive_share": 0.1, "min_judge_coverage": 0.9,
                              "judges": []}


def _judges(**rows: tuple[int, int, int]) -> dict[str, dict[str, int]]:
    return {name: {"ok": ok, "error": error, "inconclusive": inc}
            for name, (ok, error, inc) in rows.items()}


def test_a_judge_down_all_run_fails_the_gate_though_the_quorum_held() -> None:
    """Defect: a three-judge ensemble with one judge refused on every call met its quorum of 2
    on every item: `completed`, exit 0, "run gate: passed", the judge named nowhere but in an
    `error` column. Each judge must now return a verdict on run.min_judge_coverage of the items;
    its calls failed, so a resume judges them again (exit 3)."""
    summary = {"items": 10, "inconclusive": [],
               "judges": _judges(claude=(0, 10, 0), gemini=(10, 0, 0), gpt=(10, 0, 0))}
    gate = run_gate(summary, RunPolicy())
    assert not gate.passed and gate.exit_code == 3
    assert [j.judge for j in gate.short] == ["claude"]
    assert gate.line == (
        "run gate: FAILED: judge claude returned a verdict on 0 of 10 items (0.0%) < policy "
        "minimum 90% (run.min_judge_coverage); inconclusive share 0.0% (0 of 10 items) <= policy "
        "limit 10.0% (run.max_inconclusive_share)")
    assert gate.judge_notes({"claude": "connection refused at U"}) == [
        "claude: 10 verdict(s) failed (connection refused at U); 10 item(s) were judged without "
        "it"]
    assert gate.as_dict()["judges"][0] == {"judge": "claude", "verdicts": 0, "errors": 10,
                                           "inconclusive": 0, "coverage": 0.0, "met": False}


def test_a_judge_that_never_answers_validly_fails_the_gate_without_a_resume() -> None:
    summary = {"items": 4, "inconclusive": [],
               "judges": _judges(a=(0, 0, 4), b=(4, 0, 0), c=(4, 0, 0))}
    gate = run_gate(summary, RunPolicy())
    assert not gate.passed and gate.exit_code == 1  # its answers are stored: a resume reuses them
    assert gate.judge_notes() == ["a: 4 INCONCLUSIVE; 4 item(s) were judged without it"]


@pytest.mark.parametrize(("ok", "minimum", "passed"), [
    (9, 0.9, True), (8, 0.9, False), (0, 0.0, True), (10, 1.0, True), (9, 1.0, False)])
def test_judge_coverage_is_held_to_the_policy_minimum(ok: int, minimum: float,
                                                      passed: bool) -> None:
    summary = {"items": 10, "inconclusive": [],
               "judges": _judges(x=(ok, 10 - ok, 0), y=(10, 0, 0))}
    gate = run_gate(summary, RunPolicy(min_judge_coverage=minimum))
    assert gate.passed is passed and (gate.exit_code == 0) is passed
    if passed:
        assert gate.line.endswith(f"every judge returned a verdict on >= {minimum:.0%} of the "
                                  "items (run.min_judge_coverage)")
