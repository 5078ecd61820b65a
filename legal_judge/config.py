"""Settings read from the environment. API keys are read where they are used and never stored."""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["home", "store_path"]


def home() -> Path:
    """The data folder: ``$LEGAL_JUDGE_HOME`` or ``./.legal_judge/`` (created on first use)."""
    path = Path(os.environ.get("LEGAL_JUDGE_HOME") or Path.cwd() / ".legal_judge")
    path.mkdir(parents=True, exist_ok=True)
    return path


def store_path() -> Path:
    """The SQLite store inside :func:`home`."""
    return home() / "store.sqlite3"
