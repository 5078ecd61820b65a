"""A run stopped by its cost limit is not green: exit 1, the reason, and how to finish it."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from legal_judge.dataset import sample_dataset_path

from .conftest import Journey, openai_stub


@pytest.fixture
def priced_endpoint() -> Iterator[str]:
    """The project's OpenAI-compatible stub; known model names are priced as their vendors'."""
    with openai_stub() as url:
        yield url


def test_a_run_stopped_by_its_cost_limit_exits_1_and_resumes(journey: Journey,
                                                             priced_endpoint: str) -> None:
    toml = journey.cwd / "budget.toml"
    judges = "".join(f'[[judges]]\nname = "{m}"\nspec = "openai-compatible:{m}@{priced_endpoint}"'
                     '\n\n' for m in ("gpt-4o", "claude-sonnet-4-5"))
    toml.write_text(f'name = "budget"\nquorum = 1\nconcurrency = 1\ncost_limit_usd = 0.40\n\n'
                    f"{judges}", encoding="utf-8")
    bench = str(sample_dataset_path())
    # Old behaviour: exit 0 with a yellow line, so CI took a third of a run for a finished one.
    stopped = journey("run", bench, "--ensemble", str(toml), "--quiet", "--run-id", "budget",
                      "--junit", "junit.xml", expect=1)
    text = " ".join(stopped.text.split())
    assert "cost limit $0.40 reached" in text
    assert "run stopped: finish it with `legal-judge run --resume budget`" in text
    assert "cost_limit_usd" in text  # names the field to raise
    (status,) = journey.query("SELECT status FROM runs WHERE id = 'budget'")[0]
    assert status == "stopped"
    done = journey.query("SELECT COUNT(*) FROM ensemble_results WHERE run_id = 'budget'")[0][0]
    assert 0 < done < 57
    # Each resume spends up to the limit again, never pays twice for a stored verdict, and
    # the last one finishes the run.
    for _ in range(10):
        resumed = journey("run", "--resume", "budget", "--quiet", expect=(0, 1))
        if resumed.code == 0:
            break
    assert "Run budget — completed" in resumed.out
    assert journey.query("SELECT COUNT(*) FROM ensemble_results WHERE run_id = 'budget'") == [
        (57,)]
    calls = journey.query("SELECT COUNT(*) FROM verdicts WHERE run_id = 'budget'")[0][0]
    assert calls == 2 * 57
