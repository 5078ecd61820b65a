"""`legal-judge compare`: the paired regression gate for a model release."""

from __future__ import annotations

import asyncio
import json

import pytest
from click.testing import CliRunner

from legal_judge.cli import cli
from legal_judge.compare import compare_runs
from legal_judge.dataset import load_dataset, sample_dataset_path
from legal_judge.ensemble_config import load_ensemble_config
from legal_judge.runner import run_benchmark
from legal_judge.stats import mcnemar_from_outcomes, paired_test
from legal_judge.store import Store

HEDGE = "This depends on many factors. You should consult a lawyer in your jurisdiction."


def _runs() -> tuple[Store, str, str]:
    items = [i for i in load_dataset(sample_dataset_path())
             if i.metadata.get("answer_kind") in ("correct", "incomplete")]
    worse = [i.model_copy(update={"response": HEDGE}) for i in items]  # the new model release
    store = Store()
    config = load_ensemble_config("demo").model_copy(update={"run_checks": False})
    a = asyncio.run(run_benchmark(items, config, store=store, run_id="release-1"))
    b = asyncio.run(run_benchmark(worse, config, store=store, run_id="release-2"))
    return store, a.run_id, b.run_id


def test_regression_detected_with_scipy_figures_and_gate_exit_1() -> None:
    store, a, b = _runs()
    report = compare_runs(store, a, b)
    assert report["n_items"] == 24 and report["warnings"] == []
    ls = report["rubrics"]["legal_soundness"]
    res_a, res_b = store.load_results(a), store.load_results(b)
    ids = sorted(res_a)
    ref = paired_test([res_b[i]["scores"]["legal_soundness"] for i in ids],
                      [res_a[i]["scores"]["legal_soundness"] for i in ids])
    assert ls["mean_difference"] == pytest.approx(ref.mean_difference) and ls["mean_difference"] < -1
    assert ls["p_value"] == pytest.approx(ref.p_value) and ls["regressed"]
    mc = mcnemar_from_outcomes([res_a[i]["overall"] == "pass" for i in ids],
                               [res_b[i]["overall"] == "pass" for i in ids])
    assert report["pass_rate"]["p_value"] == pytest.approx(mc.p_value)
    assert set(report["regressed_items"]) == {i for i in ids if res_a[i]["overall"] == "pass"
                                              and res_b[i]["overall"] == "fail"}
    gate = CliRunner().invoke(cli, ["compare", a, b, "--fail-on-regression"])
    assert gate.exit_code == 1 and "regressed" in gate.output
    same = CliRunner().invoke(cli, ["compare", a, a, "--fail-on-regression", "--json"])
    assert same.exit_code == 0 and json.loads(same.output)["regressions"] == []


def test_different_judges_are_warned_about() -> None:
    items = load_dataset(sample_dataset_path())[:8]
    store = Store()
    demo = load_ensemble_config("demo").model_copy(update={"run_checks": False})
    a = asyncio.run(run_benchmark(items, demo, store=store)).run_id
    other = demo.model_copy(update={"judges": [j.model_copy(update={"temperature": 0.1})
                                               for j in demo.judges]})
    b = asyncio.run(run_benchmark(items, other, store=store)).run_id
    assert any("judge_id changed" in w for w in compare_runs(store, a, b)["warnings"])
