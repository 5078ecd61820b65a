"""The item table and the comparison report in headless Chromium: real clicks, real print media.

Screenshots land in ``tests/reports/screenshots/`` (git-ignored) for a person to look at.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from cdp_browser import CHROMIUM, Browser
from click.testing import CliRunner
from report_fixtures import REGRESSED

from legal_judge.benchmark.item_outcomes import run_item_outcomes

SCREENSHOTS = Path(__file__).parent / "screenshots"
pytestmark = [pytest.mark.browser,
              pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed (`apt-get "
                                 "install -y chromium`; .ci/run installs it)")]

VISIBLE_ROWS = ("Array.from(document.querySelectorAll('tr.item-row'))"
                ".filter(r => r.offsetParent !== null).map(r => r.dataset.item)")
OPEN_DETAILS = ("Array.from(document.querySelectorAll('tr.item-detail'))"
                ".filter(r => r.offsetParent !== null).map(r => r.id)")


def _write(*args: str) -> None:
    from legal_judge.cli import cli

    res = CliRunner().invoke(cli, ["report", *args], catch_exceptions=False)
    assert res.exit_code == 0, res.output


def test_a_filter_click_shows_only_that_lists_rows(demo_home: Any, tmp_path: Path) -> None:
    html = tmp_path / "run.html"
    _write(demo_home.run_id, "--html", str(html))
    store = demo_home.store()
    outcomes = run_item_outcomes(store, demo_home.run_id)
    store.close()
    every = [o.item_id for o in outcomes]
    should_fail = [o.item_id for o in outcomes if "passed_should_fail" in o.categories]
    SCREENSHOTS.mkdir(exist_ok=True)
    with Browser(tmp_path / "profile", height=1400) as b:
        b.call("Network.enable")
        b.open(html)
        assert b.js("document.querySelector('[data-items]').classList.contains('js-on')"), \
            f"the inline script did not run (CSP?): {b.console}"
        assert b.js(VISIBLE_ROWS) == every and b.js(OPEN_DETAILS) == []

        b.click('button.filter[data-filter="passed_should_fail"]')
        assert b.js(VISIBLE_ROWS) == should_fail and len(should_fail) == 13  # 19 before rule 4, 15 before issue 32 caught eu-002 and us-fed-003
        assert b.js("document.querySelector('.filter-status').textContent") == \
            "Showing 13 of 57 items: Passed but should fail."
        assert b.js("document.querySelector('button.filter[aria-pressed=true]').dataset.filter") \
            == "passed_should_fail"
        b.js("document.getElementById('items').scrollIntoView()")
        b.screenshot(SCREENSHOTS / "items-list.png")

        b.click(f'tr.item-row[data-item="{should_fail[0]}"] td:nth-child(2)')  # opens the item
        opened = b.js(OPEN_DETAILS)
        assert len(opened) == 1
        detail = b.js(f"document.getElementById('{opened[0]}').innerText")
        assert "Answer under evaluation" in detail and "Each judge's rationale" in detail
        assert "expected: should fail" in detail
        b.js("document.getElementById('items').scrollIntoView()")
        b.screenshot(SCREENSHOTS / "items-filtered.png")

        # Print: the chosen list only, every one of its items opened, no buttons.
        b.media("print")
        printed = b.js(OPEN_DETAILS)
        assert len(printed) == 13 and b.js(VISIBLE_ROWS) == should_fail
        assert b.js("getComputedStyle(document.querySelector('.filters')).display") == "none"
        b.screenshot(SCREENSHOTS / "items-print.png")
        pdf = b.pdf()
        # The item table's pages print in landscape (A4 842 x 595 pt), the rest in portrait.
        boxes = set(re.findall(rb"/MediaBox\s*\[\s*0 0 ([\d.]+) ([\d.]+)\s*\]", pdf))
        assert pdf[:5] == b"%PDF-" and {w > h for w, h in ((float(a), float(b_)) for a, b_ in boxes)} \
            == {True, False}, boxes
        b.media("screen")

        b.click('button.filter[data-filter="all"]')
        assert b.js(VISIBLE_ROWS) == every
        requests = [e for e in b.events if e.get("method") == "Network.requestWillBeSent"]
        assert [r["params"]["request"]["url"] for r in requests] == [html.resolve().as_uri()]
    assert not [c for c in b.console if c.startswith("exception")], b.console


def test_comparison_report_renders_in_chromium(demo_home: Any, tmp_path: Path) -> None:
    html = tmp_path / "compare.html"
    _write(demo_home.run_id, demo_home.run_b_id, "--html", str(html))
    SCREENSHOTS.mkdir(exist_ok=True)
    with Browser(tmp_path / "profile", height=1600) as b:
        b.open(html)
        b.screenshot(SCREENSHOTS / "compare.png", full_page=True, max_height=5000)
        b.js("document.getElementById('regressed').scrollIntoView()")
        b.screenshot(SCREENSHOTS / "compare-regressed.png")
        cards = b.js("Array.from(document.querySelectorAll('#regressed .card h3'))"
                     ".map(h => h.textContent)")
        assert sorted(cards) == sorted(REGRESSED)
        # Side by side: the two answers sit in two columns of one row.
        tops = b.js("Array.from(document.querySelector('#regressed .diff').children)"
                    ".map(c => [c.getBoundingClientRect().left, c.getBoundingClientRect().top])")
        assert len(tops) == 2 and tops[0][0] < tops[1][0] and abs(tops[0][1] - tops[1][1]) < 2
        assert b.js("document.querySelectorAll('svg').length") == 2
    assert (SCREENSHOTS / "compare.png").stat().st_size > 20_000
