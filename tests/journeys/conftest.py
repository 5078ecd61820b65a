"""The journeys tier: the real CLI, chained the way a team's week chains it.

Every step runs ``python -m legal_judge`` in a subprocess, piped (so rich renders for a pipe) at
80 columns, in the journey's own ``LEGAL_JUDGE_HOME``, and asserts the exit code, what was printed
and, where it matters, what was stored. A step that fails prints the command and both streams.
Each fixed defect is a step of a journey; the step's docstring or comment names the defect.
"""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

#: Exit codes of the contract (README, DESIGN): anything else is a defect.
CONTRACT_CODES = frozenset({0, 1, 2, 3, 130})


def interruptible() -> None:
    """In a spawned child, before it runs: SIGINT at its default (Python's KeyboardInterrupt)."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


@dataclass(frozen=True)
class Step:
    """What one CLI command did."""

    args: tuple[str, ...]
    code: int
    out: str
    err: str

    @property
    def text(self) -> str:
        """Standard output and standard error together."""
        return self.out + self.err

    def describe(self) -> str:
        """The command and its streams, for assertion messages."""
        return (f"$ legal-judge {' '.join(self.args)}\nexit {self.code}\n"
                f"--- stdout ---\n{self.out}\n--- stderr ---\n{self.err}")


@dataclass
class Journey:
    """A user's shell: one home, one working directory, the real CLI."""

    home: Path
    cwd: Path
    env: dict[str, str] = field(default_factory=dict)
    history: list[Step] = field(default_factory=list)

    def __call__(self, *args: str, expect: int | Sequence[int] | None = 0,
                 env: dict[str, str] | None = None, input: str | None = None,
                 timeout: float = 300, cwd: Path | None = None) -> Step:
        """Run ``legal-judge ARGS``; assert the exit code when ``expect`` is given."""
        proc = subprocess.run([sys.executable, "-m", "legal_judge", *args], env=self._env(env),
                              cwd=cwd or self.cwd, input=input, capture_output=True, text=True,
                              timeout=timeout)
        step = Step(tuple(args), proc.returncode, proc.stdout, proc.stderr)
        self.history.append(step)
        assert step.code in CONTRACT_CODES, f"exit code outside the contract\n{step.describe()}"
        assert "internal error" not in step.text, step.describe()
        assert "Traceback" not in step.text, step.describe()
        if expect is not None:
            allowed = {expect} if isinstance(expect, int) else set(expect)
            assert step.code in allowed, f"expected exit {sorted(allowed)}\n{step.describe()}"
        return step

    def spawn(self, *args: str) -> subprocess.Popen[str]:
        """Start ``legal-judge ARGS`` in the background (to interrupt or kill it mid-way)."""
        # Ctrl-C as at a terminal: a test run started in the background of a non-interactive
        # shell ignores SIGINT, and a child would inherit that and never be interrupted.
        return subprocess.Popen([sys.executable, "-m", "legal_judge", *args], env=self._env(),
                                cwd=self.cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                text=True, preexec_fn=interruptible)

    def _env(self, extra: dict[str, str] | None = None) -> dict[str, str]:
        env = {**os.environ, "LEGAL_JUDGE_HOME": str(self.home), "COLUMNS": "80",
               "NO_COLOR": "1", **self.env, **(extra or {})}
        env.pop("LEGAL_JUDGE_DEBUG", None)
        return env

    @property
    def store_file(self) -> Path:
        """The journey's SQLite store."""
        return self.home / "store.sqlite3"

    def wait_for_verdicts(self, n: int, proc: subprocess.Popen[str], *,
                          timeout_s: float = 120) -> None:
        """Wait until ``proc`` (a spawned run) has stored ``n`` verdicts, to interrupt it there."""
        deadline = time.time() + timeout_s
        while time.time() < deadline:
            assert proc.poll() is None, "the run ended before it could be interrupted"
            try:
                if self.query("SELECT COUNT(*) FROM verdicts")[0][0] >= n:
                    return
            except sqlite3.Error:
                pass  # the store is being created
            time.sleep(0.05)
        raise AssertionError("the run never started judging")

    def query(self, sql: str, *params: Any) -> list[tuple[Any, ...]]:
        """Read the store as a user's script would (read-only)."""
        db = sqlite3.connect(f"file:{self.store_file}?mode=ro", uri=True, timeout=10)
        try:
            return db.execute(sql, params).fetchall()
        finally:
            db.close()


@pytest.fixture
def journey(tmp_path: Path) -> Iterator[Journey]:
    """A fresh user: empty home, empty working directory, no API keys (the root conftest)."""
    cwd = tmp_path / "work"
    cwd.mkdir()
    yield Journey(home=tmp_path / "home", cwd=cwd)


@contextmanager
def openai_stub(*args: str) -> Iterator[str]:
    """The project's OpenAI-compatible stub on loopback (``legal_judge.devtools.openai_stub``
    with ``args``); yields its ``/v1`` base URL and stops it afterwards."""
    proc = subprocess.Popen([sys.executable, "-m", "legal_judge.devtools.openai_stub", "--port", "0",
                             "--latency-ms", "0", *args], stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        port = proc.stdout.readline().split()[1]
        yield f"http://127.0.0.1:{port}/v1"
    finally:
        proc.terminate()
        proc.wait(10)


# The Langfuse API stand-in of the contract tests (tests/sync is no package: imported by name).
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "sync"))

from standin import PUBLIC_KEY, SECRET_KEY, LangfuseStandin  # noqa: E402


@pytest.fixture
def langfuse(journey: Journey) -> Iterator[LangfuseStandin]:
    """A Langfuse stand-in on 127.0.0.1 that the journey's commands are configured for."""
    server = LangfuseStandin().start()
    journey.env.update({"LANGFUSE_PUBLIC_KEY": PUBLIC_KEY, "LANGFUSE_SECRET_KEY": SECRET_KEY,
                        "LANGFUSE_BASE_URL": server.base_url, "LANGFUSE_TIMEOUT": "5"})
    yield server
    server.stop()
