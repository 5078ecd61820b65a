"""How many product files one judgment and one audit pair walk through (docs/ARCHITECTURE.md,
"Counting a walk"; issue 34's targets: at most 14 per (item, judge) of ``run``, 20 per audit pair).

The count is ``scripts/walk_count.py --files`` in its own process (a profiler over a real run and
a real audit of the simulated demo judges, on a fresh store). A reader follows these walks to
learn where a judge call goes; a change that spreads one call over more files fails here with the
files it now enters.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
MAX_PER_JUDGMENT = 14
MAX_PER_AUDIT_PAIR = 20


def test_a_judgment_and_an_audit_pair_enter_few_files(tmp_path: Path) -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "LEGAL_JUDGE_HOME": str(tmp_path)}
    env.pop("LEGAL_JUDGE_STORE", None)
    out = subprocess.run([sys.executable, str(ROOT / "scripts" / "walk_count.py"), "--files",
                          "--list"], capture_output=True, text=True, env=env, timeout=600,
                         check=False)
    assert out.returncode == 0, out.stderr[-2000:]
    found = re.search(r"of run: (\d+) \(largest window \d+\); per audit pair: (\d+)", out.stdout)
    assert found is not None, out.stdout
    run, pair = int(found[1]), int(found[2])
    assert run <= MAX_PER_JUDGMENT, out.stdout
    assert pair <= MAX_PER_AUDIT_PAIR, out.stdout
    # The walk is the real one: it reaches the judge, the provider and the store.
    for file in ("judge/judge.py", "judge/calls.py", "providers/base.py", "store/writes.py",
                 "benchmark/pipeline.py", "audit/pairs.py"):
        assert f"  {file}" in out.stdout, file
