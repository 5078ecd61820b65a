"""A throwaway PostgreSQL cluster for the tests that need a real server (a pytest plugin).

``postgres_url`` (session scope) initialises a cluster in a temporary folder, starts it on a free
local port with durability off (``fsync=off``: the data is thrown away), yields its URL and stops it
at the end of the session. PostgreSQL refuses to run as root, so as root (CI runs as root) the
server runs as the ``postgres`` user, which owns the folder. ``pg_schema_url`` gives each test its
own empty schema of that database (a schema is created in milliseconds, a database is not).

Without a server binary the tests that need one are skipped, saying how to run them; with
``LEGAL_JUDGE_REQUIRE_POSTGRES=1`` (``.ci/run`` sets it) they fail instead, so CI never passes
with them silently skipped.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import socket
import subprocess
import tempfile
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

_BIN_DIRS = ("/usr/lib/postgresql/17/bin", "/usr/lib/postgresql/16/bin",
             "/usr/lib/postgresql/15/bin", "/usr/local/bin", "/usr/bin")
HOW_TO_RUN = ("PostgreSQL tests need a server binary (initdb, pg_ctl): install the distribution's "
              "package (apt-get install postgresql) and run the tests again")


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
