"""The shipped controls make over-correction measurable for every stylistic bias.

The default pair set is the pairs plus their reversed-signal controls (the correct answer dressed),
read by one loader for the experiment and the simulated judge. With the demo judge every stylistic
bias gets an over-correction entry; a judge that over-corrects under a mode is flagged.
"""

from __future__ import annotations

import asyncio
import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from scipy.stats import fisher_exact

from legal_judge.cli import cli
from legal_judge.debias.experiment import DEFAULT_MODES, run_experiment
from legal_judge.debias.pairs import (
    bundled_controls_path,
    bundled_pair_files,
    bundled_pairs_path,
    load_pairs,
)
from legal_judge.errors import InputError
from legal_judge.judge.config import JudgeConfig
from legal_judge.models import CompletionRequest
from legal_judge.providers import simulated
from legal_judge.providers.registry import get_provider
from legal_judge.providers.sim_features import bias_signals

from .conftest import RecordingProvider, pair_row, pairwise_json

STYLISTIC = ("authority", "confidence", "formatting", "verbosity", "bandwagon", "sentiment")
DEMO = "simulated:demo-openai"


def test_default_set_is_pairs_plus_controls() -> None:
    assert bundled_pair_files() == (bundled_pairs_path(), bundled_controls_path())
    default = load_pairs()
    controls = [p for p in default if p.control]
    assert len(default) == 182 + len(controls)
    counts = Counter(p.bias for p in controls)
    assert set(counts) == set(STYLISTIC) and min(counts.values()) >= 8, counts
    assert all(p.id == f"control-{p.bias}-{p.id[-3:]}" for p in controls)
    # A file given by the user is read alone, as before: no controls are added to it.
    given = load_pairs(bundled_pairs_path())
    assert len(given) == 182 and not any(p.control for p in given)


def test_duplicate_id_across_default_files_is_reported(tmp_path: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    first, second = tmp_path / "pairs.jsonl", tmp_path / "controls.jsonl"
    first.write_text(json.dumps(pair_row(1, "authority", wrong_first=True)) + "\n",
                     encoding="utf-8")
    second.write_text(json.dumps(pair_row(1, "authority", wrong_first=False, control=True))
                      + "\n", encoding="utf-8")
    monkeypatch.setattr("legal_judge.debias.pairs.bundled_pair_files",
                        lambda: (first, second))
    with pytest.raises(InputError) as info:
        load_pairs()
    assert [(p.file, p.line, p.field) for p in info.value.problems] == [
        (str(second), 1, "id")]


def test_simulator_knows_the_controls_dressing_and_answers() -> None:
    controls = [p for p in load_pairs() if p.control]
    signals, correct = simulated._known_signals(), simulated._known_correct_answers()
    for c in controls:
        assert signals[c.correct_answer.strip()] == c.bias, c.id
        assert c.correct_answer.strip() in correct, c.id
        assert c.wrong_answer.strip() not in signals and c.wrong_answer.strip() not in correct
        # Plain for the simulator's detectors too; the dressing shows no other bias.
        assert not any(bias_signals(c.wrong_answer).values()), c.id
        assert {b for b, on in bias_signals(c.correct_answer).items() if on} <= {c.bias}, c.id


@pytest.fixture(scope="module")
def demo_report() -> dict[str, Any]:
    async def go() -> dict[str, Any]:
        provider = get_provider(DEMO)
        try:
            return await run_experiment(JudgeConfig(spec=DEMO), load_pairs(), provider=provider,
                                        modes=DEFAULT_MODES, repeats=1)
        finally:
            await provider.aclose()

    return asyncio.run(go())


def _plain_effect(report: dict[str, Any], bias: str) -> tuple[float, float]:
    """Plain's bias effect (accuracy on controls - on tests) and its Fisher exact p."""
    rows = [o for o in report["outcomes"] if o["bias"] == bias and o["mode"] == "plain"]
    kc = [o["correct"] for o in rows if o["role"] == "control"]
    kt = [o["correct"] for o in rows if o["role"] == "test"]
    table = [[sum(kc), len(kc) - sum(kc)], [sum(kt), len(kt) - sum(kt)]]
    return sum(kc) / len(kc) - sum(kt) / len(kt), float(fisher_exact(table).pvalue)


def test_demo_every_stylistic_bias_and_mode_has_over_correction(
    demo_report: dict[str, Any],
) -> None:
    for bias in STYLISTIC:
        cells = demo_report["biases"][bias]["modes"]
        assert cells["plain"]["over_correction"] is None  # the baseline itself
        for mode in DEFAULT_MODES[1:]:
            oc = cells[mode]["over_correction"]
            assert oc is not None, (bias, mode)
            assert oc["effect_plain"] == pytest.approx(_plain_effect(demo_report, bias)[0])
            assert oc["control_mcnemar_p"] is not None
        controls = [o for o in demo_report["outcomes"] if o["bias"] == bias
                    and o["role"] == "control" and o["mode"] == "plain"]
        assert len(controls) == 16  # 8 controls in both orders


def test_demo_plain_follows_the_signals_it_is_biased_by(demo_report: dict[str, Any]) -> None:
    # demo-openai weighs verbosity and authority (0.9 d each): the dressed answer wins whichever
    # side it is on, so plain is right on nearly every control and on about half of the tests.
    for bias in ("authority", "verbosity"):
        effect, p = _plain_effect(demo_report, bias)
        assert effect > 0.4 and p < 0.001, (bias, effect, p)
        oc = demo_report["biases"][bias]["modes"]["aware"]["over_correction"]
        assert oc["control_accuracy_plain"] >= 0.9
        assert demo_report["biases"][bias]["modes"]["plain"]["accuracy"] < 0.6
    # It has no weight for the other four: no significant effect either way.
    for bias in ("confidence", "formatting", "bandwagon", "sentiment"):
        effect, p = _plain_effect(demo_report, bias)
        assert abs(effect) < 0.2 and p > 0.05, (bias, effect, p)


def test_demo_no_mode_over_corrects(demo_report: dict[str, Any]) -> None:
    flagged = [(b, m) for b in STYLISTIC for m in DEFAULT_MODES[1:]
               if demo_report["biases"][b]["modes"][m]["over_correction"]["flagged"]]
    assert flagged == []
    assert demo_report["recommendations"]["authority"] == "aware"
    assert demo_report["recommendations"]["verbosity"] == "self"
    # The recommended mode removes the bias: the effect shrinks to one that is not significant
    # (the profile drops the bias under that mode; it never reverses it).
    for bias, mode in (("authority", "aware"), ("verbosity", "self")):
        oc = demo_report["biases"][bias]["modes"][mode]["over_correction"]
        assert oc["effect_mode"] < oc["effect_plain"] - 0.3, (bias, oc)
        assert oc["effect_mode_p"] > 0.05, (bias, oc)


def _over_correcting_judge() -> RecordingProvider:
    """Follows the dressing in plain; warned, it turns against any dressed answer."""
    # Position pairs are left out: their wrong answer is plain (the same text as a control's).
    dressed = {(p.correct_answer if p.control else p.wrong_answer) for p in load_pairs()
               if p.bias != "position"}

    def answer(request: CompletionRequest, fenced: list[str]) -> str:
        warned = any("IMPORTANT: evaluations are prone to" in m.content for m in request.messages)
        a_dressed = fenced[0] in dressed
        return pairwise_json("A" if a_dressed != warned else "B")

    return RecordingProvider(answer)


async def test_over_correcting_judge_is_flagged_on_the_shipped_controls() -> None:
    # The simulator cannot express this (a warning or self pass only removes a bias weight, it
    # never reverses one), so a scripted judge runs over the real authority pairs and controls.
    pairs = [p for p in load_pairs() if p.bias == "authority"]
    report = await run_experiment(JudgeConfig(spec="fake:judge-1"), pairs,
                                  provider=_over_correcting_judge(), modes=["plain", "aware"],
                                  repeats=1)
    cell = report["biases"]["authority"]["modes"]["aware"]
    oc = cell["over_correction"]
    assert oc["effect_plain"] == 1.0 and oc["effect_mode"] == -1.0
    assert oc["sign_flip"] and oc["flagged"] and oc["effect_mode_p"] < 1e-6
    assert oc["control_accuracy_plain"] == 1.0 and oc["control_accuracy"] == 0.0
    assert oc["control_mcnemar_p"] < 0.001
    # The test accuracy rose from 0 to 1, significantly, yet the mode is not recommended.
    assert cell["change"] == 1.0 and cell["significant"]
    assert report["recommendations"]["authority"] == "plain"


async def test_removing_a_bias_lowers_controls_without_being_called_over_correction() -> None:
    # Plain follows the dressing; warned, the judge has no preference left and picks the answer
    # shown first, in both orders. Control accuracy falls from 1.0 to 0.5 (significantly), yet the
    # effect is ~0, not negative: the bias is removed, not reversed.
    dressed = {(p.correct_answer if p.control else p.wrong_answer) for p in load_pairs()
               if p.bias != "position"}

    def answer(request: CompletionRequest, fenced: list[str]) -> str:
        warned = any("IMPORTANT: evaluations are prone to" in m.content for m in request.messages)
        if not warned:
            return pairwise_json("A" if fenced[0] in dressed else "B")
        return pairwise_json("A")  # no preference left: always the first shown (both orders)

    pairs = [p for p in load_pairs() if p.bias == "authority"]
    report = await run_experiment(JudgeConfig(spec="fake:judge-1"), pairs,
                                  provider=RecordingProvider(answer), modes=["plain", "aware"],
                                  repeats=1, orders="both")
    oc = report["biases"]["authority"]["modes"]["aware"]["over_correction"]
    assert oc["control_accuracy_plain"] == 1.0 and oc["control_accuracy"] == 0.5
    assert oc["control_drop_significant"]  # reported...
    assert abs(oc["effect_mode"]) < 0.1 and not oc["flagged"]  # ...but not over-correction


def test_cli_reports_over_correction_for_a_stylistic_bias(home: Path) -> None:
    result = CliRunner().invoke(cli, [
        "debias", "compare", "--judge", DEMO, "--biases", "formatting,sentiment",
        "--modes", "plain,aware", "--repeats", "1", "--json", "-"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.output)
    for bias in ("formatting", "sentiment"):
        oc = report["biases"][bias]["modes"]["aware"]["over_correction"]
        assert oc is not None and oc["flagged"] is False
    assert report["settings"]["pairs"] == 2 * (26 + 8)
