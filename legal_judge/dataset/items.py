"""Benchmark dataset loading: JSONL, CSV and JSON arrays, validated in full before anything runs.

Every defect is reported with file, line and field in one :class:`~legal_judge.errors.InputError`
(exit code 2), so a user fixes a file in one pass instead of one error per run: a line that is
not UTF-8 is one defect among the others (the file is decoded line by line), and an id holding a
control character is refused wherever a dataset or pair file is loaded.

``metadata.expected_pass`` (what a careful lawyer concluded) is a JSON boolean once loaded: the
texts true/false, yes/no, pass/fail (any case), which spreadsheets write, are read as booleans
(``validate`` warns with line and field); any other value is a defect. Every reader of the field
goes through :func:`expected_pass_of`, so ``bool("false")`` can never count as a pass.
"""

from __future__ import annotations

import csv
import io
import json
import unicodedata
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from legal_judge.dataset.lines import decode_line, file_problem, jsonl_row
from legal_judge.errors import InputError, Problem
from legal_judge.models import BenchmarkItem

__all__ = ["ID_FIELDS", "DatasetSummary", "expected_pass_of", "id_problem", "load_dataset",
           "normalise_expected_pass",
           "read_jsonl_models", "sample_dataset_path", "summarize", "validate_row"]

MAX_FIELD_CHARS = 200_000
_LIST_FIELDS = ("expected_signals",)
_OBJECT_FIELDS = ("metadata",)


def sample_dataset_path() -> Path:
    """The bundled sample benchmark (package data)."""
    return Path(__file__).parents[1] / "data" / "sample_bench.jsonl"


@dataclass(frozen=True)
class _Text:
    """A file decoded line by line: a line that is not UTF-8 (or holds a NUL) is reported once,
    kept in place with U+FFFD for its bad bytes, and its rows are skipped, so every other defect
    of the file is still found in the same pass."""

    text: str
    bad_lines: frozenset[int]

    def spans_bad(self, first: int, last: int) -> bool:
        """Whether a row on lines ``first``..``last`` touches a line already reported."""
        return any(first <= n <= last for n in self.bad_lines)


def _decode(path: Path, problems: list[Problem]) -> _Text | None:
    if (problem := file_problem(path)) is not None:
        problems.append(problem)
        return None
    try:
        data = path.read_bytes()
    except OSError as exc:  # a directory, a permission problem
        problems.append(Problem(str(path), None, None, f"cannot read: {exc.strerror}"))
        return None
    data = data.removeprefix(b"\xef\xbb\xbf")  # a BOM is accepted
    decoded = [decode_line(path, n, raw, problems) for n, raw in enumerate(data.split(b"\n"), 1)]
    return _Text("\n".join(line for line, _ in decoded),
                 frozenset(n for n, (_, ok) in enumerate(decoded, 1) if not ok))


#: Fields that hold an id: shown in tables, written to exports and Langfuse, used as keys.
ID_FIELDS = ("id", "item_id", "pair_id")
_ID_CHAR_NAMES = {"\n": "a line break", "\r": "a carriage return", "\t": "a tab"}
# Bidirectional embeddings, overrides and isolates reorder what a table shows.
_BIDI_CONTROLS = frozenset("\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")


def id_problem(value: str) -> str | None:
    """Why ``value`` cannot be an id, or None.

    An id may not hold a control character (a line break, tab, escape, ...), a Unicode line or
    paragraph separator or a bidirectional control: each breaks the tables, CSV/JSONL exports and
    Langfuse views that show the id, or makes two ids look alike.
    """
    for pos, ch in enumerate(value, start=1):
        if unicodedata.category(ch) in ("Cc", "Zl", "Zp") or ch in _BIDI_CONTROLS:
            name = _ID_CHAR_NAMES.get(ch) or unicodedata.name(ch, "a control character").lower()
            return (f"contains U+{ord(ch):04X} ({name}) at character {pos}; ids are shown in "
                    "tables and exports: remove it")
    return None


EXPECTED_PASS = "expected_pass"
_EXPECTED_TEXT = {"true": True, "yes": True, "pass": True, "false": False, "no": False,
                  "fail": False}


def normalise_expected_pass(value: object) -> tuple[bool | None, str | None]:
    """``metadata.expected_pass`` as a boolean, or why it is not one.

    A JSON boolean is itself; the texts true/false, yes/no, pass/fail (any case, spaces around
    ignored) are read as the boolean they say; anything else (``"maybe"``, ``2``, ``null``) is a
    defect.

    Returns:
        ``(boolean, None)`` or ``(None, why)``.
    """
    if isinstance(value, bool):
        return value, None
    if isinstance(value, str) and value.strip().lower() in _EXPECTED_TEXT:
        return _EXPECTED_TEXT[value.strip().lower()], None
    shown = json.dumps(value, ensure_ascii=False)
    return None, (f"{shown} is not a verdict: write true or false (a JSON boolean; the texts "
                  "true/false, yes/no, pass/fail are read too), or leave the field out")


def expected_pass_of(metadata: object) -> bool | None:
    """What a careful lawyer concluded about an item (``metadata.expected_pass``), or None.

    The one reading rule of the field for every reader (run summary, item lists, exports,
    probes): a loaded dataset holds booleans only, and a value stored by an older version is
    read the way loading reads it (an unreadable one counts as absent, never as a pass).
    """
    if not isinstance(metadata, dict) or EXPECTED_PASS not in metadata:
        return None
    return normalise_expected_pass(metadata[EXPECTED_PASS])[0]


def _expected_pass_row(path: Path, lineno: int, row: dict[str, Any], problems: list[Problem],
                       warnings: list[Problem] | None) -> bool:
    """Normalise the row's ``metadata.expected_pass`` in place; False when it is a defect."""
    meta = row.get("metadata")
    if not isinstance(meta, dict) or EXPECTED_PASS not in meta:
        return True
    value = meta[EXPECTED_PASS]
    flag, why = normalise_expected_pass(value)
    field = f"metadata.{EXPECTED_PASS}"
    if flag is None:
        problems.append(Problem(str(path), lineno, field, why or "not a verdict"))
        return False
    if not isinstance(value, bool):
        if warnings is not None:
            warnings.append(Problem(str(path), lineno, field,
                                    f"the text {json.dumps(value, ensure_ascii=False)} is read as "
                                    f"{json.dumps(flag)}; write {json.dumps(flag)} (a JSON "
                                    "boolean, no quotes) to silence this"))
        row["metadata"] = {**meta, EXPECTED_PASS: flag}
    return True


def _id_problems(path: Path, lineno: int, row: dict[str, Any]) -> list[Problem]:
    return [Problem(str(path), lineno, name, why) for name in ID_FIELDS
            if isinstance(row.get(name), str) and (why := id_problem(row[name])) is not None]


def _jsonl_rows(path: Path, text: _Text, problems: list[Problem]) -> Iterator[tuple[int, Any]]:
    # Split on "\n" only: str.splitlines() would also split inside a JSON string holding U+2028,
    # U+0085 or a form feed, which JSON allows unescaped.
    for lineno, line in enumerate(text.text.split("\n"), start=1):
        if lineno not in text.bad_lines and (row := jsonl_row(path, lineno, line, problems)):
            yield lineno, row[0]


def _json_array_rows(path: Path, decoded: _Text,
                     problems: list[Problem]) -> Iterator[tuple[int, Any]]:
    text = decoded.text
    decoder = json.JSONDecoder()
    idx = len(text) - len(text.lstrip())
    if not text.startswith("[", idx):
        problems.append(Problem(str(path), 1, None, "a .json dataset must be a JSON array of objects"))
        return
    idx += 1
    while True:
        while idx < len(text) and text[idx] in " \t\r\n,":
            idx += 1
        if idx >= len(text) or text[idx] == "]":
            return
        lineno = text.count("\n", 0, idx) + 1
        try:
            value, idx = decoder.raw_decode(text, idx)
        except json.JSONDecodeError as exc:
            problems.append(Problem(str(path), exc.lineno, None, f"invalid JSON: {exc.msg}"))
            return
        except RecursionError:
            problems.append(Problem(str(path), lineno, None, "JSON nested too deeply"))
            return
        if not decoded.spans_bad(lineno, text.count("\n", 0, idx) + 1):
            yield lineno, value


def _csv_rows(path: Path, text: _Text, problems: list[Problem]) -> Iterator[tuple[int, Any]]:
    if 1 in text.bad_lines:
        return  # without a readable header no row can be read; line 1 is already reported
    reader = csv.DictReader(io.StringIO(text.text, newline=""))
    if reader.fieldnames is None:
        problems.append(Problem(str(path), 1, None, "CSV has no header row"))
        return
    last = reader.line_num
    for row in reader:
        first, lineno, last = last + 1, reader.line_num, reader.line_num
        if text.spans_bad(first, lineno):
            continue
        if None in row:
            problems.append(Problem(str(path), lineno, None, "more cells than header columns"))
            continue
        out: dict[str, Any] = {k: v for k, v in row.items() if v not in (None, "")}
        out.setdefault("response", row.get("response") or "")
        for name in _LIST_FIELDS + _OBJECT_FIELDS:
            if name in out:
                out[name] = _csv_structured(path, lineno, name, out[name], problems)
        yield lineno, out


def _csv_structured(path: Path, lineno: int, name: str, raw: str, problems: list[Problem]) -> Any:
    if raw.lstrip().startswith(("[", "{")):
        try:
            return json.loads(raw)
        except json.JSONDecodeError as exc:
            problems.append(Problem(str(path), lineno, name, f"invalid JSON in cell: {exc.msg}"))
            return None
    if name in _LIST_FIELDS:
        return [s.strip() for s in raw.split(";") if s.strip()]
    problems.append(Problem(str(path), lineno, name, "expected a JSON object"))
    return None


def _rows(path: Path, text: _Text, problems: list[Problem]) -> Iterator[tuple[int, Any]]:
    suffix = path.suffix.lower()
    if suffix == ".csv":
        return _csv_rows(path, text, problems)
    if suffix == ".json":
        return _json_array_rows(path, text, problems)
    return _jsonl_rows(path, text, problems)


ModelT = TypeVar("ModelT", bound=BaseModel)


def _model_problems(path: Path, lineno: int, exc: ValidationError) -> list[Problem]:
    return [Problem(str(path), lineno, ".".join(str(p) for p in e["loc"]) or None,
                    "unknown field" if e["type"] == "extra_forbidden" else e["msg"])
            for e in exc.errors()]


def read_jsonl_models(path: Path, model: type[ModelT],
                      problems: list[Problem]) -> list[tuple[int, ModelT]]:
    """Validate every line of a JSON Lines file as ``model``.

    Defects (a line that is not UTF-8, bad JSON, nesting, missing or unknown fields, an id
    field holding a control character) are appended to ``problems`` with line and field, so the
    caller can add its own checks and report everything at once.

    Raises:
        InputError: the file cannot be read at all.
    """
    found: list[Problem] = []
    text = _decode(path, found)
    if text is None:
        raise InputError(found, fix="check the file path")
    rows: list[tuple[int, ModelT]] = []
    # Lines that are not UTF-8 are reported with the others, in line order; the rest is read.
    for lineno, obj in _jsonl_rows(path, text, found):
        if isinstance(obj, dict) and (bad_ids := _id_problems(path, lineno, obj)):
            found.extend(bad_ids)
            continue
        try:
            rows.append((lineno, model.model_validate(obj)))
        except ValidationError as exc:
            found.extend(_model_problems(path, lineno, exc))
    problems.extend(sorted(found, key=lambda p: p.line or 0))
    return rows


def _jurisdiction_row(path: Path, lineno: int, row: dict[str, Any], problems: list[Problem],
                      warnings: list[Problem] | None) -> dict[str, Any] | None:
    """The row with a jurisdiction written as a name mapped to its code (said in ``warnings``);
    None, with the problem, when the jurisdiction is neither a known code nor a known name."""
    from legal_judge.checks.jurisdiction import declared_codes, known_codes

    value = row.get("jurisdiction")
    if not isinstance(value, str) or not value.strip():
        return row  # absent, or not text: the model's own check says so
    codes = declared_codes(value)
    if codes is None:
        # "California" was accepted without a word; a name no code stands for is refused.
        problems.append(Problem(str(path), lineno, "jurisdiction",
                                f"unknown jurisdiction '{value}'; write one of the known codes: "
                                f"{known_codes()}"))
        return None
    if codes != value.strip():
        if warnings is not None:
            warnings.append(Problem(str(path), lineno, "jurisdiction",
                                    f"'{value}' read as {codes} (write the code to silence this)"))
        return {**row, "jurisdiction": codes}
    return row


def validate_row(path: Path, lineno: int, row: Any, problems: list[Problem],
                 warnings: list[Problem] | None = None) -> BenchmarkItem | None:
    """One row as a :class:`BenchmarkItem`, or None with its defects in ``problems``."""
    if not isinstance(row, dict):
        problems.append(Problem(str(path), lineno, None, f"expected a JSON object, got {type(row).__name__}"))
        return None
    bad_ids = _id_problems(path, lineno, row)
    if bad_ids:
        problems.extend(bad_ids)
        return None
    for key, value in row.items():
        if isinstance(value, str) and len(value) > MAX_FIELD_CHARS:
            problems.append(Problem(str(path), lineno, key,
                                    f"{len(value):,} characters; the limit is {MAX_FIELD_CHARS:,}"))
            return None
    if not _expected_pass_row(path, lineno, row, problems, warnings):
        return None
    row = _jurisdiction_row(path, lineno, row, problems, warnings)
    if row is None:
        return None
    try:
        return BenchmarkItem.model_validate(row)
    except ValidationError as exc:
        problems.extend(_model_problems(path, lineno, exc))
        return None


def load_dataset(path: str | Path, *, warnings: list[Problem] | None = None) -> list[BenchmarkItem]:
    """Load and validate a benchmark dataset (JSONL, CSV or JSON array).

    Args:
        path: A ``.jsonl``, ``.csv`` or ``.json`` file.
        warnings: When given, receives what was read leniently (an ``expected_pass`` written as
            text), with line and field.

    Returns:
        The items in file order.

    Raises:
        InputError: every problem in the file, each with file, line and field.
    """
    path = Path(path)
    problems: list[Problem] = []
    text = _decode(path, problems)
    if text is None:
        unreadable = not path.is_file()
        raise InputError(problems, fix="check the file path" if unreadable else None)
    if not text.text.strip():
        raise InputError([Problem(str(path), None, None, "the file is empty")],
                         fix="check the file path")
    items: list[tuple[int, BenchmarkItem]] = []
    for lineno, row in _rows(path, text, problems):
        item = validate_row(path, lineno, row, problems, warnings)
        if item is not None:
            items.append((lineno, item))
    first_line: dict[str, int] = {}
    for lineno, item in items:
        if item.id in first_line:
            problems.append(Problem(str(path), lineno, "id",
                                    f"duplicate id '{item.id}' (first on line {first_line[item.id]})"))
        else:
            first_line[item.id] = lineno
    if not items and not problems:
        problems.append(Problem(str(path), None, None, "no rows found"))
    if problems:
        problems.sort(key=lambda p: (p.line or 0))
        raise InputError(problems)
    return [item for _, item in items]


@dataclass(frozen=True)
class DatasetSummary:
    """What ``legal-judge validate`` prints for a valid file."""

    rows: int
    jurisdictions: dict[str, int]
    systems_under_test: dict[str, int]
    datasets: dict[str, int]


def summarize(items: list[BenchmarkItem]) -> DatasetSummary:
    """Counts by jurisdiction, system under test and dataset."""
    return DatasetSummary(
        rows=len(items),
        jurisdictions=dict(Counter(i.jurisdiction or "(none)" for i in items).most_common()),
        systems_under_test=dict(Counter(i.system_under_test or "(none)" for i in items).most_common()),
        datasets=dict(Counter(i.dataset or "(none)" for i in items).most_common()),
    )
