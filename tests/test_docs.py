"""The README's "## Command reference": every documented command still prints what is shown.

Each ```console block starts with ``$ legal-judge ...``; the lines after it (except ``...`` and an
``[exit N]`` line, which sets the expected exit code) must appear in the command's output, compared
with runs of whitespace collapsed (the terminal may wrap long lines). ``RUN_ID`` stands for the run
the documented ``demo`` created.
"""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest
from click.testing import CliRunner

README = Path(__file__).resolve().parent.parent / "README.md"


def _blocks() -> list[tuple[str, list[str], int]]:
    text = README.read_text(encoding="utf-8")
    section = text.split("## Command reference", 1)[1].split("\n## ", 1)[0]
    out = []
    for body in re.findall(r"```console\n(.*?)```", section, flags=re.S):
        lines = body.rstrip("\n").split("\n")
        assert lines[0].startswith("$ legal-judge "), lines[0]
        code = 0
        expected = []
        for line in lines[1:]:
            m = re.fullmatch(r"\[exit (\d+)\]", line.strip())
            if m:
                code = int(m.group(1))
            elif line.strip() and line.strip() != "...":
                expected.append(line)
        out.append((lines[0][len("$ legal-judge "):], expected, code))
    return out


def _squash(text: str) -> str:
    return " ".join(text.split())


def test_command_reference_has_the_documented_commands() -> None:
    commands = [c for c, _, _ in _blocks()]
    assert any(c.startswith("report ") for c in commands)
    assert any(c.startswith("doctor") for c in commands)


def test_documented_commands_print_what_the_readme_shows(tmp_path: Path,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    from legal_judge.cli import cli
    from legal_judge.store import Store

    monkeypatch.chdir(tmp_path)
    run_id = ""
    for command, expected, code in _blocks():
        if "RUN_ID" in command:
            assert run_id, "document `legal-judge demo` before a command that uses RUN_ID"
        args = shlex.split(command.replace("RUN_ID", run_id))
        res = CliRunner().invoke(cli, args, catch_exceptions=False)
        assert res.exit_code == code, f"{command}\n{res.output}"
        output = _squash(res.output)
        for line in expected:
            assert _squash(line.replace("RUN_ID", run_id)) in output, \
                f"README line not in the output of `legal-judge {command}`:\n{line}\n---\n{res.output}"
        if args[0] == "demo":
            store = Store()
            run_id = str(store.list_runs()[0]["id"])
            store.close()
