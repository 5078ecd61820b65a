"""Journey: a team points legal-judge at its Langfuse and mistypes the timeout.

``LANGFUSE_TIMEOUT=5s`` (units written out) used to end ``doctor`` and ``sync`` in "internal
error" (exit 70, a ValueError from the settings reader). The one settings reader
(``legal_judge.sync.settings``) now refuses it as the user's to fix: ``doctor`` lists it as a
problem with the fix, ``sync`` exits 2 naming the variable, and the corrected value delivers.
"""

from __future__ import annotations

from typing import Any

from legal_judge.dataset import sample_dataset_path

from .conftest import Journey
from .test_sync_debias import langfuse  # noqa: F401  (the stand-in fixture)


def test_a_mistyped_langfuse_timeout_is_the_users_to_fix(journey: Journey,
                                                         langfuse: Any) -> None:  # noqa: F811
    # Offline first: the run is stored and queued, nothing is sent.
    journey("run", str(sample_dataset_path()), "--ensemble", "demo", "--limit", "3",
            "--run-id", "r1", "--quiet", env={"LANGFUSE_PUBLIC_KEY": ""})
    assert journey.query("SELECT COUNT(*) FROM outbox WHERE synced_at IS NULL")[0][0] == 1

    journey.env["LANGFUSE_TIMEOUT"] = "5s"
    doctor = journey("doctor", expect=None)
    assert "problem  langfuse: LANGFUSE_TIMEOUT='5s' is not a number of seconds" in doctor.out
    assert "set LANGFUSE_TIMEOUT to a positive number of seconds" in doctor.out

    refused = journey("sync", expect=2)
    assert "LANGFUSE_TIMEOUT='5s' is not a number of seconds" in refused.text
    assert journey.query("SELECT COUNT(*) FROM outbox WHERE synced_at IS NULL")[0][0] == 1

    journey.env["LANGFUSE_TIMEOUT"] = "5"
    journey("sync")
    assert journey.query("SELECT COUNT(*) FROM outbox WHERE synced_at IS NULL")[0][0] == 0
    assert langfuse.state.traces, "the corrected settings delivered the run"
