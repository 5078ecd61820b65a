"""Issue 20 #19: a mode is recommended only when it beats plain significantly (McNemar, Holm across
the modes compared), and ``swap`` (both orders, balanced position calibration) is a real mode that
``debias compare`` measures and an ensemble config accepts.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from legal_judge.benchmark.ensemble_config import bundled_config, load_ensemble_config
from legal_judge.cli import cli
from legal_judge.debias.analysis import NO_SIGNIFICANT_MODE, analyze
from legal_judge.debias.experiment import run_experiment
from legal_judge.debias.pairs import DebiasPair, TrialOutcome
from legal_judge.debias.pairwise import PairwiseJudge, balanced_winner, combine_orders
from legal_judge.errors import ConfigError, InputError
from legal_judge.judge.config import JudgeConfig
from legal_judge.judge.judge import Judge
from legal_judge.judge.mitigation import parse_mode, toml_line
from legal_judge.models import CompletionRequest

from .conftest import CORRECT, RecordingProvider, pair_row, pairwise_json
from .test_debias_pairwise import WRONG, _ov


def _rows(mode: str, correct: list[bool]) -> list[TrialOutcome]:
    return [TrialOutcome(key=f"authority-{i}:wrong-first", pair_id=f"authority-{i}",
                         bias="authority", role="test", wrong_first=True, mode=mode, status="ok",
                         winner="B" if c else "A", correct=c, changed=None, calls=1,
                         input_tokens=100, output_tokens=0, cost_usd=0.0)
            for i, c in enumerate(correct)]


def test_raw_significance_is_not_enough_holm_across_the_modes_decides() -> None:
    # 24 trials, plain right on 11. Paired tables [[both right, lost], [gained, both wrong]]:
    # aware [[10, 1], [8, 5]] (McNemar p 0.0390625), self [[11, 0], [6, 7]] (p 0.03125),
    # aware-generic [[9, 2], [3, 10]] (p 1.0). Holm over the three
    # (statsmodels 0.15.0 multipletests(..., method="holm")): 0.09375, 0.09375, 1.0.
    plain = [True] * 11 + [False] * 13
    rows = _rows("plain", plain)
    rows += _rows("aware", [True] * 10 + [False] + [True] * 8 + [False] * 5)
    rows += _rows("self", [True] * 11 + [True] * 6 + [False] * 7)
    rows += _rows("aware-generic", [True] * 9 + [False] * 2 + [True] * 3 + [False] * 10)
    modes = ["plain", "aware", "self", "aware-generic"]
    report = analyze(rows, modes=modes, requests={"plain": 1, "aware": 1, "self": 2,
                                                  "aware-generic": 1})
    cells = report["biases"]["authority"]["modes"]
    assert cells["aware"]["mcnemar"]["p_value"] == pytest.approx(0.0390625)
    assert cells["self"]["mcnemar"]["p_value"] == pytest.approx(0.03125)
    assert cells["aware"]["p_holm"] == pytest.approx(0.09375)
    assert cells["self"]["p_holm"] == pytest.approx(0.09375)
    assert cells["aware-generic"]["p_holm"] == pytest.approx(1.0)
    assert not any(cells[m]["significant"] for m in modes)
    rec = report["biases"]["authority"]["recommendation"]
    assert (rec["mode"], rec["basis"]) == ("plain", NO_SIGNIFICANT_MODE)
    assert report["recommendations"]["authority"] == "plain"
    assert rec["largest_gain"]["mode"] in ("aware", "self")
    # The same aware cell alone (one mode compared: nothing to adjust) is significant.
    alone = analyze([r for r in rows if r.mode in ("plain", "aware")], modes=["plain", "aware"],
                    requests={"plain": 1, "aware": 1})["biases"]["authority"]
    assert alone["modes"]["aware"]["p_holm"] == pytest.approx(0.0390625)
    assert alone["recommendation"]["mode"] == "aware"


def test_balanced_winner_decides_an_inconsistent_pair_by_the_averaged_scores() -> None:
    # The judge takes the first slot both times, but scores the content under the bonus.
    first_bias = combine_orders(_ov("A", 3.5, 3.0), _ov("A", 4.0, 2.5))
    assert first_bias.winner == "tie" and balanced_winner(first_bias) == "B"
    assert balanced_winner(combine_orders(_ov("A", 4.0, 3.0), _ov("A", 4.0, 3.0))) == "tie"
    assert balanced_winner(combine_orders(_ov("A", 4.0, 2.0), _ov("B", 3.0, 5.0))) == "A"
    assert balanced_winner(combine_orders(_ov("A", 4.0, 3.0), _ov(None))) == "tie"


def _first_slot_judge(request: CompletionRequest, fenced: list[str]) -> str:
    """Always names the first option; its scores carry the content plus a first-slot bonus."""
    quality = [3.0 if f == CORRECT else 2.5 for f in fenced]
    return pairwise_json("A", quality[0] + 1.0, quality[1])


async def test_swap_mode_asks_both_orders_and_removes_a_position_bias() -> None:
    provider = RecordingProvider(_first_slot_judge)
    pj = PairwiseJudge(Judge(JudgeConfig(spec="fake:judge-1", debias={"mode": "swap"}), provider))
    v = await pj.ask("Deadline?", WRONG, CORRECT, item_id="x")
    assert len(provider.requests) == 2 and v.calls == 2
    assert (v.status, v.winner) == ("ok", "B")  # the correct answer, shown second
    assert v.score_a == pytest.approx(3.0) and v.score_b == pytest.approx(3.5)
    assert v.first == {"original": "A", "swapped": "B", "consistent": False}

    pairs = [DebiasPair(**pair_row(i, "position", wrong_first=True)) for i in range(10)]
    report = await run_experiment(JudgeConfig(spec="fake:judge-1"), pairs,
                                  provider=RecordingProvider(_first_slot_judge),
                                  modes=["plain", "swap"], repeats=1)
    pos = report["biases"]["position"]
    assert pos["modes"]["plain"]["accuracy"] == 0.0 and pos["modes"]["swap"]["accuracy"] == 1.0
    swap = pos["modes"]["swap"]
    assert swap["p_holm"] == pytest.approx(2 * 0.5 ** 10) and swap["significant"]
    assert swap["over_correction"]["flagged"] is False  # controls: the same verdict, effect 0
    rec = pos["recommendation"]
    assert (rec["mode"], rec["basis"], rec["agrees_with_paper"]) == ("swap", "significant", True)
    assert report["modes"]["swap"]["requests_per_verdict"] == 2


def test_swap_is_a_pairwise_mode_an_ensemble_config_refuses(tmp_path: Path) -> None:
    assert parse_mode("swap").requests == 2
    with pytest.raises(ConfigError, match="unknown debias mode"):
        parse_mode("swap-generic")
    assert toml_line("swap", "position") == 'debias = { mode = "swap" }'
    assert toml_line("aware", "authority") == 'debias = { mode = "aware", bias = "authority" }'
    assert toml_line("self-all", "verbosity") == 'debias = { mode = "self", bias = "all" }'
    # Issue 29: pasted into a judge's block of an ensemble (pointwise scoring) swap did nothing,
    # silently; it is refused, naming what acts on position in pointwise scoring.
    text = bundled_config("demo").read_text(encoding="utf-8").replace(
        'spec = "simulated:demo-openai"\n',
        f'spec = "simulated:demo-openai"\n{toml_line("swap", "position")}\n', 1)
    path = tmp_path / "mine.toml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(InputError, match="swap changes pairwise judging only; for position bias "
                                         "in pointwise scoring use debias = ") as refused:
        load_ensemble_config(str(path))
    assert refused.value.exit_code == 2
    aware = text.replace(toml_line("swap", "position"), toml_line("aware", "position"))
    path.write_text(aware, encoding="utf-8")
    assert load_ensemble_config(str(path)).judges[0].debias.bias == "position"


def test_cli_says_no_mode_helped_and_prints_the_toml_line(tmp_path: Path,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LEGAL_JUDGE_HOME", str(tmp_path))
    # A fair simulated judge: nothing to remove, so no mode can help significantly.
    fair = CliRunner().invoke(cli, ["debias", "compare", "--judge", "simulated:fair",
                                    "--biases", "sentiment", "--modes", "plain,aware,swap",
                                    "--repeats", "1"])
    assert fair.exit_code == 0, fair.output
    assert "sentiment: keep plain (no mode helped significantly)" in fair.output
    assert "debias = {" not in fair.output
    demo = CliRunner().invoke(cli, ["debias", "compare", "--judge", "demo",
                                    "--biases", "authority,verbosity", "--repeats", "1"])
    assert demo.exit_code == 0, demo.output
    # Each recommendation names the judging form it applies to (issue 29): the lines under
    # "In an ensemble (pointwise)" are pointwise; a pairwise one says "pairwise" (issue 33).
    flat = " ".join(demo.output.split())
    assert ('In an ensemble (pointwise), paste into the judge\'s [[judges]] block: authority: '
            'debias = { mode = "aware", bias = "authority" }') in flat
    assert 'verbosity: debias = { mode = "self", bias = "verbosity" }' in flat
    assert "side effects on other biases: not measured" in flat
    assert "no mode helped significantly" not in demo.output
