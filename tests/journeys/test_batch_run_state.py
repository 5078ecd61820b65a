"""``run --batch`` starts and finishes like an online run (issue 18)."""

from __future__ import annotations

from legal_judge.dataset import sample_dataset_path

from .conftest import Journey


def test_a_reused_run_id_is_refused_by_run_batch_naming_the_fix(journey: Journey) -> None:
    bench = str(sample_dataset_path())
    first = journey("run", bench, "--ensemble", "demo", "--batch", "--run-id", "weekly",
                    "--limit", "3", "--quiet")
    assert "Run weekly — completed" in first.out
    # Old behaviour: `internal error: IntegrityError: UNIQUE constraint failed: runs.id`, exit 70
    # (the online path already refused it with exit 2).
    again = journey("run", bench, "--ensemble", "demo", "--batch", "--run-id", "weekly",
                    "--limit", "2", "--quiet", expect=2)
    text = " ".join(again.text.split())
    assert "a run 'weekly' already exists" in text
    assert "finish it with `legal-judge run --resume weekly --batch` or pick another --run-id" in text
    assert "internal error" not in text and "Traceback" not in text
    # The stored run is the first one, untouched.
    assert journey.query("SELECT status FROM runs") == [("completed",)]
    assert journey.query("SELECT COUNT(*) FROM items WHERE run_id = 'weekly'") == [(3,)]
