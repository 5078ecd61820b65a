"""Every test runs with its own store and without real API keys in the environment."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

KEY_VARS = ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GEMINI_API_KEY", "MISTRAL_API_KEY",
            "TOGETHER_API_KEY", "GROQ_API_KEY", "OPENAI_COMPATIBLE_API_KEY", "COURTLISTENER_TOKEN",
            "LANGFUSE_PUBLIC_KEY", "LANGFUSE_SECRET_KEY", "LANGFUSE_BASE_URL", "LANGFUSE_HOST")


@pytest.fixture(autouse=True)
def _isolated_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    home = tmp_path / "lj-home"
    monkeypatch.setenv("LEGAL_JUDGE_HOME", str(home))
    for var in KEY_VARS:
        monkeypatch.delenv(var, raising=False)
    yield home
