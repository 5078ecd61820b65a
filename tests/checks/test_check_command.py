"""`legal-judge check`: table or JSON output, exit 1 on forcing statuses."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from legal_judge.checks.courtlistener import TOKEN_ENV
from legal_judge.commands.check import COMMANDS, check

ARGS = ["--today", "2026-11-29"]


def test_command_is_exported() -> None:
    assert [check] == COMMANDS and check.name == "check"


def test_text_valid_exits_0_and_prints_table() -> None:
    result = CliRunner().invoke(
        check, ["--text", "Brown v. Board of Education, 347 U.S. 483 (1954).", *ARGS]
    )
    assert result.exit_code == 0, result.output
    assert "347 U.S. 483" in result.output and "unverifiable" in result.output


def test_file_with_invalid_citation_exits_1(tmp_path: Path) -> None:
    answer = tmp_path / "answer.txt"
    answer.write_text("See 99 U.S.C. § 12.\n", encoding="utf-8")
    result = CliRunner().invoke(check, [str(answer), *ARGS])
    assert result.exit_code == 1
    assert "invalid" in result.output and "title 99" in result.output


def test_json_output(tmp_path: Path) -> None:
    result = CliRunner().invoke(check, ["--text", "[1850] UKSC 1", "--json", *ARGS])
    assert result.exit_code == 1
    payload = json.loads(result.output)
    assert payload["forces_zero"] is True
    assert payload["findings"][0]["status"] == "invalid"
    assert payload["findings"][0]["kind"] == "uk_neutral"


def test_dataset_rows(tmp_path: Path) -> None:
    rows = tmp_path / "rows.jsonl"
    rows.write_text(
        json.dumps({"id": "a", "prompt": "q", "response": "ECLI:EU:C:2014:317"})
        + "\n"
        + json.dumps({"id": "b", "prompt": "q", "response": "Fed. R. Civ. P. 12"})
        + "\n",
        encoding="utf-8",
    )
    result = CliRunner().invoke(check, ["--dataset", str(rows), "--json", *ARGS])
    assert result.exit_code == 0, result.output
    payload = json.loads(result.output)
    assert [p["id"] for p in payload] == ["a", "b"]


def test_needs_exactly_one_input() -> None:
    result = CliRunner().invoke(check, [*ARGS])
    assert result.exit_code != 0
    assert "exactly one of FILE" in str(result.exception)


def test_lookup_without_token_names_the_variable(monkeypatch) -> None:  # noqa: ANN001
    monkeypatch.delenv(TOKEN_ENV, raising=False)
    result = CliRunner().invoke(check, ["--text", "347 U.S. 483", "--lookup", *ARGS])
    assert result.exit_code != 0
    assert TOKEN_ENV in str(result.exception)


def test_bare_rows_without_prompt_are_accepted(tmp_path: Path) -> None:
    rows = tmp_path / "bare.jsonl"
    rows.write_text(
        json.dumps({"id": "a", "response": "See 99 U.S.C. § 12."}) + "\n", encoding="utf-8"
    )
    result = CliRunner().invoke(check, ["--dataset", str(rows), "--json", *ARGS])
    assert result.exit_code == 1
    assert json.loads(result.output)[0]["counts"]["invalid"] == 1


def test_broken_dataset_reports_the_loader_problems(tmp_path: Path) -> None:
    rows = tmp_path / "broken.jsonl"
    rows.write_text('{"id": "a"}\n', encoding="utf-8")
    result = CliRunner().invoke(check, ["--dataset", str(rows), *ARGS])
    assert result.exit_code != 0
    assert "problem" in str(result.exception)
