"""Issue 18 item 4: a large run streams its items; the journey of a few hundred of them.

`legal-judge run` held every item of the dataset before the run started (about 9 KB each: 1.3 GB
for 100,000). It now validates the file in one pass that keeps nothing, stores the items as it
reads the file again, and judges them read back from the store in chunks; a resume reads them the
same way. What the user sees must not change: a bad line refuses the run with file, line, field
and fix (exit 2) and leaves nothing behind; Ctrl-C stores the run interrupted (exit 130);
`--resume` finishes it without repeating a call, and the summary counts every item once.
"""

from __future__ import annotations

import json
import signal
from pathlib import Path

from legal_judge.dataset import load_dataset, sample_dataset_path

from .conftest import Journey

N = 300


def _bench(journey: Journey, bad_line: int | None = None) -> Path:
    base = load_dataset(sample_dataset_path())
    lines = [base[i % len(base)].model_copy(update={
        "id": f"st-{i:04d}", "prompt": f"{base[i % len(base)].prompt} [{i}]"}).model_dump_json()
        for i in range(N)]
    if bad_line is not None:
        row = json.loads(lines[bad_line - 1])
        del row["response"]
        lines[bad_line - 1] = json.dumps(row)
    path = journey.cwd / ("bad.jsonl" if bad_line else "bench.jsonl")
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def _ensemble(journey: Journey) -> Path:
    judges = "".join(f'\n[[judges]]\nspec = "simulated:{p}?latency_ms=20"\n'
                     for p in ("demo-openai", "demo-google", "demo-mistral"))
    path = journey.cwd / "stream.toml"
    path.write_text(f"name = 'stream'\nconcurrency = 4\nrun_checks = false\n{judges}",
                    encoding="utf-8")
    return path



def test_a_streamed_run_refuses_a_bad_line_is_interrupted_and_resumes(journey: Journey) -> None:
    ensemble = str(_ensemble(journey))
    # A defect in the middle of the file: refused before the run exists, nothing stored.
    bad = journey("run", str(_bench(journey, bad_line=151)), "--ensemble", ensemble,
                  "--run-id", "B", expect=2)
    flat = " ".join(bad.err.split())
    assert "1 problem found" in flat and "bad.jsonl:151: field 'response': Field required" in flat
    assert "correct the lines listed above" in flat, bad.describe()
    assert "B" not in journey("runs", "list").out.split()
    assert journey.query("SELECT COUNT(*) FROM items")[0][0] == 0

    # The good file: Ctrl-C once the judging is under way.
    proc = journey.spawn("run", str(_bench(journey)), "--ensemble", ensemble, "--run-id", "S")
    journey.wait_for_verdicts(30, proc)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, (out, err)
    assert "run interrupted" in out and "legal-judge run --resume S" in out
    assert journey.query("SELECT status FROM runs WHERE id = 'S'") == [("interrupted",)]
    assert journey.query("SELECT COUNT(*) FROM items WHERE run_id = 'S'") == [(N,)]
    # Every item was stored before the first call: the order of the file is kept.
    ids = [r[0] for r in journey.query("SELECT item_id FROM items WHERE run_id = 'S' "
                                       "ORDER BY position")]
    assert ids == [f"st-{i:04d}" for i in range(N)]
    before = journey.query("SELECT item_id, judge FROM verdicts WHERE run_id = 'S' "
                           "AND status = 'ok'")
    assert 30 <= len(before) < 3 * N

    resumed = journey("run", "--resume", "S", "--quiet")
    assert "Run S — completed" in resumed.out, resumed.describe()
    # No completed call was made again: one successful call per verdict kept before.
    again = journey.query(
        "SELECT COUNT(*) FROM judge_calls WHERE run_id = 'S' AND error IS NULL "
        "AND cached = 0 AND purpose = 'verdict' GROUP BY item_id, judge HAVING COUNT(*) > 1")
    assert again == []
    summary = json.loads(journey.query("SELECT summary_json FROM runs WHERE id = 'S'")[0][0])
    assert summary["items"] == N
    assert summary["scored"] + len(summary["inconclusive"]) == N
    assert sum(j["ok"] + j["inconclusive"] + j["error"] for j in summary["judges"].values()) == 3 * N
    assert journey.query("SELECT COUNT(*) FROM ensemble_results WHERE run_id = 'S'") == [(N,)]
    listed = journey("runs", "list")
    row = next(line for line in listed.out.splitlines() if line.strip("│ ").startswith("S "))
    assert "completed" in row and f"{N}" in row, listed.describe()
