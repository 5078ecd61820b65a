"""Read lawyers' label files: every score cell and comment cell, before validation.

Two layouts are accepted, as CSV or JSONL: the long format (one row per item, rubric and annotator:
``item_id, rubric, score, annotator, labeled_at`` plus an optional ``run_id``) and the wide template
written by ``calibrate sample`` (one row per item and annotator, one column per rubric). Structural
defects (bad JSON, unknown columns) are collected with their line; the values are checked by
:mod:`legal_judge.calibration.labels`.
"""

from __future__ import annotations

import csv
import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from legal_judge.calibration.rubrics import PASS_FAIL, PASS_FAIL_ALIASES, RubricSpec, with_pass_fail
from legal_judge.calibration.sample import GUIDE_MARK, TAIL_COLUMNS, TEXT_COLUMNS, VERDICT_COLUMNS
from legal_judge.errors import InputError, Problem

__all__ = ["LabelSheet", "RawComment", "RawLabel", "cell_text", "read_label_file",
           "read_label_sheet"]

_LONG = {"item_id", "rubric", "score"}
_KNOWN_WIDE = {*TEXT_COLUMNS, *TAIL_COLUMNS, *VERDICT_COLUMNS, "notes"}


@dataclass(frozen=True)
class RawLabel:
    """One score cell as read from a file, before validation."""

    line: int
    item_id: str
    run_id: str | None
    rubric: str
    score: object
    annotator: str
    labeled_at: str


@dataclass(frozen=True)
class RawComment:
    """The comment cell of one row as read from a file, before validation (raw text)."""

    line: int
    item_id: str
    run_id: str | None
    annotator: str
    labeled_at: str
    text: object


@dataclass(frozen=True)
class LabelSheet:
    """What a label file holds: its score cells, its comment cells and its structural problems."""

    labels: list[RawLabel]
    comments: list[RawComment]
    problems: list[Problem]


def cell_text(value: object) -> str:
    """A cell as text, with the quote that neutralised a formula on export removed again."""
    text = "" if value is None else str(value).strip()
    if len(text) > 1 and text[0] == "'" and text[1] in "=+-@\t\r":
        return text[1:]
    return text


def _comment_of(line: int, rec: dict[str, Any]) -> RawComment | None:
    """The row's comment cell, or None when it is empty (an empty cell is no comment)."""
    value = rec.get("comment")
    if value is None or (isinstance(value, str) and not value.strip()):
        return None
    return RawComment(line, cell_text(rec.get("item_id")), cell_text(rec.get("run_id")) or None,
                      cell_text(rec.get("annotator")), cell_text(rec.get("labeled_at")), value)


def _from_record(line: int, rec: dict[str, Any], specs: dict[str, RubricSpec],
                 long: bool) -> Iterator[RawLabel]:
    item_id, run_id = cell_text(rec.get("item_id")), cell_text(rec.get("run_id")) or None
    annotator, labeled_at = cell_text(rec.get("annotator")), cell_text(rec.get("labeled_at"))
    if long:
        yield RawLabel(line, item_id, run_id, _rubric_name(cell_text(rec.get("rubric"))),
                       rec.get("score"), annotator, labeled_at)
        return
    for key, value in rec.items():
        name = _rubric_name(key)
        if name in specs and cell_text(value):
            yield RawLabel(line, item_id, run_id, name, value, annotator, labeled_at)


def _rubric_name(column: str) -> str:
    """The sheet's ``pass_fail`` column is the lawyers' ``overall`` verdict."""
    return PASS_FAIL.name if column in PASS_FAIL_ALIASES else column


def _unknown_columns(file: str, columns: list[str], specs: dict[str, RubricSpec],
                     row: int = 1) -> list[Problem]:
    return [Problem(file, row, c, f"unknown column '{c}': not a rubric "
                                  f"({', '.join(s for s in specs if s != PASS_FAIL.name)}) nor a "
                                  "template column") for c in columns
            if _rubric_name(c) not in specs and c not in _KNOWN_WIDE]


def _read_csv(path: Path, specs: dict[str, RubricSpec]) -> LabelSheet:
    """Labels of a CSV, each with its spreadsheet row number.

    Rows are counted as a spreadsheet shows them: an answer cell that spans several lines is
    one row, and the guide rows the template starts with (first cell ``#...``) count too.
    """
    file = str(path)
    out: list[RawLabel] = []
    comments: list[RawComment] = []
    problems: list[Problem] = []
    with path.open(newline="", encoding="utf-8-sig") as fh:
        records = enumerate(csv.reader(fh), start=1)
        header_row, header = 0, []
        for row_no, cells in records:
            if cells and cells[0].lstrip().startswith(GUIDE_MARK):
                continue  # guide rows a lawyer pasted above the header
            header_row, header = row_no, [c.strip() for c in cells]
            break
        long = set(header) >= _LONG
        if not long:
            problems += _unknown_columns(file, header, specs, header_row or 1)
        for row_no, cells in records:
            if not any(c.strip() for c in cells):
                continue
            if len(cells) > len(header):
                problems.append(Problem(file, row_no, None, "more cells than header columns"))
            rec = dict(zip(header, cells, strict=False))
            out += _from_record(row_no, rec, specs, long)
            if (comment := _comment_of(row_no, rec)) is not None:
                comments.append(comment)
    return LabelSheet(out, comments, problems)


def _read_jsonl(path: Path, specs: dict[str, RubricSpec]) -> LabelSheet:
    file = str(path)
    out: list[RawLabel] = []
    comments: list[RawComment] = []
    problems: list[Problem] = []
    for line_no, text in enumerate(path.read_text("utf-8-sig").splitlines(), start=1):
        if not text.strip():
            continue
        try:
            rec = json.loads(text)
        except json.JSONDecodeError as exc:
            problems.append(Problem(file, line_no, None, f"invalid JSON: {exc.msg}"))
            continue
        except RecursionError:
            problems.append(Problem(file, line_no, None, "JSON nested too deeply"))
            continue
        if not isinstance(rec, dict):
            problems.append(Problem(file, line_no, None, "expected a JSON object"))
            continue
        long = "rubric" in rec
        if not long:
            problems += [Problem(file, line_no, p.field, p.message)
                         for p in _unknown_columns(file, list(rec), specs)]
        out += _from_record(line_no, rec, specs, long)
        if (comment := _comment_of(line_no, rec)) is not None:
            comments.append(comment)
    return LabelSheet(out, comments, problems)


def read_label_file(path: Path, specs: dict[str, RubricSpec]) -> tuple[list[RawLabel], list[Problem]]:
    """Read every score cell of a CSV or JSONL label file (long or wide layout).

    Returns:
        The raw labels and the structural problems (bad JSON, unknown columns); the comments
        are left out (:func:`read_label_sheet` has them).

    Raises:
        InputError: the file is missing, not UTF-8 or has an unsupported extension.
    """
    sheet = read_label_sheet(path, specs)
    return sheet.labels, sheet.problems


def read_label_sheet(path: Path, specs: dict[str, RubricSpec]) -> LabelSheet:
    """Read every score cell and every comment cell of a CSV or JSONL label file.

    Returns:
        The raw labels, the raw comments and the structural problems (bad JSON, unknown columns).

    Raises:
        InputError: the file is missing, not UTF-8 or has an unsupported extension.
    """
    if not path.is_file():
        raise InputError([Problem(str(path), None, None, "file not found")])
    specs = with_pass_fail(specs)
    suffix = path.suffix.lower()
    if suffix not in (".csv", ".jsonl"):
        raise InputError([Problem(str(path), None, None, f"unsupported format '{suffix}'")],
                         fix="give the labels as .csv or .jsonl")
    try:
        return _read_csv(path, specs) if suffix == ".csv" else _read_jsonl(path, specs)
    except UnicodeDecodeError as exc:
        raise InputError([Problem(str(path), None, None, f"not UTF-8: {exc}")],
                         fix="save the file as UTF-8 (CSV UTF-8 in spreadsheet programs)") from None
