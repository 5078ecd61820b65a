"""A throwaway PostgreSQL cluster for the tests that need a real server (a pytest plugin).

``postgres_url`` (session scope) initialises a cluster in a temporary folder, starts it on a free
local port with durability off (``fsync=off``: the data is thrown away), yields its URL and stops it
at the end of the session. PostgreSQL refuses to run as root, so as root (CI runs as root) the
server runs as the ``postgres`` user, which owns the folder. ``pg_schema_url`` gives each test its
own empty schema of that database (a schema is created in milliseconds, a database is not).

The store-heavy folders of :data:`BOTH_BACKENDS` run every test twice, ``[sqlite]`` and
``[postgresql]``: the second's default store (what ``Store()`` and every command open) is an empty
schema of the session's server, so the store's queries, as the product runs them, are tested on
both backends in every run of the suite. A test there that is about SQLite itself (its file, a
``PRAGMA``, a raw ``sqlite3`` edit, a session-scoped store built once) is marked
``sqlite_only``; a test that picks its backends itself (``store_target``, ``pg_schema_url``) is
not doubled. ``LEGAL_JUDGE_TEST_BACKEND=postgresql`` puts every test's default store on the server.

Without a server binary the tests that need one are skipped, saying how to run them; with
``LEGAL_JUDGE_REQUIRE_POSTGRES=1`` (``.ci/run`` sets it) they fail instead, so CI never passes
with them silently skipped.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import socket
import subprocess
import tempfile
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from legal_judge.store import Store

_BIN_DIRS = ("/usr/lib/postgresql/17/bin", "/usr/lib/postgresql/16/bin",
             "/usr/lib/postgresql/15/bin", "/usr/local/bin", "/usr/bin")
HOW_TO_RUN = ("PostgreSQL tests need a server binary (initdb, pg_ctl): install the distribution's "
              "package (apt-get install postgresql) and run the tests again")


#: Folders (node id prefixes) whose tests run on both backends (see the module docstring).
BOTH_BACKENDS = ("tests/store/", "tests/benchmark/", "tests/audit/", "tests/calibration/",
                 "tests/sync/", "tests/debias/", "tests/batch/")

#: Fixtures that choose a test's backends themselves: such a test is not doubled.
_CHOOSES_ITS_BACKEND = ("store_target", "postgres_url")


def pytest_configure(config: pytest.Config) -> None:
    """Register the ``sqlite_only`` mark."""
    config.addinivalue_line("markers", "sqlite_only(reason): a test of SQLite itself, run in "
                            "the [sqlite] pass only (tests/pg_server.py BOTH_BACKENDS)")


def _runs_on_both(metafunc: pytest.Metafunc) -> bool:
    nodeid = metafunc.definition.nodeid
    return (nodeid.startswith(BOTH_BACKENDS)
            and metafunc.definition.get_closest_marker("sqlite_only") is None
            and not any(name in metafunc.fixturenames for name in _CHOOSES_ITS_BACKEND)
            and os.environ.get("LEGAL_JUDGE_TEST_BACKEND") != "postgresql")


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """A test of :data:`BOTH_BACKENDS` runs once per backend (``store_backend``)."""
    if "store_backend" in metafunc.fixturenames and _runs_on_both(metafunc):
        metafunc.parametrize("store_backend", ["sqlite", "postgresql"])


def server_store_url() -> str | None:
    """The test's PostgreSQL store (``LEGAL_JUDGE_STORE``) on the ``[postgresql]`` pass, else None."""
    from legal_judge.config import is_postgres_url

    url = os.environ.get("LEGAL_JUDGE_STORE", "").strip()
    return url if is_postgres_url(url) else None


def open_store(home: Path) -> Store:
    """The store a command run with ``LEGAL_JUDGE_HOME=home`` wrote: the test's server schema on
    the ``[postgresql]`` pass, else ``home``'s SQLite file."""
    from legal_judge.store import Store

    return Store(server_store_url() or home / "store.sqlite3")


def load_into_test_store(sqlite_file: Path) -> None:
    """On the ``[postgresql]`` pass, copy a SQLite store built once for several tests (a module's
    or the session's fixture) into the test's own schema (``legal-judge store copy``'s function),
    so the test reads the same rows from the server; on SQLite, nothing."""
    url = server_store_url()
    if url is None:
        return
    from legal_judge.store import Store
    from legal_judge.store.transfer import copy_store

    source, target = Store(sqlite_file), Store(url)
    try:
        copy_store(source, target)
    finally:
        source.close()
        target.close()


def query_store(home: Path, sql: str) -> list[tuple[Any, ...]]:
    """The rows of a read-only query on the store a command with ``LEGAL_JUDGE_HOME=home`` is
    writing (the test's schema on the ``[postgresql]`` pass), without opening a ``Store`` (no
    migration, no lock); ``[]`` while the store does not exist yet."""
    import sqlite3

    import psycopg

    url = server_store_url()
    try:
        if url is not None:
            with psycopg.connect(url) as server:
                return list(server.execute(sql).fetchall())  # type: ignore[arg-type]
        db = sqlite3.connect(home / "store.sqlite3", timeout=5)
        try:
            return list(db.execute(sql).fetchall())
        finally:
            db.close()
    except (sqlite3.Error, psycopg.Error):
        return []


def set_json_field(store: Store, table: str, column: str, row_id: str, key: str, value: Any) -> None:
    """Set ``key`` of the JSON document in ``table.column`` of row ``row_id``, on either backend
    (SQLite's ``json_set`` has no PostgreSQL twin the store translates): a test's edit of a
    stored document, as an older version or another tool might have left it."""
    with store.transaction() as db:
        text = db.execute(f"SELECT {column} FROM {table} WHERE id = ?", (row_id,)).fetchone()[0]
        db.execute(f"UPDATE {table} SET {column} = ? WHERE id = ?",
                   (json.dumps(json.loads(text) | {key: value}), row_id))


#: The environment entry that keeps a command on the SQLite store of its LEGAL_JUDGE_HOME (a
#: fixture built once for several tests, whatever backend the first of them is on).
ON_SQLITE = {"LEGAL_JUDGE_STORE": ""}


@pytest.fixture
def store_backend() -> str:
    """The backend of the test's default store: ``sqlite``, or the parameter of a test that runs
    on both (:func:`pytest_generate_tests`)."""
    return os.environ.get("LEGAL_JUDGE_TEST_BACKEND") or "sqlite"


def _bin_dir() -> Path | None:
    for folder in (os.environ.get("LEGAL_JUDGE_PG_BIN"), *_BIN_DIRS):
        if folder and (Path(folder) / "initdb").exists() and (Path(folder) / "pg_ctl").exists():
            return Path(folder)
    found = shutil.which("initdb")
    return Path(found).parent if found and shutil.which("pg_ctl") else None


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _as_server_user(argv: list[str]) -> list[str]:
    # The server will not start as root: run it as the distribution's postgres user.
    return ["runuser", "-u", "postgres", "--", *argv] if os.geteuid() == 0 else argv


def _unavailable(reason: str) -> None:
    if os.environ.get("LEGAL_JUDGE_REQUIRE_POSTGRES"):
        pytest.fail(f"LEGAL_JUDGE_REQUIRE_POSTGRES is set but {reason}", pytrace=False)
    pytest.skip(f"{reason}; {HOW_TO_RUN}")


class PgServer:
    """A running throwaway cluster: its URL, and a restart for the reliability tests."""

    def __init__(self, bin_dir: Path, data: Path, port: int, log: Path) -> None:
        self.bin_dir, self.data, self.port, self.log = bin_dir, data, port, log
        self.url = f"postgresql://postgres@127.0.0.1:{port}/postgres"

    def _ctl(self, *args: str) -> None:
        subprocess.run(_as_server_user([str(self.bin_dir / "pg_ctl"), "-D", str(self.data),
                                        "-l", str(self.log), *args]),
                       check=True, capture_output=True, timeout=60)

    def start(self) -> None:
        """Start the server and wait until it accepts connections."""
        self._ctl("-w", "-o", f"-p {self.port} -c listen_addresses=127.0.0.1 "
                  f"-k {self.data} -c fsync=off -c synchronous_commit=off "
                  "-c full_page_writes=off -c max_connections=200", "start")

    def stop(self, mode: str = "fast") -> None:
        """Stop the server (``immediate`` is a crash as far as clients can tell)."""
        self._ctl("-w", "-m", mode, "stop")


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[PgServer]:
    """The session's PostgreSQL server (skipped, or failed in CI, without a server binary)."""
    bin_dir = _bin_dir()
    if bin_dir is None:
        _unavailable("no PostgreSQL server binary (initdb) was found")
        raise AssertionError  # unreachable: skip/fail raise
    root = Path(tempfile.mkdtemp(prefix="lj-pg-"))
    data, log = root / "data", root / "server.log"
    if os.geteuid() == 0:
        shutil.chown(root, "postgres", "postgres")
    try:
        subprocess.run(_as_server_user([str(bin_dir / "initdb"), "-D", str(data), "-U", "postgres",
                                        "-A", "trust", "--no-sync", "-E", "UTF8"]),
                       check=True, capture_output=True, timeout=120)
        server = PgServer(bin_dir, data, _free_port(), log)
        server.start()
    except (subprocess.CalledProcessError, subprocess.TimeoutExpired, OSError) as exc:
        detail = log.read_text(errors="replace")[-800:] if log.exists() else ""
        shutil.rmtree(root, ignore_errors=True)
        _unavailable(f"the throwaway PostgreSQL cluster did not start ({exc}) {detail}")
        raise AssertionError from exc  # unreachable
    try:
        yield server
    finally:
        with contextlib.suppress(subprocess.CalledProcessError, subprocess.TimeoutExpired, OSError):
            server.stop("immediate")
        shutil.rmtree(root, ignore_errors=True)


@pytest.fixture(scope="session")
def postgres_url(postgres_server: PgServer) -> str:
    """The URL of the session's server (database ``postgres``, trust authentication)."""
    return postgres_server.url


def new_schema_url(base_url: str) -> str:
    """A URL on ``base_url``'s database whose search path is a new, empty schema."""
    import psycopg

    schema = f"t_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(base_url, autocommit=True) as db:
        db.execute(f"CREATE SCHEMA {schema}")
    return f"{base_url}?options=-csearch_path%3D{schema}"


@pytest.fixture
def pg_schema_url(postgres_url: str) -> str:
    """A URL whose tables live in a schema of this test's own (empty at the start)."""
    return new_schema_url(postgres_url)


@pytest.fixture(params=["sqlite", "postgresql"])
def store_target(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """Where a test's store is, once per backend: a SQLite file, then a PostgreSQL schema."""
    if request.param == "sqlite":
        return str(tmp_path / "s.sqlite3")
    return str(request.getfixturevalue("pg_schema_url"))
