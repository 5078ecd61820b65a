"""Content checks for the reversed-signal controls shipped as package data.

``debias_controls.jsonl`` mirrors ``debias_pairs.jsonl`` with the signal on the other side: the
CORRECT answer carries the bias dressing and the wrong answer is plain. The checks below are the pair
set's checks (``test_datasets_content.py``, whose signal regexes are reused so both files are held to
one definition of each dressing), reversed.
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from typing import Any, Literal

import pytest
from pydantic import Field
from test_datasets_content import _MARKDOWN, _SIGNALS, DebiasPair, _load_jsonl, _words

STYLISTIC = ("authority", "confidence", "formatting", "verbosity", "bandwagon", "sentiment")
PAIR_FIELDS = {"id", "bias", "question", "criterion", "correct_answer", "wrong_answer",
               "wrong_first", "reason", "jurisdiction"}


class ControlRow(DebiasPair):
    id: str = Field(pattern=r"^control-[a-z]+-\d{3}$")
    control: Literal[True]


@pytest.fixture(scope="module")
def raw() -> list[dict[str, Any]]:
    return _load_jsonl("debias_controls.jsonl")


@pytest.fixture(scope="module")
def controls(raw: list[dict[str, Any]]) -> list[ControlRow]:
    return [ControlRow.model_validate(row) for row in raw]


@pytest.fixture(scope="module")
def pairs() -> list[DebiasPair]:
    return [DebiasPair.model_validate(row) for row in _load_jsonl("debias_pairs.jsonl")]


def _dressed(text: str, bias: str) -> bool:
    if bias == "formatting":
        return "**" in text and bool(re.search(r"^#{2,3}\s", text, re.MULTILINE))
    if bias == "verbosity":
        return False  # a matter of length, checked on its own
    return bool(_SIGNALS[bias].search(text))


def test_controls_have_exact_fields_and_control_flag(raw: list[dict[str, Any]]) -> None:
    assert all(set(row) == PAIR_FIELDS | {"control"} for row in raw)
    assert all(row["control"] is True for row in raw)


def test_controls_count_per_bias_and_ids(controls: list[ControlRow],
                                         pairs: list[DebiasPair]) -> None:
    counts = Counter(c.bias for c in controls)
    assert set(counts) == set(STYLISTIC), counts  # position has its swapped order as control
    assert min(counts.values()) >= 8, counts
    ids = [c.id for c in controls]
    assert len(ids) == len(set(ids))
    assert not set(ids) & {p.id for p in pairs}
    for bias in STYLISTIC:
        numbered = [c.id for c in controls if c.bias == bias]
        assert numbered == [f"control-{bias}-{i:03d}" for i in range(1, len(numbered) + 1)]


def test_controls_wrong_first_alternates_within_each_bias(controls: list[ControlRow]) -> None:
    by_bias: dict[str, list[bool]] = defaultdict(list)
    for c in controls:
        by_bias[c.bias].append(c.wrong_first)
    for bias, flags in by_bias.items():
        assert all(a != b for a, b in zip(flags, flags[1:], strict=False)), bias
        assert abs(flags.count(True) - flags.count(False)) <= 1, bias


def test_controls_reuse_established_questions(controls: list[ControlRow],
                                              pairs: list[DebiasPair]) -> None:
    # Correctness is already established by the pair set: same question, jurisdiction and reason.
    known = {p.question: (p.jurisdiction, p.reason, p.criterion) for p in pairs}
    for c in controls:
        assert known.get(c.question) == (c.jurisdiction, c.reason, c.criterion), c.id
    # One undressed wrong claim per question, whatever the dressing of the correct answer.
    wrong: dict[str, set[str]] = defaultdict(set)
    for c in controls:
        wrong[c.question].add(c.wrong_answer)
    assert all(len(v) == 1 for v in wrong.values())
    # The correct side is dressed, never a copy of a pair's plain correct answer or wrong answer.
    plain = {p.correct_answer for p in pairs} | {p.wrong_answer for p in pairs}
    assert [c.id for c in controls if c.correct_answer in plain] == []


def test_controls_correct_answer_carries_its_signal_wrong_answer_plain(
    controls: list[ControlRow],
) -> None:
    missing = [c.id for c in controls if c.bias != "verbosity" and not _dressed(c.correct_answer,
                                                                                c.bias)]
    assert missing == []
    styled = [c.id for c in controls if _MARKDOWN.search(c.wrong_answer)]
    styled += [f"{c.id}:{b}" for c in controls for b, p in _SIGNALS.items()
               if p.search(c.wrong_answer)]
    assert styled == []


def test_controls_verbosity_ratio_reversed(controls: list[ControlRow]) -> None:
    ratios = [_words(c.correct_answer) / _words(c.wrong_answer) for c in controls
              if c.bias == "verbosity"]
    assert len(ratios) >= 8
    assert min(ratios) >= 3.0 and max(ratios) <= 6.0, ratios


def test_controls_dressed_correct_answer_not_shorter_than_wrong(controls: list[ControlRow]) -> None:
    # The dressing adds words to the correct side, as it adds words to the wrong side of a pair.
    for bias in ("authority", "confidence", "bandwagon", "sentiment"):
        sub = [c for c in controls if c.bias == bias]
        assert all(_words(c.correct_answer) > _words(c.wrong_answer) for c in sub), bias


def test_authority_controls_cite_the_source_named_in_the_reason(
    controls: list[ControlRow],
) -> None:
    # The correct answer's citations are real: at least the statute, article or case of the reason
    # (every number of the reason: section, volume, page, year) appears in the answer.
    for c in (c for c in controls if c.bias == "authority"):
        numbers = re.findall(r"\d[\d,\-]*\d|\d", c.reason)
        assert numbers, c.id
        assert [n for n in numbers if n not in c.correct_answer] == [], c.id
        # The plain wrong answer cites nothing.
        assert not re.search(r"§|U\.S\.|\bv\.? |\bart(icle)?\.? \d", c.wrong_answer, re.I), c.id
