"""Dataset loading: every defect reported with file, line and field, in one run."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from legal_judge.cli import cli
from legal_judge.dataset import load_dataset
from legal_judge.errors import InputError

GOOD = {"id": "x", "prompt": "p", "response": "r"}


def write_lines(path: Path, lines: list[str]) -> Path:
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_ten_defects_reported_together(tmp_path: Path) -> None:
    lines = [
        json.dumps(GOOD),                                              # 1 ok
        "{not json",                                                   # 2 bad JSON
        json.dumps({"id": "a", "response": "r"}),                      # 3 missing prompt
        json.dumps(GOOD),                                              # 4 duplicate id
        json.dumps({**GOOD, "id": "b", "expected_signals": "x"}),      # 5 wrong type (list)
        json.dumps({**GOOD, "id": "c", "colour": "red"}),              # 6 unknown field
        json.dumps([1, 2]),                                            # 7 not an object
        json.dumps({**GOOD, "id": ""}),                                # 8 empty id
        json.dumps({**GOOD, "id": "d", "metadata": [1]}),              # 9 metadata not an object
        json.dumps({**GOOD, "id": "e", "prompt": 5}),                  # 10 prompt wrong type
        json.dumps({**GOOD, "id": "f", "response": None}),             # 11 response null
    ]
    path = write_lines(tmp_path / "bad.jsonl", lines)
    with pytest.raises(InputError) as exc:
        load_dataset(path)
    got = {(p.line, p.field) for p in exc.value.problems}
    assert got >= {(2, None), (3, "prompt"), (4, "id"), (5, "expected_signals"), (6, "colour"),
                   (7, None), (8, "id"), (9, "metadata"), (10, "prompt"), (11, "response")}
    assert all(p.file == str(path) for p in exc.value.problems)
    result = CliRunner().invoke(cli, ["validate", str(path)])
    assert result.exit_code == 2
    for line in (2, 3, 4, 5, 6, 7, 8, 9, 10, 11):
        assert f"bad.jsonl:{line}" in result.output


def test_empty_file_bad_encoding_nul_and_bom(tmp_path: Path) -> None:
    empty = tmp_path / "empty.jsonl"
    empty.write_text("  \n")
    with pytest.raises(InputError, match="empty"):
        load_dataset(empty)
    latin = tmp_path / "latin.jsonl"
    latin.write_bytes(json.dumps(GOOD).encode() + b"\n" + b'{"id": "caf\xe9"}\n')
    with pytest.raises(InputError) as exc:
        load_dataset(latin)
    assert exc.value.problems[0].line == 2 and "UTF-8" in exc.value.problems[0].message
    nul = tmp_path / "nul.jsonl"
    nul.write_bytes(b'{"id": "a\x00", "prompt": "p", "response": "r"}\n')
    with pytest.raises(InputError, match="NUL"):
        load_dataset(nul)
    bom = tmp_path / "bom.jsonl"
    bom.write_bytes(b"\xef\xbb\xbf" + json.dumps(GOOD).encode() + b"\n")
    assert load_dataset(bom)[0].id == "x"


def test_csv_and_json_array(tmp_path: Path) -> None:
    csv_path = tmp_path / "b.csv"
    csv_path.write_text('id,prompt,response,expected_signals,metadata\n'
                        'a,"Q?","A.","one; two","{""k"": 1}"\n'
                        'b,,"A.",,\n', encoding="utf-8")
    with pytest.raises(InputError) as exc:
        load_dataset(csv_path)
    assert [(p.line, p.field) for p in exc.value.problems] == [(3, "prompt")]
    csv_path.write_text('id,prompt,response,expected_signals,metadata\n'
                        'a,"Q?","A.","one; two","{""k"": 1}"\n', encoding="utf-8")
    item = load_dataset(csv_path)[0]
    assert item.expected_signals == ["one", "two"] and item.metadata == {"k": 1}
    arr = tmp_path / "b.json"
    arr.write_text('[\n  {"id": "a", "prompt": "p", "response": "r"},\n  {"id": "b", "prompt": 3, "response": "r"}\n]')
    with pytest.raises(InputError) as exc2:
        load_dataset(arr)
    assert [(p.line, p.field) for p in exc2.value.problems] == [(3, "prompt")]


def test_huge_field_and_deep_nesting(tmp_path: Path) -> None:
    path = write_lines(tmp_path / "h.jsonl", [
        json.dumps({**GOOD, "response": "x" * 300_000}),
        '{"id": "d", "prompt": "p", "response": "r", "metadata": ' + "[" * 100_000 + "]" * 100_000 + "}",
    ])
    with pytest.raises(InputError) as exc:
        load_dataset(path)
    msgs = {p.line: p.message for p in exc.value.problems}
    assert "limit" in msgs[1] and 2 in msgs


def test_validate_prints_summary_for_the_sample() -> None:
    result = CliRunner().invoke(cli, ["validate", "legal_judge/data/sample_bench.jsonl"])
    assert result.exit_code == 0, result.output
    assert "valid" in result.output and "jurisdictions" in result.output
