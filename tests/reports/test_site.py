"""``report --site DIR``: the whole demo store as a static site, followed link by link in
headless Chromium (issue 33, Build 8)."""

from __future__ import annotations

import re
import shutil
from pathlib import Path
from typing import Any

import pytest
from cdp_browser import CHROMIUM, Browser
from click.testing import CliRunner

SCREENSHOTS = Path(__file__).parent / "screenshots"
LINKS = "Array.from(document.querySelectorAll('a[href]')).map(a => a.getAttribute('href'))"
VISIBLE = ("Array.from(document.querySelectorAll('tr.entry'))"
           ".filter(r => r.offsetParent !== null).map(r => r.dataset.kind + ' ' + r.dataset.id)")


def _cli(*args: str, code: int = 0) -> Any:
    from legal_judge.cli import cli

    res = CliRunner().invoke(cli, list(args), catch_exceptions=False)
    assert res.exit_code == code, res.output
    return res


def _site(folder: Path) -> Any:
    return _cli("report", "--site", str(folder))


def _errors(b: Browser) -> list[str]:
    """Console errors, uncaught exceptions and browser log errors (a CSP refusal is one)."""
    logged = [e["params"]["entry"].get("text", "") for e in b.events
              if e.get("method") == "Log.entryAdded" and e["params"]["entry"].get("level") == "error"]
    return [*b.console, *logged]


def test_site_lists_the_store_newest_first(demo_home: Any, tmp_path: Path) -> None:
    res = _site(tmp_path / "site")
    store = demo_home.store()
    runs = [r for r in store.list_runs(limit=1000) if r["kind"] == "run"]  # not the samples
    store.close()
    ids = [demo_home.run_id, demo_home.run_b_id, *demo_home.audit_ids, *demo_home.calibration_ids,
           demo_home.debias_id]
    n = len(runs) + 2 + 2 + 1
    assert f"site of {n} entries: {n} reports written" in res.output
    index = (tmp_path / "site" / "index.html").read_text(encoding="utf-8")
    rows = re.findall(r'<tr class="entry" data-kind="([a-z]+)" data-id="([^"]+)"><td class="nowrap">'
                      r"([^<]+)</td>", index)
    assert {i for _, i, _ in rows} >= set(ids) and len(rows) == n
    stamps = [t for _, _, t in rows]
    assert stamps == sorted(stamps, reverse=True)  # newest first
    assert re.search(r"https?://|//cdn|<link|src=", index) is None  # offline, self-contained
    kinds = {k for k, _, _ in rows}
    assert kinds == {"run", "audit", "calibration", "debias"}
    # Each line says what it is: the experiment by its judge and what it recommends.
    line = re.search(rf'data-id="{demo_home.debias_id}">(.*?)</tr>', index)
    assert line and "judge simulated:demo-openai" in line[1] and "recommended authority: " in line[1]
    assert "SIMULATED judge" in line[1]


@pytest.mark.browser
@pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed (`apt-get install -y "
                    "chromium`; .ci/run installs it)")
def test_every_link_of_the_site_resolves_in_chromium(demo_store: Any, tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    # A copy of the demo store with a judge-change validation too (the session's store is shared).
    home = tmp_path / "home"
    home.mkdir()
    shutil.copy(demo_store.home / "store.sqlite3", home / "store.sqlite3")
    monkeypatch.setenv("LEGAL_JUDGE_HOME", str(home))
    monkeypatch.chdir(tmp_path)
    _cli("calibrate", "validate", "--calibration", demo_store.calibration_ids[1], "--candidate",
         "simulated:lenient", "--incumbent", "simulated:fair", code=1)  # 1: WORSE
    demo_home = demo_store
    site = tmp_path / "site"
    _site(site)
    index = site / "index.html"
    SCREENSHOTS.mkdir(exist_ok=True)
    with Browser(tmp_path / "profile", height=1200) as b:
        b.call("Log.enable")
        b.open(index)
        assert b.js("document.querySelector('[data-site]').classList.contains('js-on')"), \
            f"the inline script did not run (CSP?): {_errors(b)}"
        links = b.js(LINKS)
        every = b.js(VISIBLE)
        assert len(links) == len(every) > 6
        assert {e.split()[0] for e in every} == {"run", "audit", "calibration", "validation",
                                                 "debias"}
        b.screenshot(SCREENSHOTS / "site-index.png")

        # A filter: only the audits, then only one of them by its id.
        b.click('button.filter[data-filter="audit"]')
        assert sorted(b.js(VISIBLE)) == sorted(f"audit {a}" for a in demo_home.audit_ids)
        assert b.js("document.querySelector('.filter-status').textContent") == \
            f"Showing 2 of {len(every)} entries: Audits."
        b.js("(() => { const s = document.querySelector('input.search');"
             f" s.value = '{demo_home.audit_ids[1]}'; s.dispatchEvent(new Event('input')); }})()")
        assert b.js(VISIBLE) == [f"audit {demo_home.audit_ids[1]}"]
        b.click('button.filter[data-filter="all"]')
        b.js("(() => { const s = document.querySelector('input.search');"
             " s.value = ''; s.dispatchEvent(new Event('input')); })()")
        assert b.js(VISIBLE) == every
        assert _errors(b) == []

        # Follow every link: the file exists, renders its report, and links back to the index.
        for href in links:
            page = (site / href).resolve()
            assert page.is_file() and page.is_relative_to(site.resolve()), href
            b.open(page)
            title = b.js("document.querySelector('header h1').textContent")
            entity = href.rsplit("/", 1)[1].removesuffix(".html")
            assert entity in title, (href, title)
            assert b.js("document.querySelectorAll('main section').length") > 0, href
            back = b.js("document.querySelector('nav a').getAttribute('href')")
            assert (page.parent / back).resolve() == index.resolve()
            assert _errors(b) == [], (href, _errors(b))
            if href.startswith(("audits/", "validations/")):
                b.screenshot(SCREENSHOTS / f"site-{href.split('/')[0]}.png")


def test_a_sharded_run_is_one_entry_not_one_per_shard(tmp_path: Path) -> None:
    from legal_judge.reports.site import site_entries
    from legal_judge.store import Store

    store = Store(tmp_path / "s.sqlite3")
    for k in (1, 2):
        store.create_run(f"R~shard-{k}-of-2", kind="run",
                         config={"shard": {"of": "R", "k": k, "n": 2}})
    store.create_run("R", kind="run", config={"shards": {"n": 2}})
    store.create_run("plain", kind="run", config={})
    assert sorted(e.id for e in site_entries(store) if e.kind == "run") == ["R", "plain"]


def test_a_sharded_run_before_its_last_shard_is_listed_with_its_shards_state(
        tmp_path: Path) -> None:
    # Defect: until the last shard completed, the site left the run out (`runs list` showed it,
    # "shards 1/2 done, 1 pending"), and `report R` said "no run ... 'R'" of a run it listed.
    from legal_judge.errors import NotFoundError
    from legal_judge.reports.build import build_report
    from legal_judge.reports.site import site_entries, write_site
    from legal_judge.store import Store

    store = Store(tmp_path / "s.sqlite3")
    store.create_run("R~shard-1-of-2", kind="run", config={
        "dataset": "bench.jsonl", "shard": {"of": "R", "k": 1, "n": 2, "dataset_items": 4}})
    store.finish_run("R~shard-1-of-2", status="completed", summary={})
    entries = [e for e in site_entries(store) if e.kind == "run"]
    assert [(e.id, e.status) for e in entries] == [("R", "shards 1/2 done, 1 pending")]
    with pytest.raises(NotFoundError) as caught:
        build_report(store, "R")
    said = str(caught.value)
    assert "run 'R' is judged in shards" in said and "pending: 2 (not started)" in said
    assert "--run-id R --shard K/2" in said and "R~shard-1-of-2" in said
    site = write_site(store, tmp_path / "site")
    assert [(e.id, e.href) for e in site.entries] == [("R", None)]
    assert "judged in shards" in str(site.entries[0].problem)
