"""Fixtures for the rule-based checks tests."""

from __future__ import annotations

import pytest

from ._support import FakeClock


@pytest.fixture
def fake_clock() -> FakeClock:
    return FakeClock()
