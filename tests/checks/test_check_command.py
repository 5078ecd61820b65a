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


# Issue 20 item 13: common mistakes of `check` are user errors (exit 2) with the reason.
def _user_error(result) -> str:  # noqa: ANN001 - click Result
    from legal_judge.errors import ConfigError

    assert isinstance(result.exception, ConfigError), result.output
    assert result.exception.exit_code == 2
    return str(result.exception)


def test_missing_file_is_a_user_error(tmp_path: Path) -> None:
    message = _user_error(CliRunner().invoke(check, [str(tmp_path / "nofile.txt"), *ARGS]))
    assert "nofile.txt: no such file" in message


def test_empty_text_and_empty_file_are_user_errors(tmp_path: Path) -> None:
    assert "--text is empty" in _user_error(CliRunner().invoke(check, ["--text", "", *ARGS]))
    assert "--text is empty" in _user_error(CliRunner().invoke(check, ["--text", "  \n", *ARGS]))
    empty = tmp_path / "answer.txt"
    empty.write_text("\n", encoding="utf-8")
    assert "answer.txt is empty" in _user_error(CliRunner().invoke(check, [str(empty), *ARGS]))


def test_binary_file_is_a_user_error(tmp_path: Path) -> None:
    pdf = tmp_path / "answer.pdf"
    pdf.write_bytes(b"%PDF-1.7\n\xff\xfe\x00binary")
    assert "not UTF-8 text" in _user_error(CliRunner().invoke(check, [str(pdf), *ARGS]))


def test_empty_response_in_a_dataset_is_checked_not_refused(tmp_path: Path) -> None:
    rows = tmp_path / "rows.jsonl"
    rows.write_text(json.dumps({"id": "a", "response": ""}) + "\n", encoding="utf-8")
    result = CliRunner().invoke(check, ["--dataset", str(rows), *ARGS])
    assert result.exit_code == 0, result.output
    assert "no citations found" in result.output


def test_table_shows_case_name_court_year_and_how_to_verify() -> None:
    text = ("Matter of Jones, 150 A.D.3d 1234 (2d Dep't 2017). Brown v. Board of Education, "
            "347 U.S. 483 (1954). 42 U.S.C. § 2000e-2(a)(1).")
    result = CliRunner().invoke(check, ["--text", text, *ARGS], env={"COLUMNS": "120"})
    assert result.exit_code == 0, result.output
    out = " ".join(result.output.split())
    for expected in ("Matter of Jones", "Appellate Division", "2017", "Brown v. Board of Education",
                     "1954", "42 U.S.C. § 2000e-2(a)(1)", "--lookup", "(CourtListener)"):
        assert expected in out, expected
    assert "suspicious" not in out
    payload = json.loads(CliRunner().invoke(check, ["--text", text, "--json", *ARGS]).output)
    assert [f["verify"] for f in payload["findings"]][:2] == [
        "existence not checked offline: run with --lookup (CourtListener)"] * 2
    assert payload["findings"][1]["court_name"] == "Supreme Court of the United States"


def test_dataset_ends_with_a_rollup(tmp_path: Path) -> None:
    rows = tmp_path / "rows.jsonl"
    rows.write_text(
        json.dumps({"id": "good", "response": "Brown v. Board of Education, 347 U.S. 483 (1954)."})
        + "\n" + json.dumps({"id": "bad", "response": "Roe v. Wade, 999 U.S. 1 (2020)."}) + "\n"
        + json.dumps({"id": "odd", "response": "Smith v. Jones, 123 U.S. 99999."}) + "\n",
        encoding="utf-8",
    )
    result = CliRunner().invoke(check, ["--dataset", str(rows), *ARGS])
    assert result.exit_code == 1
    tail = " ".join(result.output.split()).split("3 items, 3 citations")[-1]
    assert "invalid 1" in tail and "suspicious 1" in tail and "unverifiable 1" in tail
    assert "items with an invalid citation: 1 (bad)" in tail
