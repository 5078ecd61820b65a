"""A run without calibration does not import the calibration package (~0.3 s of a cached rerun)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

_RUN = """
import asyncio, sys
from legal_judge.benchmark.ensemble_config import load_ensemble_config
from legal_judge.benchmark.runner import run_benchmark
from legal_judge.dataset import load_dataset, sample_dataset_path
from legal_judge.store import Store
items = load_dataset(sample_dataset_path())[:3]
store = Store()
out = asyncio.run(run_benchmark(items, load_ensemble_config("demo"), store=store))
summary = store.get_run(out.run_id)["summary"]
print(summary["calibrated"], summary["corrected"], out.status,
      "legal_judge.calibration" in sys.modules)
"""


def test_a_run_without_calibration_or_labels_never_imports_calibration(tmp_path: Path) -> None:
    env = {**os.environ, "LEGAL_JUDGE_HOME": str(tmp_path)}
    out = subprocess.run([sys.executable, "-c", _RUN], env=env, capture_output=True, text=True,
                         timeout=120, check=True)
    assert out.stdout.split() == ["None", "None", "completed", "False"]
