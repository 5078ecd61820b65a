"""The wheel carries the rubrics, prompts and package data, so a non-editable install works."""

from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def test_wheel_contains_assets(tmp_path: Path) -> None:
    pytest.importorskip("hatchling")
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q",
                    "-w", str(tmp_path), str(ROOT)], check=True, capture_output=True)
    wheel = next(tmp_path.glob("legal_judge-*.whl"))
    names = set(zipfile.ZipFile(wheel).namelist())
    for required in ("legal_judge/_assets/rubrics/legal_judge_set.v1.yaml",
                     "legal_judge/_assets/prompts/judge_system.v1.j2",
                     "legal_judge/_assets/prompts/biases.v1.yaml",
                     "legal_judge/data/sample_bench.jsonl",
                     "legal_judge/data/ensemble.demo.toml",
                     "legal_judge/data/simulated_profiles.v1.yaml"):
        assert required in names, required
    # The --json documents' schemas ship with the package (README, "Machine-readable output").
    schemas = {f"legal_judge/data/schemas/{p.name}"
               for p in (ROOT / "legal_judge" / "data" / "schemas").glob("*.schema.json")}
    assert schemas and schemas <= names, sorted(schemas - names)
    assert any(n.endswith("entry_points.txt") for n in names)
