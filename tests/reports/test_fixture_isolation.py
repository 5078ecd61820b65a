"""The session's demo store must not leave the session in another working directory."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest


def test_building_the_demo_store_leaves_the_working_directory_alone(
        demo_store: Any, request: pytest.FixtureRequest) -> None:
    # It used to chdir into its home for the whole session: a test of another directory that
    # reads a path relative to the checkout (tests/foundation/test_dataset.py) then failed
    # whenever it ran after a report test.
    assert Path.cwd() == request.config.invocation_params.dir
    assert Path.cwd() != demo_store.home
