"""One line of a dataset file at a time: the checks a file and each of its lines pass, shared by
:func:`legal_judge.dataset.load_dataset` (a file read whole) and
:mod:`legal_judge.dataset.stream` (a JSON Lines file read one line at a time)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from legal_judge.errors import Problem

__all__ = ["MAX_FILE_BYTES", "decode_line", "file_problem", "jsonl_row"]

MAX_FILE_BYTES = 512 * 1024 * 1024


def file_problem(path: Path) -> Problem | None:
    """Why a dataset file cannot be read at all (missing, over the size limit), or None."""
    try:
        size = path.stat().st_size
    except OSError as exc:
        return Problem(str(path), None, None, f"cannot read: {exc.strerror}")
    if size > MAX_FILE_BYTES:
        return Problem(str(path), None, None,
                       f"file is {size / 1e6:.0f} MB; the limit is {MAX_FILE_BYTES // 2**20} MiB")
    return None


def decode_line(path: Path, lineno: int, raw: bytes, problems: list[Problem]) -> tuple[str, bool]:
    """One line of a dataset file decoded: ``(text, ok)``; a line that is not UTF-8 or holds a
    NUL is reported (and kept with U+FFFD in place of its bad bytes), ``ok`` False."""
    try:
        line = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        problems.append(Problem(str(path), lineno, None,
                                f"not UTF-8 (byte 0x{raw[exc.start]:02x} at byte {exc.start + 1} "
                                "of the line); save the file as UTF-8"))
        return raw.decode("utf-8", errors="replace").replace("\x00", "\ufffd"), False
    if "\x00" in line:
        problems.append(Problem(str(path), lineno, None,
                                f"contains a NUL byte (character {line.index(chr(0)) + 1})"))
        return line.replace("\x00", "\ufffd"), False
    return line, True


def jsonl_row(path: Path, lineno: int, line: str, problems: list[Problem]) -> tuple[Any] | None:
    """The JSON value of one JSON Lines line as ``(value,)``; None for a blank line or a line
    that is not JSON (reported in ``problems``)."""
    if not line.strip():
        return None
    try:
        return (json.loads(line),)
    except json.JSONDecodeError as exc:
        problems.append(Problem(str(path), lineno, None, f"invalid JSON: {exc.msg} (column {exc.colno})"))
    except RecursionError:
        problems.append(Problem(str(path), lineno, None, "JSON nested too deeply"))
    return None
