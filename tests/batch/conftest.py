"""Batch tests: keys for the SDKs, an emulator behind httpx.MockTransport, no waiting."""

from __future__ import annotations

from typing import Any

import pytest

from legal_judge.benchmark.ensemble_config import EnsembleConfig
from legal_judge.dataset import load_dataset, sample_dataset_path
from legal_judge.judge.config import JudgeConfig
from legal_judge.models import BenchmarkItem
from legal_judge.providers import anthropic as anthropic_provider
from legal_judge.providers.openai import forget_negotiated_modes


@pytest.fixture(autouse=True)
def _keys(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-batch-0000")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test-batch-0000")
    for var in ("OPENAI_BASE_URL", "ANTHROPIC_BASE_URL", "LEGAL_JUDGE_PRICES"):
        monkeypatch.delenv(var, raising=False)
    anthropic_provider._NO_TEMPERATURE.clear()
    forget_negotiated_modes()


class Sleeps:
    """An injectable poll wait that only counts."""

    def __init__(self) -> None:
        self.waits: list[float] = []

    async def __call__(self, seconds: float) -> None:
        self.waits.append(seconds)


@pytest.fixture
def sleeps() -> Sleeps:
    return Sleeps()


@pytest.fixture
def items() -> list[BenchmarkItem]:
    return load_dataset(sample_dataset_path())[:6]


def ensemble(*specs: str, **kwargs: Any) -> EnsembleConfig:
    """Judges by spec (a simulated judge runs online beside the batch judges)."""
    return EnsembleConfig(judges=[JudgeConfig(spec=s) for s in specs],
                          run_checks=kwargs.pop("run_checks", False), **kwargs)


@pytest.fixture
def make_config() -> Any:
    return ensemble
