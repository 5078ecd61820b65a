"""The session's demo store must not leave a test in another working directory."""

from __future__ import annotations

from pathlib import Path
from typing import Any


def test_building_the_demo_store_leaves_the_working_directory_alone(
        demo_store: Any, tmp_path: Path) -> None:
    # It used to chdir into its home for the whole session: a test of another directory that
    # read a path relative to the checkout then failed whenever it ran after a report test.
    # Every test now runs in its own empty folder (tests/conftest.py), the demo store's too.
    assert Path.cwd() == tmp_path / "cwd"
    assert Path.cwd() != demo_store.home
