"""The known-answer pair set of the debias experiment: its schema, its loader, its trials and their outcomes.

A pair is a legal question, a plain correct answer and a wrong answer dressed with one bias signal;
the shipped set (``data/debias_pairs.jsonl``) comes with reversed-signal controls
(``data/debias_controls.jsonl``, the correct answer dressed). Read by the experiment
(:mod:`legal_judge.debias.experiment`), ``debias compare`` and the simulated judge, which "knows" the
answers of the default set; this module imports neither the judge nor a provider.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, model_validator

from legal_judge.assets.catalogue import load_assets
from legal_judge.dataset import read_jsonl_models
from legal_judge.errors import InputError, Problem

__all__ = [
    "DebiasPair",
    "Trial",
    "TrialOutcome",
    "bundled_controls_path",
    "bundled_pair_files",
    "bundled_pairs_path",
    "load_pairs",
]


class DebiasPair(BaseModel):
    """One known-answer pair: the wrong answer carries the bias signal (a control: the correct one)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str = Field(min_length=1)
    bias: str = Field(min_length=1)
    question: str = Field(min_length=1)
    criterion: str = Field(min_length=1)
    correct_answer: str = Field(min_length=1)
    wrong_answer: str = Field(min_length=1)
    wrong_first: bool
    reason: str = Field(min_length=1)
    jurisdiction: str | None = None
    control: bool = False

    @model_validator(mode="after")
    def _answers_differ(self) -> DebiasPair:
        if self.correct_answer.strip() == self.wrong_answer.strip():
            raise ValueError("correct_answer and wrong_answer are the same text")
        return self


def bundled_pairs_path() -> Path:
    """The known-answer pair set shipped with the package (the signal on the wrong answer)."""
    return Path(__file__).parent.parent / "data" / "debias_pairs.jsonl"


def bundled_controls_path() -> Path:
    """The shipped reversed-signal controls (``"control": true``: the signal on the correct answer)."""
    return Path(__file__).parent.parent / "data" / "debias_controls.jsonl"


def bundled_pair_files() -> tuple[Path, ...]:
    """The files of the default pair set: the pairs, then their controls.

    Both the experiment (:func:`load_pairs`) and the simulated judge (which "knows" the answers of
    the default set) read this list, so a control is never judged by a simulator that ignores it.
    """
    return bundled_pairs_path(), bundled_controls_path()


def load_pairs(path: Path | str | None = None) -> list[DebiasPair]:
    """Read and validate a pair file (JSON Lines); every defect is reported at once.

    Args:
        path: A pair file; None reads the default set (:func:`bundled_pair_files`: the pairs and
            the reversed-signal controls that make over-correction measurable for every bias).

    Raises:
        InputError: unreadable file, bad JSON, missing or empty fields, an unknown bias label,
            identical answers, duplicate ids (also across the files of the default set).
    """
    paths = [Path(path)] if path is not None else list(bundled_pair_files())
    known = set(load_assets().biases)
    pairs: list[DebiasPair] = []
    problems: list[Problem] = []
    seen: set[str] = set()
    for file in paths:
        for n, pair in read_jsonl_models(file, DebiasPair, problems):
            if pair.bias not in known:
                problems.append(Problem(str(file), n, "bias", f"unknown bias '{pair.bias}' "
                                        f"(one of: {', '.join(sorted(known))})"))
            if pair.id in seen:
                problems.append(Problem(str(file), n, "id", f"duplicate id '{pair.id}'"))
            seen.add(pair.id)
            pairs.append(pair)
    if not pairs and not problems:
        problems.append(Problem(str(paths[0]), None, None, "no pairs"))
    if problems:
        raise InputError(problems, fix="fix the pair file; see legal_judge/data/README.md")
    return pairs


@dataclass(frozen=True)
class Trial:
    """One pair in one order; ``role`` is ``test`` (signal on the wrong answer) or ``control``."""

    pair: DebiasPair
    wrong_first: bool
    role: str

    @property
    def key(self) -> str:
        """Stable id of the trial (pair id and which answer came first)."""
        return f"{self.pair.id}:{'wrong' if self.wrong_first else 'correct'}-first"


@dataclass
class TrialOutcome:
    """What one mode decided on one trial."""

    key: str
    pair_id: str
    bias: str
    role: str
    wrong_first: bool
    mode: str
    status: str
    winner: str | None  # slot: "A" = shown first
    correct: bool
    changed: bool | None
    calls: int
    input_tokens: int | None
    output_tokens: int | None
    cost_usd: float | None
    seed: int | None = None
