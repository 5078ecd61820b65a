"""What the calibration, audit and debias reports must make plain (issue 33, Build 8): the false
pass drawn as the harmful error, a flagged effect never under a noise band, the debias overview
by judge name with plain first and changes in points. Checked on the rendered HTML, and once in
headless Chromium (screenshots in tests/reports/screenshots/)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from cdp_browser import CHROMIUM, Browser

from legal_judge.reports import build_report, render_html, render_markdown

SCREENSHOTS = Path(__file__).parent / "screenshots"
HARM = "#b03a48"


def _html(demo_home: Any, entity_id: str) -> str:
    store = demo_home.store()
    try:
        return render_html(build_report(store, entity_id))
    finally:
        store.close()


def _section(html: str, anchor: str) -> str:
    start = html.index(f'<section id="{anchor}">')
    return html[start:html.index("</section>", start)]


def _svg_group(svg: str, gid: str) -> str:
    """The ``<g id=gid>`` element of a matplotlib SVG (its drawing)."""
    m = re.search(rf'<g id="{re.escape(gid)}">(.*?)</g>', svg, re.S)
    assert m, f"no element {gid}"
    return m.group(1)


def test_calibration_false_pass_cell_is_the_harmful_error(demo_home: Any) -> None:
    cal = demo_home.calibration_ids[0]  # Q2: the lawyers scored one point lower: false passes
    html = _html(demo_home, cal)
    store = demo_home.store()
    report = json.loads(store.db.execute("SELECT report_json FROM calibrations WHERE id = ?",
                                         (cal,)).fetchone()[0])
    store.close()
    false_passes = report["pass_fail"]["ensemble"]["judge_pass_human_fail"]
    assert false_passes > 0
    section = _section(html, "passfail")
    # The chart: the cell in red, with the word "harmful", not in the agreement cells' blue.
    gid = re.search(r'<g id="([a-z0-9-]+-harmful)">', section)
    assert gid, "the false-pass cell has no element of its own"
    cell = _svg_group(section, gid.group(1))
    assert f"stroke: {HARM}" in cell and "fill: #f6d5d9" in cell
    assert ">harmful<" in section and "Red cell, harmful" in section
    # The table: the false-pass column is marked harmful (its own class and colour).
    assert '<th scope="col" class="harmful">judge pass / lawyer fail</th>' in section
    assert f'<td class="num harmful">{false_passes}</td>' in section
    assert "td.harmful" in html  # styled
    # Markdown has no colour: the column says it in words.
    store = demo_home.store()
    markdown = render_markdown(build_report(store, cal))
    store.close()
    assert "| judge pass / lawyer fail (harmful) |" in markdown


def test_audit_noise_floor_never_covers_a_flagged_effect(demo_home: Any) -> None:
    audit = demo_home.audit_ids[0]
    html = _html(demo_home, audit)
    store = demo_home.store()
    report = json.loads(store.db.execute("SELECT report_json FROM audits WHERE id = ?",
                                         (audit,)).fetchone()[0])
    store.close()
    dims = report["dimension_results"]
    flagged = [i for i, d in enumerate(dims) if d["flagged"]]
    assert flagged, "the demo audit flags a dimension"
    forest = _section(html, "forest")
    key = "effect-per-dimension-with-95-ci"
    # No filled band at all: the old grey rectangle (#bbbbbb) covered flagged effects.
    assert "#bbbbbb" not in forest
    for i in flagged:
        ci = _svg_group(forest, f"{key}-ci-{i}")
        assert f"stroke: {HARM}" in ci  # the flagged effect's own CI, in the harm colour
    for i, d in enumerate(dims):
        noise = ((report["extensions"]["dimensions"][d["dimension"]]).get("noise_floor") or {})
        if noise.get("mean_abs_diff") is not None:
            assert f'<g id="{key}-noise-{i}">' in forest  # ticks under the row, not a band
    assert f'<g id="{key}-margin">' in forest and f'<g id="{key}-margin-lo">' in forest
    assert "its own CI and test decide" in forest or "own CI and test decide" in forest


def test_debias_overview_by_name_plain_first_in_points(demo_home: Any) -> None:
    html = _html(demo_home, demo_home.debias_id)
    overview = _section(html, "overview")
    assert "judge_id (" not in overview  # no hash per mode in the overview
    assert "<dt>judge</dt><dd>simulated:demo-openai</dd>" in overview
    assert "<dt>modes</dt><dd>plain, aware, self</dd>" in overview
    accuracy = _section(html, "accuracy")
    rows = re.findall(r"<tr><td>([a-z]+)</td><td>([a-z+-]+)</td>", accuracy)
    first_mode: dict[str, str] = {}
    for bias, mode in rows:
        first_mode.setdefault(bias, mode)
    assert first_mode and set(first_mode.values()) == {"plain"}
    changes = re.findall(r'<td class="num">([+-]\d+\.\d) pts</td>', accuracy)
    assert len(changes) == len(rows) - len(first_mode)  # every mode but plain, in points
    assert not re.search(r'<td class="num">[+-]\d+\.\d%</td>', accuracy)
    recs = _section(html, "recommendations")
    assert "accuracy gain (points)" in recs and not re.search(r"[+-]\d+\.\d%", recs)


@pytest.mark.browser
@pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed (`apt-get install -y "
                    "chromium`; .ci/run installs it)")
def test_the_three_views_in_chromium(demo_home: Any, tmp_path: Path) -> None:
    pages = {"calibration": demo_home.calibration_ids[0], "audit": demo_home.audit_ids[0],
             "debias": demo_home.debias_id}
    SCREENSHOTS.mkdir(exist_ok=True)
    with Browser(tmp_path / "profile", height=1400) as b:
        for kind, entity in pages.items():
            path = tmp_path / f"{kind}.html"
            path.write_text(_html(demo_home, entity), encoding="utf-8")
            b.open(path)
            assert b.console == []
            anchor = {"calibration": "passfail", "audit": "forest", "debias": "accuracy"}[kind]
            b.js(f"document.getElementById('{anchor}').scrollIntoView()")
            b.screenshot(SCREENSHOTS / f"view-{kind}.png")
        b.open(tmp_path / "calibration.html")
        # The harmful column is drawn in the danger colour; the agreement columns are not.
        colour = "getComputedStyle(document.querySelector('{}')).color"
        assert b.js(colour.format("#passfail td.harmful")) == "rgb(176, 58, 72)"
        assert b.js(colour.format("#passfail td.num:not(.harmful)")) != "rgb(176, 58, 72)"
        box = b.js("(() => { const g = document.querySelector('#passfail g[id$=\"-harmful\"]');"
                   " const r = g.getBoundingClientRect(); return r.width * r.height; })()")
        assert box > 100  # the harmful cell is drawn, visibly
