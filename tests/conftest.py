"""Every test runs with its own store, in its own empty working directory, and without real API
keys in the environment."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

import legal_judge

# The throwaway PostgreSQL server fixtures (postgres_url, pg_schema_url); how pytest-xdist
# groups the tests that share an expensive session fixture (the README runs `-n 2`).
pytest_plugins = ["pg_server", "xdist_groups"]

#: The folder holding the `legal_judge` this test process imports (the checkout under test).
CODE_ROOT = Path(legal_judge.__file__).resolve().parents[1]

KEY_VARS = ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GEMINI_API_KEY", "MISTRAL_API_KEY",
            "TOGETHER_API_KEY", "GROQ_API_KEY", "OPENAI_COMPATIBLE_API_KEY", "COURTLISTENER_TOKEN",
            "LANGFUSE_PUBLIC_KEY", "LANGFUSE_SECRET_KEY", "LANGFUSE_BASE_URL", "LANGFUSE_HOST")


@pytest.fixture(autouse=True)
def _isolated_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                   request: pytest.FixtureRequest, store_backend: str) -> Iterator[Path]:
    home = tmp_path / "lj-home"
    monkeypatch.setenv("LEGAL_JUDGE_HOME", str(home))
    # The product reads `legal-judge.toml` (where the store is) and `legal-judge.policy.toml`
    # from the working directory: a test run from a project folder would otherwise write into
    # that project's store and gate under its policy. An empty folder of the test's own holds
    # neither; a test needing a repository file names it from its own `Path(__file__)`.
    cwd = tmp_path / "cwd"
    cwd.mkdir()
    monkeypatch.chdir(cwd)
    # `python -m legal_judge` in a test's subprocess found this checkout through the working
    # directory (the repository root); it now finds it through PYTHONPATH, not an installed copy.
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(
        [str(CODE_ROOT), *filter(None, [os.environ.get("PYTHONPATH")])]))
    monkeypatch.delenv("LEGAL_JUDGE_STORE", raising=False)
    if store_backend == "postgresql":
        # A test on PostgreSQL (tests/pg_server.py): its default store is an empty schema.
        monkeypatch.setenv("LEGAL_JUDGE_STORE", request.getfixturevalue("pg_schema_url"))
    for var in KEY_VARS:
        monkeypatch.delenv(var, raising=False)
    yield home
