"""`run`, `judge` and `assert_judged` decide an item through one pipeline (issue 29).

Before, `judge` ran no rule checks: us-fed-004 with simulated:demo-openai printed
citation_quality 4.2 / pass in `judge` but 0 / fail in `run`.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from legal_judge.benchmark.ensemble_config import EnsembleConfig, load_ensemble_config
from legal_judge.benchmark.runner import run_benchmark
from legal_judge.benchmark.single import judge_answer
from legal_judge.dataset import load_dataset, sample_dataset_path
from legal_judge.judge.config import JudgeConfig
from legal_judge.store import Store

IDS = ("us-fed-004", "gb-ews-005", "fr-005", "us-fed-001", "us-fed-010")


def _comparable(result: dict[str, Any]) -> dict[str, Any]:
    """A stored decision without the checks' timing (the only field a clock sets)."""
    out = dict(result)
    checks = dict(out.get("checks") or {})
    if "findings" in checks:
        checks["findings"] = {k: v for k, v in checks["findings"].items() if k != "elapsed_ms"}
    out["checks"] = checks
    return out


@pytest.fixture
def run_results(tmp_path: Path) -> tuple[Store, dict[str, Any], Any]:
    store = Store(tmp_path / "store.sqlite3")
    items = [i for i in load_dataset(sample_dataset_path()) if i.id in IDS]
    outcome = asyncio.run(run_benchmark(items, load_ensemble_config("demo"), store=store))
    assert outcome.status == "completed"
    return store, {i.id: i for i in items}, outcome


def test_assert_judged_path_gives_the_runs_decision_field_by_field(run_results: Any) -> None:
    store, items, outcome = run_results
    demo = load_ensemble_config("demo")
    for item_id, item in items.items():
        stored = outcome.results[item_id].model_dump()
        unsaved = judge_answer(item.prompt, item.response, item=item, config=demo, store=store,
                               save=False)
        assert unsaved.run_id is None
        assert _comparable(unsaved.result.model_dump()) == _comparable(stored), item_id
    assert [r["id"] for r in store.list_runs()] == [outcome.run_id]  # nothing stored


def test_judge_with_one_judge_gives_that_judges_run_verdict_and_rule_effects(
        run_results: Any) -> None:
    store, items, outcome = run_results
    stored_verdicts = store.load_verdicts(outcome.run_id)
    for item_id, item in items.items():
        # A judge of another family than the system under test (one same-family judge is
        # refused, in `judge` as in `run`).
        spec, label = (("simulated:demo-mistral", "mistral-large (simulated)")
                       if (item.system_under_test or "").startswith("gpt") else
                       ("simulated:demo-openai", "gpt-4o (simulated)"))
        one = EnsembleConfig(name="judge", judges=[JudgeConfig(spec=spec)], quorum=1)
        judged = judge_answer(item.prompt, item.response, item=item, config=one, store=store,
                              save=False)
        mine = judged.verdicts[0].model_dump()
        theirs = stored_verdicts[(item_id, label)]
        for field in ("judge_id", "status", "scores", "hallucination", "overall",
                      "rule_fail_reasons"):
            assert mine[field] == theirs[field], (item_id, field)
        run_result = outcome.results[item_id]
        # The same findings, so the same rule effects (rule 1 on us-fed-004, rule 4, rule 2).
        assert [o.split(":", 1)[0] for o in judged.result.overrides] == \
            [o.split(":", 1)[0] for o in run_result.overrides], item_id
    one = EnsembleConfig(name="judge", judges=[JudgeConfig(spec="simulated:demo-openai")],
                         quorum=1)
    us_fed_004 = judge_answer("", "", item=items["us-fed-004"], config=one, store=store,
                              save=False).result
    assert us_fed_004.scores["citation_quality"] == 0 and us_fed_004.overall == "fail"
