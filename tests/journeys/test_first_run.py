"""Journey: a new user's first ten minutes (demo, list, show)."""

from __future__ import annotations

import json

from .conftest import Journey


def test_demo_then_list_and_show(journey: Journey) -> None:
    # The command list cut five descriptions with "..." at 80 columns; each is a whole sentence.
    commands = journey("--help").out.split("Commands:", 1)[1]
    assert "..." not in commands and "can it tell good from bad" in " ".join(commands.split())
    demo = journey("demo", "--quiet")
    assert "completed" in demo.out
    run_id = journey.query("SELECT id FROM runs")[0][0]
    shown = journey("runs", "show", run_id, "--json")
    assert json.loads(shown.out)["id"] == run_id
    journey("runs", "show", "no-such-run", expect=2)
