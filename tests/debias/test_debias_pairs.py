"""The shipped known-answer pair set validates, and the loader reports every defect."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from legal_judge.assets.catalogue import load_assets
from legal_judge.debias.experiment import trials_for
from legal_judge.debias.pairs import bundled_pairs_path, load_pairs
from legal_judge.errors import InputError

from .conftest import pair_row

SEVEN = {"authority", "confidence", "formatting", "position", "verbosity", "bandwagon", "sentiment"}


def test_shipped_pair_set_validates() -> None:
    pairs = load_pairs()  # raises InputError listing every defect
    assert set(load_assets().biases) == SEVEN
    counts = Counter(p.bias for p in pairs)
    assert set(counts) == SEVEN and min(counts.values()) >= 20, counts
    for p in pairs:
        # Both answers, the bias label, the correct side, the reason.
        assert p.correct_answer.strip() and p.wrong_answer.strip(), p.id
        assert p.correct_answer.strip() != p.wrong_answer.strip(), p.id
        assert p.bias in SEVEN and isinstance(p.wrong_first, bool), p.id
        assert len(p.reason.split()) >= 4 and "\n" not in p.reason.strip(), p.id
    assert len({p.jurisdiction for p in pairs}) >= 3
    # Position pairs put the wrong answer first; the others balance the order.
    assert all(p.wrong_first for p in pairs if p.bias == "position")
    for bias in SEVEN - {"position"}:
        firsts = [p.wrong_first for p in pairs if p.bias == bias]
        assert abs(sum(firsts) - len(firsts) / 2) <= 1, bias


def test_trials_treat_swapped_position_pairs_as_controls() -> None:
    pairs = [p for p in load_pairs() if p.bias in ("position", "authority")]
    trials = trials_for(pairs, orders="both")
    roles = Counter((t.pair.bias, t.role) for t in trials)
    # The default set also holds the 8 authority controls ("control": true): control in both orders.
    assert roles == {("position", "test"): 26, ("position", "control"): 26,
                     ("authority", "test"): 52, ("authority", "control"): 16}
    assert len(trials_for(pairs, orders="given")) == 60


def test_loader_reports_every_defect(tmp_path: Path) -> None:
    rows = [pair_row(1, "authority", wrong_first=True),
            {k: v for k, v in pair_row(2, "authority", wrong_first=True).items() if k != "reason"},
            pair_row(3, "astrology", wrong_first=False),
            pair_row(1, "authority", wrong_first=True),
            {**pair_row(4, "verbosity", wrong_first=True), "wrong_answer": pair_row(4, "x",
             wrong_first=True)["correct_answer"]},
            {**pair_row(5, "verbosity", wrong_first=True), "correct_answer": ""}]
    path = tmp_path / "pairs.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n{broken\n", encoding="utf-8")
    with pytest.raises(InputError) as info:
        load_pairs(path)
    found = {(p.line, p.field) for p in info.value.problems}
    assert {(2, "reason"), (3, "bias"), (4, "id"), (5, None), (6, "correct_answer"),
            (7, None)} <= found
    assert "unknown bias 'astrology'" in str(info.value)
    assert "same text" in str(info.value)


def test_bundled_path_is_package_data() -> None:
    assert bundled_pairs_path().parent.name == "data" and bundled_pairs_path().exists()
