"""The candidate prompts ``calibrate align`` builds from the lawyers' labels and comments.

- **few-shot**: ``k`` labelled items chosen to cover the judge's errors (its false passes first,
  then its false fails, then its largest rubric errors), rendered with the versioned include
  ``prompts/judge_examples.v1.j2`` and appended to the judge's system template as a new version
  (``judge_system.v<N+1>.j2``) in a folder of its own: the bundled prompts are never edited, and
  the candidate has its own judge_id (the template's sha256 is part of it).
- **rubric clarification**: the lawyers' comments on the judge's errors gathered per rubric into a
  "lawyers' notes" block, written to a file for a person to edit; never applied silently. To tell
  that person whether the draft helps, ``calibrate align`` also cross-validates it as drafted (the
  versioned include ``prompts/judge_notes.v1.j2``, built per fold from the other folds' notes).
"""

from __future__ import annotations

import re
import shutil
from dataclasses import dataclass
from pathlib import Path

from legal_judge.assets.catalogue import Assets, asset_root, load_assets
from legal_judge.calibration.validation_data import JudgeScores, LawyerSet
from legal_judge.sync.prompts import JUDGE_TEMPLATE

__all__ = ["EXAMPLES_TEMPLATE", "NOTES_TEMPLATE", "CandidatePrompt", "LawyerNote",
           "build_candidate", "choose_examples", "gather_notes", "lawyers_notes",
           "render_examples", "render_notes"]

EXAMPLES_TEMPLATE = "judge_examples"
NOTES_TEMPLATE = "judge_notes"
_ERRORS = {"fp": "the judge passed an answer the lawyers failed",
           "ff": "the judge failed an answer the lawyers passed",
           "score": "the judge's scores were far from the lawyers'"}
_ENDRAW = re.compile(r"\{%-?\s*endraw")
_MAX_ANSWER = 2000


@dataclass(frozen=True)
class CandidatePrompt:
    """A candidate's prompt folder, its assets, and the examples it shows."""

    root: Path
    assets: Assets
    template: str
    version: int
    example_keys: tuple[str, ...]
    block: str


def _rubric_error(lawyers: LawyerSet, judge: JudgeScores, key: str) -> float:
    total = 0.0
    for rubric, col in lawyers.humans.items():
        value, human = judge.scores.get(rubric, {}).get(key), col.get(key)
        if isinstance(value, float) and isinstance(human, float):
            total += abs(value - human)
    return total


def _kind(lawyers: LawyerSet, judge: JudgeScores, key: str) -> str:
    said, truth = judge.passed.get(key), lawyers.lawyers_pass.get(key)
    if truth is False and said is not False:
        return "fp"
    if truth is True and said is not True:
        return "ff"
    return "score"


def choose_examples(lawyers: LawyerSet, judge: JudgeScores, keys: list[str], k: int) -> list[str]:
    """``k`` of ``keys`` covering the judge's errors: false passes first, then false fails, then
    the largest rubric errors (ties by key, so a seed-free choice is reproducible)."""
    order = {"fp": 0, "ff": 1, "score": 2}
    ranked = sorted(keys, key=lambda key: (order[_kind(lawyers, judge, key)],
                                           -_rubric_error(lawyers, judge, key), key))
    return ranked[:k]


def render_examples(assets: Assets, lawyers: LawyerSet, judge: JudgeScores,
                    keys: list[str]) -> str:
    """The few-shot block of ``keys`` (the versioned ``judge_examples`` template)."""
    examples = []
    for key in keys:
        item = lawyers.items[key]
        scores = [(r, _show(col[key])) for r, col in sorted(lawyers.humans.items())
                  if key in col and r != "overall"]
        truth = lawyers.lawyers_pass.get(key)
        examples.append({"error": _ERRORS[_kind(lawyers, judge, key)], "question": item.prompt,
                         "answer": item.response.strip()[:_MAX_ANSWER], "scores": scores,
                         "decision": {True: "pass", False: "fail"}.get(truth, "undecided")
                         if truth is not None else "undecided",
                         "comment": lawyers.comments.get(key) or ""})
    return assets.template(EXAMPLES_TEMPLATE).render(examples=examples).strip()


def _show(value: float | str) -> str:
    return value if isinstance(value, str) else f"{value:g}"


def build_candidate(folder: Path, block: str, example_keys: list[str]) -> CandidatePrompt:
    """A prompt folder whose newest ``judge_system`` shows ``block``, and its assets.

    The folder holds a copy of the bundled rubrics and prompts (so it loads on its own) plus
    ``prompts/judge_system.v<N+1>.j2``: the bundled system template with the block appended
    (inside ``{% raw %}``, so an answer's text is never read as a template).
    """
    base = load_assets()
    current = base.template(JUDGE_TEMPLATE)
    version = current.version + 1
    if folder.exists():
        shutil.rmtree(folder)
    for part in ("rubrics", "prompts"):
        shutil.copytree(asset_root() / part, folder / part)
    safe = _ENDRAW.sub("{ % endraw", block)
    source = (current.source.rstrip("\n") + "\n\n{% raw %}" + safe + "{% endraw %}\n")
    path = folder / "prompts" / f"{JUDGE_TEMPLATE}.v{version}.j2"
    path.write_text(source, encoding="utf-8")
    return CandidatePrompt(folder, load_assets(folder), JUDGE_TEMPLATE, version,
                           tuple(example_keys), block)


@dataclass(frozen=True)
class LawyerNote:
    """A lawyer's comment on an item the judge scored wrongly under one rubric."""

    item_id: str
    judge: str
    lawyers: str
    comment: str
    false_pass: bool


def gather_notes(lawyers: LawyerSet, judge: JudgeScores,
                 keys: list[str]) -> dict[str, list[LawyerNote]]:
    """Per rubric, the lawyers' comments on the items of ``keys`` the judge got wrong (a
    categorical score that differs, or a numeric one a point or more away)."""
    out: dict[str, list[LawyerNote]] = {}
    for rubric, col in sorted(lawyers.humans.items()):
        if rubric == "overall":
            continue
        for key in keys:
            value, human = judge.scores.get(rubric, {}).get(key), col.get(key)
            wrong = (value != human if isinstance(human, str) else
                     isinstance(value, float) and isinstance(human, float)
                     and abs(value - human) >= 1)
            if wrong and human is not None and lawyers.comments.get(key):
                out.setdefault(rubric, []).append(LawyerNote(
                    lawyers.items[key].id, "—" if value is None else _show(value),
                    _show(human), lawyers.comments[key], _kind(lawyers, judge, key) == "fp"))
    return out


def lawyers_notes(lawyers: LawyerSet, judge: JudgeScores, keys: list[str]) -> str:
    """The lawyers' comments on the judge's errors, gathered per rubric (Markdown to edit)."""
    lines = ["# Lawyers' notes (draft rubric clarification from calibrate align)", "",
             "Gathered from the lawyers' comments on the items the judge got wrong. Edit before "
             "use: nothing here is applied to a rubric automatically.", ""]
    for rubric, notes in gather_notes(lawyers, judge, keys).items():
        lines += [f"## {rubric}", "",
                  *(f"- {n.item_id} (judge {n.judge}, lawyers {n.lawyers}): {n.comment}"
                    for n in notes), ""]
    if len(lines) == 4:
        lines.append("(no lawyer comment on an item the judge got wrong)")
    return "\n".join(lines) + "\n"


def render_notes(assets: Assets, notes: dict[str, list[LawyerNote]]) -> str:
    """The notes as a prompt block (the versioned ``judge_notes`` template); empty without any."""
    if not notes:
        return ""
    # One line per distinct comment and rubric: lawyers often write one comment for many items,
    # and a prompt that repeats it says nothing more (it would only cost tokens).
    rubrics = []
    for rubric, found in sorted(notes.items()):
        distinct: dict[str, bool] = {}
        for n in found:
            distinct[n.comment] = distinct.get(n.comment, False) or n.false_pass
        rubrics.append((rubric, [{"comment": c, "false_pass": fp} for c, fp in distinct.items()]))
    return assets.template(NOTES_TEMPLATE).render(rubrics=rubrics).strip()
