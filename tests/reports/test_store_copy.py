"""``store copy``: the demo's SQLite store into PostgreSQL (and back) reads the same on both."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any


def _cli(store: str, home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "LEGAL_JUDGE_HOME": str(home), "LEGAL_JUDGE_STORE": store,
           "COLUMNS": "80", "NO_COLOR": "1"}
    return subprocess.run([sys.executable, "-m", "legal_judge", *args], env=env,
                          capture_output=True, text=True, timeout=300)


def test_the_demo_store_copied_into_postgres_reads_the_same(demo_store: Any, tmp_path: Path,
                                                             pg_schema_url: str) -> None:
    lite = str(demo_store.home / "store.sqlite3")
    copied = _cli(lite, tmp_path, "store", "copy", lite, pg_schema_url)
    assert copied.returncode == 0, copied.stdout + copied.stderr
    assert "holds every row" in copied.stdout and "(same)" in copied.stdout
    again = _cli(lite, tmp_path, "store", "copy", lite, pg_schema_url)  # idempotent
    assert again.returncode == 0, again.stdout + again.stderr
    for command in (("runs", "list"), ("audit", "verify-log"), ("calibrate", "history")):
        on_sqlite = _cli(lite, tmp_path, *command)
        on_pg = _cli(pg_schema_url, tmp_path, *command)
        assert on_sqlite.returncode == on_pg.returncode == 0, on_pg.stdout + on_pg.stderr
        assert on_sqlite.stdout == on_pg.stdout, command
    back = str(tmp_path / "back.sqlite3")
    returned = _cli(lite, tmp_path, "store", "copy", pg_schema_url, back)
    assert returned.returncode == 0, returned.stdout + returned.stderr
    assert _cli(back, tmp_path, "audit", "verify-log").stdout == _cli(
        lite, tmp_path, "audit", "verify-log").stdout


def test_a_copy_into_a_store_holding_other_rows_exits_1(tmp_path: Path) -> None:
    one, other = tmp_path / "one.sqlite3", tmp_path / "other.sqlite3"
    for path, run_id in ((one, "A"), (other, "B")):
        done = _cli(str(path), tmp_path, "run", _small(tmp_path), "--ensemble", "demo",
                    "--run-id", run_id, "--quiet")
        assert done.returncode == 0, done.stdout + done.stderr
    copied = _cli(str(one), tmp_path, "store", "copy", str(one), str(other))
    assert copied.returncode == 1
    assert "differs" in copied.stdout and "does not hold exactly" in copied.stderr


def _small(folder: Path) -> str:
    from legal_judge.dataset import load_dataset, sample_dataset_path

    path = folder / "small.jsonl"
    path.write_text("".join(i.model_dump_json() + "\n" for i in load_dataset(sample_dataset_path())[:3]))
    return str(path)
