"""Fixtures: one Langfuse stand-in per session on 127.0.0.1, reset and wired in per test.

Imported by the conftests of ``tests/sync`` and ``tests/contract`` (one copy for both folders).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from pg_server import open_store
from standin import PUBLIC_KEY, SECRET_KEY, LangfuseStandin

from legal_judge.store import Store


@pytest.fixture(scope="session")
def _standin_server() -> Iterator[LangfuseStandin]:
    server = LangfuseStandin().start()
    yield server
    server.stop()


@pytest.fixture
def standin(_standin_server: LangfuseStandin, monkeypatch: pytest.MonkeyPatch,
            tmp_path: Path) -> Iterator[LangfuseStandin]:
    """The stand-in, empty, with LANGFUSE_* pointing at it and a fresh LEGAL_JUDGE_HOME."""
    server = _standin_server
    if server._server is None:  # a previous test took it down
        server.start()
    server.reset()
    monkeypatch.setenv("LANGFUSE_PUBLIC_KEY", PUBLIC_KEY)
    monkeypatch.setenv("LANGFUSE_SECRET_KEY", SECRET_KEY)
    monkeypatch.setenv("LANGFUSE_BASE_URL", server.base_url)
    monkeypatch.setenv("LANGFUSE_TIMEOUT", "2")
    monkeypatch.setenv("LEGAL_JUDGE_HOME", str(tmp_path))
    monkeypatch.delenv("LEGAL_JUDGE_MASK_FILE", raising=False)
    yield server
    server.delay_s = 0.0


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    """The test's store: ``tmp_path``'s SQLite file, or its server schema on the [postgresql]
    pass (what a command run with ``LEGAL_JUDGE_HOME=tmp_path`` opens)."""
    s = open_store(tmp_path)
    yield s
    s.close()
