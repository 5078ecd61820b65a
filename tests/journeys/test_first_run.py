"""Journey: a new user's first ten minutes (demo, list, show)."""

from __future__ import annotations

import json

from .conftest import Journey


def test_demo_then_list_and_show(journey: Journey) -> None:
    demo = journey("demo", "--quiet")
    assert "completed" in demo.out
    run_id = journey.query("SELECT id FROM runs")[0][0]
    shown = journey("runs", "show", run_id, "--json")
    assert json.loads(shown.out)["id"] == run_id
    journey("runs", "show", "no-such-run", expect=2)
