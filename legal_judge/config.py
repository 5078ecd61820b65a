"""Settings read from the environment. API keys are read where they are used and never stored."""

from __future__ import annotations

import os
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

__all__ = ["home", "is_postgres_url", "mask_url", "store_address", "store_path", "store_target"]


def home() -> Path:
    """The data folder: ``$LEGAL_JUDGE_HOME`` or ``./.legal_judge/`` (created on first use)."""
    path = Path(os.environ.get("LEGAL_JUDGE_HOME") or Path.cwd() / ".legal_judge")
    path.mkdir(parents=True, exist_ok=True)
    return path


def store_path() -> Path:
    """The SQLite store inside :func:`home`."""
    return home() / "store.sqlite3"


def is_postgres_url(value: object) -> bool:
    """Whether ``value`` names a PostgreSQL store (``postgresql://`` or ``postgres://``)."""
    return isinstance(value, str) and value.startswith(("postgresql://", "postgres://"))


def store_target() -> Path | str:
    """Where the store is: ``$LEGAL_JUDGE_STORE`` (a PostgreSQL URL or a SQLite file) when set,
    else :func:`store_path`."""
    chosen = os.environ.get("LEGAL_JUDGE_STORE", "").strip()
    if not chosen:
        return store_path()
    return chosen if is_postgres_url(chosen) else Path(chosen)


def mask_url(url: str) -> str:
    """``url`` with any password replaced by ``***`` (credentials are never printed)."""
    parts = urlsplit(url)
    if parts.password is None:
        return url
    port = f":{parts.port}" if parts.port else ""
    netloc = f"{parts.username or ''}:***@{parts.hostname or ''}{port}"
    return urlunsplit((parts.scheme, netloc, parts.path, parts.query, parts.fragment))


def store_address() -> str:
    """The store as printed (``store:`` lines, ``doctor``): a path, or a URL without password."""
    target = store_target()
    return mask_url(target) if isinstance(target, str) else str(target)
