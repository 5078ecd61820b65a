"""Journey: a one-item smoke test, then a compare of two such runs (issue 20, item 17).

Before the fix one scored item gave a zero-width "95% CI" (``3.40–3.40``) in the run summary, and
a compare over one paired item reported sd 0 and the interval ``+0.000..+0.000``: figures that
look measured but are undefined. Now they are absent (``n/a`` / ``null``).
"""

from __future__ import annotations

import json

from .conftest import Journey


def test_one_item_run_and_compare_report_no_interval(journey: Journey) -> None:
    one = journey.cwd / "one.jsonl"
    one.write_text(json.dumps({"id": "ew-001", "prompt": "Is a verbal lease valid in England?",
                               "response": "Yes, for up to three years (LPA 1925 s 54(2))."}) + "\n",
                   encoding="utf-8")
    first = journey("run", str(one), "--ensemble", "demo", "--quiet", "--run-id", "smoke-a")
    table = first.out[first.out.index("Ensemble scores per rubric"):first.out.index("Per judge")]
    rows = [line for line in table.splitlines() if "│ 1 │" in line]
    # Issue 33: below 5 scored items no interval, in words (it said "n/a").
    assert rows and all("too few items" in line for line in rows), first.out
    shown = json.loads(journey("runs", "show", "smoke-a", "--json").out)
    assert all(m["ci95"] is None for m in shown["summary"]["rubrics"].values())

    journey("run", str(one), "--ensemble", "demo", "--quiet", "--run-id", "smoke-b")
    compared = json.loads(journey("compare", "smoke-a", "smoke-b", "--json").out)
    assert compared["rubrics"]
    for rubric in compared["rubrics"].values():
        assert rubric.get("ci95") is None, rubric  # was [0.0, 0.0] from a single pair
    printed = journey("compare", "smoke-a", "smoke-b")
    assert "+0.000..+0.000" not in printed.out
