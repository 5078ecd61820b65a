"""Helpers of the audit tests: the CLI runner and the demo audit record."""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from click.testing import CliRunner, Result
from pg_server import load_into_test_store

from legal_judge.cli import cli


@dataclass
class DemoAudit:
    """A finished ``audit run --judge simulated:demo-openai`` in its own LEGAL_JUDGE_HOME."""

    home: Path
    report_path: Path
    report: dict[str, Any]
    result: Result

    def copy_home(self, dest: Path) -> Path:
        """A private copy of the home (for tests that modify the store); on the [postgresql]
        pass, its store's rows are copied into the test's own schema too."""
        shutil.copytree(self.home, dest)
        load_into_test_store(dest / "store.sqlite3")
        return dest


def invoke(home: Path, *args: str, env: dict[str, str] | None = None) -> Result:
    """Run the CLI with LEGAL_JUDGE_HOME=home (and ``env``)."""
    return CliRunner().invoke(cli, list(args), env={"LEGAL_JUDGE_HOME": str(home), **(env or {})},
                              catch_exceptions=False)
