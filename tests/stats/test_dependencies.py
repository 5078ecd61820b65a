"""The statistics package depends on numpy/scipy only; reference libraries are test-time tools."""

from __future__ import annotations

import subprocess
import sys


def test_stats_imports_no_reference_library() -> None:
    code = (
        "import sys, legal_judge.stats\n"
        "banned = {'sklearn', 'statsmodels', 'krippendorff', 'pingouin', 'pandas'}\n"
        "print(sorted(banned & {m.split('.')[0] for m in sys.modules}))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout.strip()
    assert out == "[]"
