"""Writing user files atomically (a reader, CI or a spreadsheet, never sees half a file), and
reading a user's TOML file so that every defect names the file and its line."""

from __future__ import annotations

import os
import re
import tomllib
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from legal_judge.errors import ConfigError, InputError, Problem

__all__ = ["atomic_path", "check_writable", "read_toml", "toml_line"]


@contextmanager
def atomic_path(path: Path) -> Iterator[Path]:
    """Yield a temporary sibling of ``path`` to write; it replaces ``path`` when the block succeeds.

    The temporary file is created by the caller's ``open`` (so it gets the user's umask, unlike
    ``mkstemp``'s 0600) and is removed when the block raises.
    """
    tmp = path.with_name(f".{path.name}.{uuid.uuid4().hex[:8]}.tmp")
    try:
        yield tmp
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def check_writable(path: Path, *, option: str) -> None:
    """Check a file can be written at ``path`` (its folder made if missing), before a command
    pays for anything: a bad path found after a run or an audit left it paid and unreported.

    Args:
        path: The file an option names.
        option: The option, for the message (``--junit``, ``--out``).

    Raises:
        ConfigError: the folder cannot be made or written to (``output-path``).
    """
    import tempfile

    folder = path.parent
    try:
        folder.mkdir(parents=True, exist_ok=True)  # the write would make it anyway
        with tempfile.TemporaryFile(dir=folder):
            pass
    except OSError as exc:
        raise ConfigError(f"{option} {path}: cannot write in {folder}: {exc.strerror or exc}",
                          code="output-path",
                          fix=f"give {option} a path in a folder you can write to (nothing was "
                              "run)") from None


def read_toml(path: Path) -> tuple[dict[str, Any], str, bytes]:
    """A TOML file's table, its text (for :func:`toml_line`) and its bytes (for a digest).

    Raises:
        InputError: the file is unreadable, not UTF-8, or not TOML (naming the file and line).
    """
    try:
        raw = path.read_bytes()
        text = raw.decode("utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        raise InputError([Problem(str(path), None, None, f"cannot read: {reason}")],
                         fix=f"make {path} a readable UTF-8 TOML file") from None
    try:
        return tomllib.loads(text), text, raw
    except tomllib.TOMLDecodeError as exc:
        # tomllib names the line only in its message before Python 3.14.
        found = re.search(r"at line (\d+)", str(exc))
        raise InputError([Problem(str(path), int(found.group(1)) if found else None, None,
                                  f"invalid TOML: {exc}")]) from None


def toml_line(text: str, loc: str | None) -> int | None:
    """The line of ``loc`` in a TOML text, for a message: ``key`` (top level), ``section``,
    ``section.key``, or ``section.N.key`` (the N-th ``[[section]]`` of an array of tables, as
    pydantic names it: an ensemble's ``judges.0.weight``)."""
    if not text or not loc:
        return None
    section, *rest = loc.split(".")
    index = int(rest.pop(0)) if rest and rest[0].isdigit() else None
    key = rest[0] if rest else ""
    current, seen = None, -1
    for n, line in enumerate(text.splitlines(), 1):
        stripped = line.strip()
        name = stripped.split("=")[0].strip()
        if stripped.startswith("["):
            current = stripped.strip("[] ")
            seen += stripped.startswith("[[") and current == section
            if not key and current == section and index in (None, seen):
                return n
        elif current is None and not key and name == section or key and current == section and index in (None, seen) and name == key:
            return n
    return None
