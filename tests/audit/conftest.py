"""Shared fixtures of the audit tests: one demo audit run through the CLI, reused read-only."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator

import pytest
from pg_server import ON_SQLITE

from .helpers import DemoAudit, invoke


@pytest.fixture(scope="module")
def demo_audit(tmp_path_factory: pytest.TempPathFactory) -> DemoAudit:
    base = tmp_path_factory.mktemp("demo-audit")
    home = base / "home"
    out = base / "report.json"
    result = invoke(home, "audit", "run", "--judge", "simulated:demo-openai", "--pairs", "60",
                    "--out", str(out), env=ON_SQLITE)
    assert result.exit_code == 0, result.output
    return DemoAudit(home, out, json.loads(out.read_text(encoding="utf-8")), result)


@pytest.fixture(scope="module")
def constant_endpoint() -> Iterator[str]:
    """The project's OpenAI-compatible stub on 127.0.0.1 answering every request with the same
    schema-valid verdict (every rubric 3, clean, pass): a judge that ignores the answer."""
    proc = subprocess.Popen([sys.executable, "-m", "legal_judge.devtools.openai_stub", "--port", "0",
                             "--latency-ms", "0", "--fixed-score", "3"],
                            stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    port = proc.stdout.readline().split()[1]
    yield f"http://127.0.0.1:{port}/v1"
    proc.terminate()
    proc.wait(10)
