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
SAMPLE = Path(__file__).resolve().parents[2] / "legal_judge" / "data" / "sample_bench.jsonl"


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
    result = CliRunner().invoke(cli, ["validate", str(SAMPLE)])
    assert result.exit_code == 0, result.output
    assert "valid" in result.output and "jurisdictions" in result.output


def test_every_defect_in_one_pass_despite_bad_bytes(tmp_path: Path) -> None:
    # Issue 20, item 14: line 9 not UTF-8 used to hide every other defect until it was fixed.
    rows = [json.dumps({**GOOD, "id": f"r{i}"}).encode() for i in range(1, 13)]
    rows[2] = b"{not json"                                                   # line 3
    rows[4] = json.dumps({"id": "r5", "response": "r"}).encode()             # line 5
    rows[8] = b'{"id": "r9", "prompt": "caf\xe9", "response": "r"}'          # line 9 latin-1
    rows[10] = b'{"id": "r11", "prompt": "p\x00", "response": "r"}'          # line 11 NUL
    rows[11] = json.dumps({**GOOD, "id": "r1"}).encode()                     # line 12 duplicate
    path = tmp_path / "bench.jsonl"
    path.write_bytes(b"\n".join(rows) + b"\n")
    with pytest.raises(InputError) as exc:
        load_dataset(path)
    got = [(p.line, p.field) for p in exc.value.problems]
    assert got == [(3, None), (5, "prompt"), (9, None), (11, None), (12, "id")]
    msgs = {p.line: p.message for p in exc.value.problems}
    assert "not UTF-8" in msgs[9] and "0xe9" in msgs[9] and "NUL" in msgs[11]


def test_bad_bytes_in_csv_and_json_array_rows(tmp_path: Path) -> None:
    csv_path = tmp_path / "b.csv"
    csv_path.write_bytes(b'id,prompt,response\na,"Q?","A."\nb,"caf\xe9","A."\nc,,"A."\n')
    with pytest.raises(InputError) as exc:
        load_dataset(csv_path)
    assert [(p.line, p.field) for p in exc.value.problems] == [(3, None), (4, "prompt")]
    arr = tmp_path / "b.json"
    arr.write_bytes(b'[\n {"id": "a", "prompt": "caf\xe9", "response": "r"},\n'
                    b' {"id": "b", "prompt": 3, "response": "r"}\n]')
    with pytest.raises(InputError) as exc2:
        load_dataset(arr)
    assert [(p.line, p.field) for p in exc2.value.problems] == [(2, None), (3, "prompt")]


def test_unicode_line_separators_inside_a_json_string_are_not_line_breaks(tmp_path: Path) -> None:
    # JSON allows U+2028, U+0085 and form feeds unescaped (JavaScript writers emit them).
    row = {**GOOD, "response": "Art. 1103\u2028Code civil\x85\x0cfin"}
    path = tmp_path / "b.jsonl"
    path.write_bytes(json.dumps(row, ensure_ascii=False).encode() + b"\n")
    assert load_dataset(path)[0].response == row["response"]


@pytest.mark.parametrize(("bad_id", "what"), [
    ("fr-\n001", "U+000A (a line break)"), ("fr-001\r", "U+000D (a carriage return)"),
    ("a\tb", "U+0009 (a tab)"), ("\x1b[31mred", "U+001B"), ("a\u2028b", "U+2028"),
    ("abc\u202e", "U+202E"),
], ids=["newline", "cr", "tab", "escape", "line-separator", "bidi-override"])
def test_ids_with_control_characters_are_refused(tmp_path: Path, bad_id: str, what: str) -> None:
    # Issue 20, item 16: accepted before, then broke tables and exports.
    path = write_lines(tmp_path / "b.jsonl", [json.dumps(GOOD), json.dumps({**GOOD, "id": bad_id})])
    with pytest.raises(InputError) as exc:
        load_dataset(path)
    (problem,) = exc.value.problems
    assert (problem.line, problem.field) == (2, "id") and what in problem.message
    csv_path = tmp_path / "b.csv"
    with csv_path.open("w", encoding="utf-8", newline="") as fh:
        import csv
        csv.writer(fh).writerows([["id", "prompt", "response"], ["ok", "p", "r"], [bad_id, "p", "r"]])
    with pytest.raises(InputError) as exc_csv:
        load_dataset(csv_path)
    assert [p.field for p in exc_csv.value.problems] == ["id"]


def test_pair_files_refuse_control_characters_in_ids(tmp_path: Path) -> None:
    from legal_judge.audit.pairs_io import read_pairs

    row = {"dimension": "authority", "pair_id": "p\n1", "variant_a_input": "a",
           "variant_a_score": 3, "variant_b_input": "b", "variant_b_score": 2}
    latin = b'{"dimension": "authority", "pair_id": "p2", "variant_a_input": "caf\xe9"}'
    path = tmp_path / "pairs.jsonl"
    path.write_bytes(json.dumps(row).encode() + b"\n" + latin + b"\n")
    with pytest.raises(InputError) as exc:
        read_pairs(path)
    assert [(p.line, p.field) for p in exc.value.problems] == [(1, "pair_id"), (2, None)]
