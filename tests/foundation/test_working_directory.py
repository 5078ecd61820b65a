"""Every test runs in an empty folder of its own (tests/conftest.py), never in the folder pytest
was launched from: the product reads ``legal-judge.toml`` (where the store is) and
``legal-judge.policy.toml`` from the working directory, so a suite run from a project folder
would otherwise write into that project's store and gate under its policy."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from legal_judge import config
from legal_judge.policy import POLICY_FILENAME

PROBE = Path(__file__).resolve().parent / "cwd_probe.py"


def test_a_test_runs_in_an_empty_folder_of_its_own(tmp_path: Path,
                                                   request: pytest.FixtureRequest) -> None:
    assert Path.cwd().is_relative_to(tmp_path)
    assert Path.cwd() != request.config.invocation_params.dir
    assert not any(Path.cwd().iterdir())


def test_a_project_file_where_pytest_was_launched_is_never_read(tmp_path: Path) -> None:
    launch = tmp_path / "team-project"
    launch.mkdir()
    # A shared store no test may write to, and a policy no test may gate under.
    (launch / config.PROJECT_FILENAME).write_text(
        '[store]\nurl = "postgresql://judge@shared-store.invalid/legal_judge"\n', "utf-8")
    (launch / POLICY_FILENAME).write_text("# the team's policy\n", "utf-8")
    # Without LEGAL_JUDGE_TEST_BACKEND the inner run's store is the default one, which the probe
    # asserts (on PostgreSQL, the conftest would name a server schema instead).
    env = {k: v for k, v in os.environ.items() if k != "LEGAL_JUDGE_TEST_BACKEND"}
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
         "--basetemp", str(tmp_path / "inner"), str(PROBE)],
        cwd=launch, env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "1 passed" in proc.stdout
