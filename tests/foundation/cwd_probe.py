"""Not collected by the suite (no ``test_`` prefix): ``test_working_directory.py`` runs it in a
pytest of its own, launched from a folder holding a project file and a policy file, to show that
no test reads the folder pytest was launched from."""

from __future__ import annotations

from pathlib import Path

import pytest

from legal_judge import config
from legal_judge.policy import load_policy


def test_the_launch_folder_is_not_read(tmp_path: Path, request: pytest.FixtureRequest) -> None:
    # The store and policy first: they are what a test run from a project folder would misuse.
    assert config.store_setting().origin == "default"
    assert config.project_file() is None
    assert load_policy().bundled
    launched = request.config.invocation_params.dir
    assert Path.cwd() != launched and Path.cwd().is_relative_to(tmp_path)
