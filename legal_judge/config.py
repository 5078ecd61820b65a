"""Settings read from the environment and the project file. API keys are read where they are used
and never stored.

The project file is ``legal-judge.toml`` in the working directory, the folder ``legal-judge`` runs
from, found by the same rule as ``legal-judge.policy.toml`` and the default data folder
``./.legal_judge/``: the working directory only, no search of the parent folders. A command run
from a subfolder then uses none of the project's files rather than some of them (a store found
upwards beside a policy not found, or the reverse). Today the file holds one setting::

    [store]
    url = "postgresql://judge@db.internal/legal_judge"   # or a SQLite file, relative to this file
                                                         # (its folder is made on first use)

A password never goes in the file (it is committed with the project): ``PGPASSWORD`` or a pgpass
file hold it.
"""

from __future__ import annotations

import contextlib
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit, urlunsplit

from legal_judge.errors import ConfigError, InputError, Problem
from legal_judge.files import read_toml, toml_line

__all__ = ["PROJECT_FILENAME", "StoreSetting", "check_store_address", "home", "is_postgres_url",
           "mask_url", "project_file", "store_address", "store_path", "store_setting",
           "store_target", "store_url_problem"]

#: The project's settings file, in the folder legal-judge runs from.
PROJECT_FILENAME = "legal-judge.toml"
#: Every section and key the project file may hold (anything else is a typo, refused).
_PROJECT_KEYS: dict[str, tuple[str, ...]] = {"store": ("url",)}
_NO_PASSWORD_FIX = ("remove the password from the URL in the file and give it in the environment: "
                    "PGPASSWORD, or a line in ~/.pgpass (PGPASSFILE names another file)")


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


_URL_SCHEME = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]*)://")
_STORE_FORMS = "a postgresql:// URL or a SQLite file path"


def store_url_problem(value: str) -> str | None:
    """Why ``value`` names no store, when it is a URL of another scheme (``mysql://``,
    ``postgresql+psycopg://``, ``sqlite:///...``); None for a PostgreSQL URL or a path.

    Read as a file path, such a URL became a new empty SQLite store in a folder named after its
    scheme (``./mysql:/...``): a typo left a runner on a store of its own, and a password in it
    was printed as part of the path.
    """
    found = _URL_SCHEME.match(value)
    if found is None or is_postgres_url(value):
        return None
    scheme = found.group(1)
    hint = (" (a SQLite store is given by its path alone)" if scheme.lower().startswith("sqlite")
            else " (the PostgreSQL schemes are postgresql:// and postgres://)"
            if scheme.lower().startswith("postgres") else "")
    return (f"{mask_url(value)} is a {scheme}:// URL; a store is {_STORE_FORMS}{hint}")


def check_store_address(value: str, *, named: str) -> Path | str:
    """``value`` as a store's location: the URL of a PostgreSQL store, else a SQLite file.

    Args:
        value: What the user gave.
        named: Where it was given (``LEGAL_JUDGE_STORE``, ``TARGET``), for the message.

    Raises:
        ConfigError: ``store-url-scheme``, a URL of another scheme (:func:`store_url_problem`).
    """
    problem = store_url_problem(value)
    if problem is not None:
        raise ConfigError(f"{named}: {problem}", code="store-url-scheme",
                          fix=f"give {named} as {_STORE_FORMS}, e.g. "
                              "postgresql://judge@db.internal/legal_judge or "
                              ".legal_judge/store.sqlite3")
    return value if is_postgres_url(value) else Path(value)


@dataclass(frozen=True)
class StoreSetting:
    """Where the store is, and which setting said so (printed beside every store address)."""

    target: Path | str
    #: ``LEGAL_JUDGE_STORE``, ``/path/legal-judge.toml [store] url`` or ``default``.
    origin: str

    @property
    def address(self) -> str:
        """The store as printed: a path, or a URL without its password."""
        return mask_url(self.target) if isinstance(self.target, str) else str(self.target)

    def describe(self) -> str:
        """``ADDRESS (from ORIGIN)``, the ``store:`` lines' and ``doctor``'s wording."""
        return f"{self.address} (from {self.origin})"


def project_file(cwd: Path | None = None) -> Path | None:
    """``legal-judge.toml`` in ``cwd`` (default: the working directory), when there is one."""
    found = (cwd or Path.cwd()) / PROJECT_FILENAME
    return found if found.is_file() else None


def store_setting(cwd: Path | None = None) -> StoreSetting:
    """Where the store is: ``$LEGAL_JUDGE_STORE`` (a PostgreSQL URL or a SQLite file) when set,
    else the project file's ``[store] url``, else :func:`store_path`.

    Raises:
        InputError: the project file is not TOML, has an unknown section or key, a ``url`` that
            is not a non-empty string, or a URL with a password (each naming file and line).
    """
    chosen = os.environ.get("LEGAL_JUDGE_STORE", "").strip()
    if chosen:
        return StoreSetting(check_store_address(chosen, named="LEGAL_JUDGE_STORE"),
                            "LEGAL_JUDGE_STORE")
    path = project_file(cwd)
    if path is not None:
        url = _project_store_url(path)
        if url is not None:
            if is_postgres_url(url):
                return StoreSetting(url, f"{path} [store] url")
            sqlite = path.parent / Path(url).expanduser()
            # Made on first use, as the default's folder is; one that cannot be made is
            # reported when the store is opened, naming the file.
            with contextlib.suppress(OSError):
                sqlite.parent.mkdir(parents=True, exist_ok=True)
            return StoreSetting(sqlite, f"{path} [store] url")
    return StoreSetting(store_path(), "default")


def store_target() -> Path | str:
    """The store's location alone (:func:`store_setting`)."""
    return store_setting().target


def _project_store_url(path: Path) -> str | None:
    """The ``[store] url`` of a project file (None when it sets none), checked."""
    data, text, _ = read_toml(path)
    problems = [Problem(str(path), toml_line(text, loc), loc, message)
                for loc, message in _unknown_keys(data)]
    store = data.get("store")
    url = store.get("url") if isinstance(store, dict) else None
    line = toml_line(text, "store.url")
    if url is not None and (not isinstance(url, str) or not url.strip()):
        problems.append(Problem(str(path), line, "[store] url", "must be a non-empty string: a "
                                "postgresql:// URL or a SQLite file"))
    elif isinstance(url, str) and (scheme := store_url_problem(url.strip())) is not None:
        problems.append(Problem(str(path), line, "[store] url", scheme))
    if problems:
        raise InputError(problems, fix=f"{PROJECT_FILENAME} holds only [store] url = "
                                       "\"postgresql://user@host/db\" (or a SQLite file path)")
    if isinstance(url, str) and is_postgres_url(url.strip()) and _has_password(url.strip()):
        raise InputError([Problem(str(path), line, "[store] url",
                                  f"holds a password ({mask_url(url.strip())}); the file is "
                                  "shared with the project, a password is not")],
                         fix=_NO_PASSWORD_FIX)
    return url.strip() if isinstance(url, str) else None


def _unknown_keys(data: dict[str, Any]) -> list[tuple[str, str]]:
    out = []
    for section, values in data.items():
        if section not in _PROJECT_KEYS:
            out.append((section, f"unknown section [{section}] (known: "
                                 f"{', '.join(f'[{s}]' for s in _PROJECT_KEYS)})"))
        elif not isinstance(values, dict):
            out.append((section, f"{section} must be a section: [{section}]"))
        else:
            known = _PROJECT_KEYS[section]
            out += [(f"{section}.{key}", f"unknown key '{key}' in [{section}] (known: "
                                         f"{', '.join(known)})")
                    for key in values if key not in known]
    return out


def _has_password(url: str) -> bool:
    parts = urlsplit(url)
    return parts.password is not None or "password" in parse_qs(parts.query)


def mask_url(url: str) -> str:
    """``url`` with any password replaced by ``***`` (credentials are never printed)."""
    parts = urlsplit(url)
    query = parts.query
    if "password" in parse_qs(query):
        query = "&".join("password=***" if pair.split("=", 1)[0] == "password" else pair
                         for pair in query.split("&"))
    if parts.password is None and query == parts.query:
        return url
    netloc = parts.netloc
    if parts.password is not None:
        port = f":{parts.port}" if parts.port else ""
        netloc = f"{parts.username or ''}:***@{parts.hostname or ''}{port}"
    return urlunsplit((parts.scheme, netloc, parts.path, query, parts.fragment))


def store_address() -> str:
    """The store's address as recorded (``--json``): a path, or a URL without password."""
    return store_setting().address
