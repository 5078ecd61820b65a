"""``legal-judge doctor`` on a good and on a broken setup."""

from __future__ import annotations

import socket
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner


def _doctor(*args: str) -> Any:
    from legal_judge.cli import cli

    return CliRunner().invoke(cli, ["doctor", *args], catch_exceptions=False)


def _closed_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])  # closed again when the block ends: nothing listens


def test_good_setup_exits_0() -> None:
    res = _doctor("--ensemble", "demo")
    assert res.exit_code == 0, res.output
    assert "all checks passed." in res.output
    assert "integrity_check: ok" in res.output and "store schema: version" in res.output
    assert "ensemble demo: 3 judges" in res.output
    assert "[openai]" in res.output and "[google]" in res.output and "[mistral]" in res.output
    assert "key OPENAI_API_KEY: not set (not used by this ensemble)" in res.output
    assert "langfuse: not configured" in res.output


def test_broken_setup_names_each_problem_and_its_fix(tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    bad = tmp_path / "bad.toml"
    bad.write_text('name = "x"\nquorum = 2\n[[judges]]\nspec = "openai:gpt-4o"\nbogus = 1\n',
                   encoding="utf-8")
    monkeypatch.setenv("LANGFUSE_PUBLIC_KEY", "pk-lf-test")
    monkeypatch.setenv("LANGFUSE_SECRET_KEY", "sk-lf-very-secret")
    monkeypatch.setenv("LANGFUSE_BASE_URL", f"http://127.0.0.1:{_closed_port()}")
    res = _doctor("--ensemble", str(bad), "--timeout", "2")
    assert res.exit_code == 2, res.output
    assert "problem  ensemble" in res.output and "field 'judges.0.bogus': unknown key" in res.output
    assert "problem  langfuse" in res.output and "unreachable" in res.output
    assert "fix: check LANGFUSE_BASE_URL" in res.output
    assert "sk-lf-very-secret" not in res.output
    assert "2 problem(s) found." in res.output


def test_missing_key_of_an_ensemble_judge_is_a_problem(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-should-never-be-printed")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-unused")
    res = _doctor("--ensemble", "default")
    assert res.exit_code == 2, res.output
    assert "key OPENAI_API_KEY: set (used by openai:gpt-4o)" in res.output
    assert "problem  key GEMINI_API_KEY: not set; needed by gemini:gemini-2.5-pro" in res.output
    assert "fix: export GEMINI_API_KEY=..." in res.output
    assert "problem  key MISTRAL_API_KEY" in res.output
    assert "key ANTHROPIC_API_KEY: set (not used by this ensemble)" in res.output
    assert "sk-should-never-be-printed" not in res.output and "sk-ant-unused" not in res.output
    assert "2 problem(s) found." in res.output


def test_same_family_only_ensemble_is_refused(tmp_path: Path) -> None:
    cfg = tmp_path / "same.toml"
    cfg.write_text('name = "same"\nquorum = 1\nsystem_under_test = "gpt-4o-mini"\n'
                   '[[judges]]\nspec = "openai:gpt-4o"\n', encoding="utf-8")
    res = _doctor("--ensemble", str(cfg))
    assert res.exit_code == 2
    assert "problem  same-family policy" in res.output
    assert "fix: use a judge from a different provider than the system under test" in res.output


@pytest.mark.parametrize("timeout", ["0", "-1"])
def test_ping_with_no_time_to_answer_is_refused_not_passed(tmp_path: Path, timeout: str) -> None:
    # Defect: `doctor --ping --timeout 0` built no judge (their timeouts became invalid), pinged
    # none, printed no reach line at all and "all checks passed." (exit 0) for a dead endpoint.
    dead = tmp_path / "dead.toml"
    dead.write_text('name = "dead"\nquorum = 1\n[[judges]]\nspec = "openai-compatible:m@'
                    f'http://127.0.0.1:{_closed_port()}/v1"\n', encoding="utf-8")
    res = _doctor("--ping", "--ensemble", str(dead), "--timeout", timeout)
    assert res.exit_code == 2 and "Invalid value for '--timeout'" in res.output, res.output
    assert "all checks passed" not in res.output


def test_ping_names_every_judge_even_one_it_could_not_create(
        monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("OPENAI_API_KEY", "GEMINI_API_KEY", "MISTRAL_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    res = _doctor("--ping", "--ensemble", "default")
    assert res.exit_code == 2
    assert "reach openai:gpt-4o: not pinged: no API key" in res.output

