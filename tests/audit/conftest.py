"""Shared fixtures of the audit tests: one demo audit run through the CLI, reused read-only."""

from __future__ import annotations

import json

import pytest

from .helpers import DemoAudit, invoke


@pytest.fixture(scope="module")
def demo_audit(tmp_path_factory: pytest.TempPathFactory) -> DemoAudit:
    base = tmp_path_factory.mktemp("demo-audit")
    home = base / "home"
    out = base / "report.json"
    result = invoke(home, "audit", "run", "--judge", "simulated:demo-openai", "--pairs", "60",
                    "--out", str(out))
    assert result.exit_code == 0, result.output
    return DemoAudit(home, out, json.loads(out.read_text(encoding="utf-8")), result)
