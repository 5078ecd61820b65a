"""End to end from the CLI: the simulated judge's biases get the right mitigation."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from pg_server import open_store

from legal_judge.cli import cli
from legal_judge.commands.debias import resolve_judge
from legal_judge.debias.analysis import langfuse_scores
from legal_judge.errors import InputError


def test_compare_recommends_the_warning_for_authority_and_self_for_verbosity(home: Path) -> None:
    # demo-openai: authority 0.9 (a warning removes it), verbosity 0.9 (only a self pass does).
    out = home / "report.json"
    result = CliRunner().invoke(cli, [
        "debias", "compare", "--judge", "simulated:demo-openai",
        "--modes", "plain,aware,aware-generic,self,aware+self",
        "--biases", "authority,verbosity", "--json", str(out)])
    assert result.exit_code == 0, result.output
    assert "SIMULATED" in result.output and "authority: use aware (" in result.output
    report = json.loads(out.read_text(encoding="utf-8"))
    auth, verb = report["biases"]["authority"], report["biases"]["verbosity"]
    assert auth["recommendation"]["mode"] == "aware"
    assert auth["recommendation"]["basis"] == "significant"
    assert verb["recommendation"]["mode"] == "self"
    assert verb["recommendation"]["basis"] == "significant"
    # The data behind it: the warning helps authority and not verbosity; the self pass the reverse.
    assert auth["modes"]["aware"]["mcnemar"]["p_value"] < 0.05
    assert not auth["modes"]["self"]["significant"]
    assert not verb["modes"]["aware"]["significant"]
    assert verb["modes"]["self"]["change"] > 0.2
    # Token cost: the self pass is a second request.
    modes = report["modes"]
    assert modes["self"]["calls"] == 2 * modes["plain"]["calls"]
    assert modes["aware"]["input_tokens"] > modes["plain"]["input_tokens"]
    ids = report["judge_ids"]
    assert len({ids[m]["authority"] for m in ids}) == 5
    assert ids["aware"]["authority"] != ids["aware"]["verbosity"]  # the warning names the bias
    assert ids["aware-generic"]["authority"] == ids["aware-generic"]["verbosity"]
    scores = {s["name"]: s["value"] for s in langfuse_scores(report)}
    assert scores["debias.authority.recommendation"] == "aware"
    assert scores["debias.verbosity.self.change"] == verb["modes"]["self"]["change"]
    db = open_store(home).db
    row = db.execute("SELECT judge_id, report_json FROM debias_experiments WHERE id = ?",
                     (report["id"],)).fetchone()
    assert row[0] == report["judge_id"]
    assert json.loads(row[1])["recommendations"] == {"authority": "aware", "verbosity": "self"}
    assert db.execute("SELECT COUNT(*) FROM outbox WHERE entity_kind = 'debias_experiment'"
                      ).fetchone()[0] == 1


def test_prompt_prints_the_filled_templates(home: Path) -> None:
    result = CliRunner().invoke(cli, ["debias", "prompt", "--bias", "authority",
                                      "--criterion", "factual accuracy"])
    assert result.exit_code == 0, result.output
    assert 'IMPORTANT: evaluations are prone to "authority" bias' in result.output
    assert "Judge only factual accuracy." in result.output
    assert "You just delivered this verdict: {model_verdict}." in result.output
    assert "Option A:" in result.output and "{answer_B}" in result.output
    generic = CliRunner().invoke(cli, ["debias", "prompt", "--bias", "generic", "--json"])
    texts = json.loads(generic.output)
    assert 'any systematic bias unrelated to quality on the criterion "factual accuracy"' in \
        texts["bias_warning"]


def test_bad_input_exits_2_and_names_the_fix(home: Path) -> None:
    result = CliRunner().invoke(cli, ["debias", "prompt", "--bias", "astrology"])
    assert result.exit_code == 2 and "use one of: authority" in result.output
    result = CliRunner().invoke(cli, ["debias", "compare", "--judge", "simulated:demo-openai",
                                      "--modes", "plain,paranoid"])
    assert result.exit_code == 2 and "unknown debias mode 'paranoid'" in result.output
    result = CliRunner().invoke(cli, ["debias", "compare", "--judge", "simulated:demo-openai",
                                      "--biases", "astrology"])
    assert result.exit_code == 2 and "no pairs for bias astrology" in result.output


def test_resolve_judge_reads_the_bundled_demo_beside_a_file_named_demo(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # The rule of `run --ensemble`: a bundled name wins over a same-named file in this folder
    # (an empty `demo` there was read as a judge file and refused).
    from legal_judge.benchmark.ensemble_config import load_ensemble_config

    monkeypatch.chdir(tmp_path)
    (tmp_path / "demo").write_text("", encoding="utf-8")
    demo = load_ensemble_config("demo")
    assert resolve_judge("demo") == demo.judges[0]
    assert resolve_judge("demo", name=demo.judges[1].label) == demo.judges[1]
    with pytest.raises(InputError):
        resolve_judge("./demo")  # a path is a path: the local, empty file
    (tmp_path / "demo").write_text('quorum = 1\n[[judges]]\nspec = "simulated:biased"\nname = "mine"\n',
                                   encoding="utf-8")
    assert resolve_judge("./demo").label == "mine"
    assert resolve_judge("demo") == demo.judges[0]


def test_resolve_judge_from_spec_judge_file_and_ensemble(tmp_path: Path) -> None:
    assert resolve_judge("simulated:fair").spec == "simulated:fair"
    judge_file = tmp_path / "judge.toml"
    judge_file.write_text('spec = "simulated:biased"\nname = "b"\n', encoding="utf-8")
    assert resolve_judge(str(judge_file)).label == "b"
    demo = resolve_judge("demo")
    assert demo.spec.startswith("simulated:")


def test_compare_of_four_modes_fits_one_screen_at_80_columns(home: Path) -> None:
    """Issue 33: about 280 lines of ``bias: / mode: / n:`` blocks; now one table per bias."""
    result = CliRunner().invoke(cli, ["debias", "compare", "--judge", "simulated:demo-openai",
                                      "--modes", "plain,aware,self,swap"],
                                env={"COLUMNS": "80"})
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert len(lines) <= 60, result.output
    assert all(len(line) <= 80 for line in lines), result.output
    assert "bias: " not in result.output and "  mode: " not in result.output  # no blocks
    # Every bias gets its own table, its modes as rows, plain first.
    titles = [i for i, line in enumerate(lines) if line.split(":")[0] in (
        "authority", "bandwagon", "confidence", "formatting", "position", "sentiment",
        "verbosity")]
    assert len(titles) == 7
    for i in titles:
        assert lines[i + 1].split()[:2] == ["mode", "n"]
        assert [lines[i + k].split()[0] for k in range(2, 6)] == ["plain", "aware", "self", "swap"]
