"""``runs list``: kind, dataset, ensemble, pass rate and status; samples and assertions hidden."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner, Result

from legal_judge.benchmark.single import judge_answer
from legal_judge.cli import cli
from legal_judge.dataset import load_dataset, sample_dataset_path
from legal_judge.store import Store


def _cli(*args: str) -> Result:
    return CliRunner().invoke(cli, list(args))


def test_samples_and_assertions_have_their_kinds_and_are_hidden_unless_all(
        tmp_path: Path) -> None:
    assert _cli("demo", "--quiet").exit_code == 0
    (run,) = json.loads(_cli("runs", "list", "--json").output)
    assert _cli("calibrate", "sample", run["id"], "--n", "10", "--seed", "1", "--out",
                str(tmp_path / "s.csv")).exit_code == 0
    item = load_dataset(sample_dataset_path())[0]
    judge_answer(item.prompt, item.response, ensemble="demo", jurisdiction=item.jurisdiction,
                 source="pytest", save=True)
    judge_answer(item.prompt, item.response, ensemble="demo", jurisdiction=item.jurisdiction,
                 source="cli", save=True)
    stored = {r["id"]: r for r in Store().list_runs()}
    assert len(stored) == 4

    shown = json.loads(_cli("runs", "list", "--json").output)
    assert [r["kind"] for r in shown] == ["single", "run"]
    demo = shown[-1]
    assert demo["id"] == run["id"] and demo["dataset"] == "sample_bench.jsonl"
    assert demo["ensemble"] == "demo" and demo["pass_rate"] == Store().get_run(
        run["id"])["summary"]["pass_rate"]
    every = json.loads(_cli("runs", "list", "--all", "--json").output)
    assert sorted(r["kind"] for r in every) == ["assertion", "run", "sample", "single"]
    assert {r["id"] for r in every} == set(stored)

    text = _cli("runs", "list").output
    assert f"{demo['pass_rate']:.1%}" in text and demo["id"] in text
    assert " assertion " not in text and " sample " not in text and "--all" in text
    assert " assertion " in _cli("runs", "list", "--all").output
    # --limit counts the runs shown, not the hidden ones in between.
    assert [r["kind"] for r in json.loads(_cli("runs", "list", "--limit", "1",
                                                "--json").output)] == ["single"]


def test_runs_list_and_sync_refuse_a_limit_or_timeout_out_of_range() -> None:
    # Defect: `runs list --limit 0` said "no runs yet: `legal-judge demo` makes one" of a store
    # holding runs, and `sync --timeout 0` blamed Langfuse ("check Langfuse is reachable", exit 3).
    for args in (["runs", "list", "--limit", "0"], ["audit", "list", "--limit", "-1"],
                 ["sync", "--timeout", "0"]):
        res = CliRunner().invoke(cli, args)
        assert res.exit_code == 2 and "Invalid value for" in res.output, (args, res.output)
        assert "no runs yet" not in res.output and "reachable" not in res.output
