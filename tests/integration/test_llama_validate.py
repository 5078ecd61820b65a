"""Integration tier: ``calibrate validate`` with SmolLM2-135M (llama-cpp-python's server) as the
candidate, on a small labelled set (issue 31). A 135M model is no judge: only the report's
completeness and a verdict among the four are asserted, never which one.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("llama_cpp")
pytest.importorskip("llama_cpp.server", reason="llama-cpp-python[server] is not installed")

from journeys.test_calibration import _fill  # noqa: E402

pytestmark = pytest.mark.integration


def _cli(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "LEGAL_JUDGE_HOME": str(tmp_path / "home"), "COLUMNS": "80",
           "NO_COLOR": "1"}
    return subprocess.run([sys.executable, "-m", "legal_judge", *args], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=1800)


def test_smollm2_as_candidate_gets_a_complete_report(llama_server: str, tmp_path: Path) -> None:
    assert _cli(tmp_path, "demo", "--quiet").returncode == 0
    run = re.search(r"(run-\S+)", _cli(tmp_path, "runs", "list").stdout)
    assert run
    assert _cli(tmp_path, "calibrate", "sample", run[1], "--n", "3", "--seed", "7", "--out",
                "sheet.csv").returncode == 0
    _fill(tmp_path / "sheet.csv", tmp_path / "filled.csv")
    assert _cli(tmp_path, "calibrate", "import", "filled.csv", "--run", run[1]).returncode == 0
    cmp = _cli(tmp_path, "calibrate", "compare", run[1], "--quarter", "2026-Q4")
    cal = re.search(r"calibration id: (\S+)", cmp.stdout)
    assert cal, cmp.stdout + cmp.stderr
    # The candidate as a one-judge ensemble file, to switch token log-probabilities off (as the
    # README advises for a local llama.cpp server): the report asserted here does not use them,
    # and llama-cpp-python computes them token by token, several times slower than the answer
    # (tests/integration/test_llama_server.py asserts them).
    (tmp_path / "smollm2.toml").write_text(
        f'name = "smollm2"\nquorum = 1\n\n[[judges]]\n'
        f'spec = "openai-compatible:smollm2@{llama_server}"\noptions = {{ logprobs = false }}\n',
        "utf-8")
    done = _cli(tmp_path, "calibrate", "validate", "--calibration", cal[1], "--candidate",
                "smollm2.toml", "--json", "--report", "v.md")
    assert done.returncode in (0, 1), done.stdout + done.stderr
    report = json.loads(done.stdout)
    assert report["verdict"] in ("better", "not worse", "worse", "cannot tell")
    assert report["n_items"] == 3 and report["rubrics"][0]["rubric"] == "pass_fail"
    assert {r["verdict"] for r in report["rubrics"]} <= {"better", "not worse", "worse",
                                                          "cannot tell"}
    assert report["allowed"]["validated_on"][0]["calibration_id"] == cal[1]
    text = (tmp_path / "v.md").read_text("utf-8")
    assert "Allowed uses" in text and "Per rubric, side by side" in text
