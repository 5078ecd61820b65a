"""The store-heavy folders run each test on both backends (tests/pg_server.py BOTH_BACKENDS):
collected once as ``[sqlite]`` and once as ``[postgresql]``, except a test marked ``sqlite_only``
or one that chooses its backends itself; a test elsewhere runs once."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from pg_server import BOTH_BACKENDS

ROOT = Path(__file__).resolve().parents[2]


def _collected(*paths: str) -> list[str]:
    done = subprocess.run([sys.executable, "-m", "pytest", "--collect-only", "-q",
                           "-p", "no:cacheprovider", *paths], cwd=ROOT, capture_output=True,
                          text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    return [line for line in done.stdout.splitlines() if "::" in line]


def test_a_store_heavy_test_runs_on_both_backends_and_others_once() -> None:
    ids = _collected("tests/audit/test_cli.py::test_verify_log_passes_then_fails_after_a_direct_"
                     "sqlite_edit", "tests/store/test_store_rows.py",
                     "tests/store/test_store.py::test_failed_transaction_rolls_back",
                     "tests/stats/test_paired.py::test_single_pair_runs_no_test_and_reports_no_sd_or_ci")
    assert [i.split("::")[1] for i in ids] == [
        "test_verify_log_passes_then_fails_after_a_direct_sqlite_edit[sqlite]",
        "test_verify_log_passes_then_fails_after_a_direct_sqlite_edit[postgresql]",
        "test_rows_are_read_in_batches_not_one_python_call_each",  # sqlite_only
        "test_failed_transaction_rolls_back[sqlite]",  # store_target: its own two backends
        "test_failed_transaction_rolls_back[postgresql]",
        "test_single_pair_runs_no_test_and_reports_no_sd_or_ci",  # not a store-heavy folder
    ]


def test_every_folder_of_both_backends_exists() -> None:
    for folder in BOTH_BACKENDS:
        assert (ROOT / folder).is_dir(), folder
