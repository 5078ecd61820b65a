"""Writing user files atomically: a reader (CI, a spreadsheet) never sees half a file."""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from legal_judge.errors import ConfigError

__all__ = ["atomic_path", "check_writable"]


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
