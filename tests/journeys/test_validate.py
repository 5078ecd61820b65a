"""Journey: a team validates the benchmark it exported from a spreadsheet (issue 20, 14 and 16).

Before the fix ``validate`` stopped at the first line that was not UTF-8 (the other defects
appeared one fix later), and an id holding a line break was accepted, then broke the tables and
exports that show it.
"""

from __future__ import annotations

import json

from .conftest import Journey

GOOD = {"prompt": "Is a verbal lease valid in England?", "response": "Yes, up to three years.",
        "jurisdiction": "England and Wales"}


def _bench_lines() -> list[bytes]:
    lines = [json.dumps({"id": f"ew-{i:03d}", **GOOD}).encode() for i in range(1, 13)]
    lines[2] = b'{"id": "ew-003", "prompt": "Is a deed needed?" "response": "Yes."}'  # no comma
    lines[4] = json.dumps({"id": "ew-005", "response": "Yes."}).encode()               # no prompt
    lines[8] = ('{"id": "ew-009", "prompt": "Clause p\u00e9nale ?", "response": "Oui."}'
                .encode("latin-1"))                                                      # cp1252
    lines[11] = json.dumps({"id": "ew-\n012", **GOOD}).encode()                       # newline id
    return lines


def test_validate_reports_every_defect_then_the_fixed_file_runs(journey: Journey) -> None:
    bench = journey.cwd / "bench.jsonl"
    lines = _bench_lines()
    bench.write_bytes(b"\n".join(lines) + b"\n")

    # Items 14 and 16: old code reported line 9 only, and never the id with a line break.
    first = journey("validate", str(bench), expect=2)
    for line, what in ((3, "invalid JSON"), (5, "prompt"), (9, "not UTF-8"), (12, "line break")):
        assert f"bench.jsonl:{line}" in first.err and what in first.err, first.describe()
    assert "bench.jsonl:12: field 'id'" in first.err
    assert "4 problems found" in first.err

    # Item 16, everywhere a dataset is loaded: `run` refuses it too, before a run exists.
    journey("run", str(bench), "--ensemble", "demo", "--quiet", expect=2)
    assert journey.query("SELECT COUNT(*) FROM runs") == [(0,)]

    # One pass of fixes, then the file is valid and runs.
    lines[2] = json.dumps({"id": "ew-003", **GOOD}).encode()
    lines[4] = json.dumps({"id": "ew-005", **GOOD}).encode()
    lines[8] = lines[8].decode("latin-1").encode("utf-8")
    lines[11] = json.dumps({"id": "ew-012", **GOOD}).encode()
    bench.write_bytes(b"\n".join(lines) + b"\n")
    assert "12" in journey("validate", str(bench)).out
