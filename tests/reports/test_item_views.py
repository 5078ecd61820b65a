"""Per-item views: the run report's item table and the comparison report of two runs."""

from __future__ import annotations

import base64
import hashlib
import json
import re
from pathlib import Path
from typing import Any

from click.testing import CliRunner
from markupsafe import escape
from report_fixtures import IMPROVED, REGRESSED

from legal_judge.benchmark.compare import compare_runs
from legal_judge.benchmark.item_outcomes import (
    paired_outcomes,
    run_item_outcomes,
    transition_counts,
)
from legal_judge.reports import build_comparison_report, build_report, render_html, render_markdown
from legal_judge.reports.model import ItemTable
from legal_judge.reports.view_compare import comparison_view


def _cli(*args: str) -> Any:
    from legal_judge.cli import cli

    return CliRunner().invoke(cli, list(args), catch_exceptions=False)


def _rows(html: str) -> dict[str, str]:
    """item id -> its data-categories, for every row of the item table."""
    return {m["item"]: m["cats"] for m in re.finditer(
        r'<tr class="item-row [a-z]+" id="item-\d+" data-detail="detail-\d+" '
        r'data-item="(?P<item>[^"]+)" data-categories="(?P<cats>[^"]*)">', html)}


def test_item_lists_agree_with_the_run_summary(demo_home: Any) -> None:
    store = demo_home.store()
    summary = store.get_run(demo_home.run_id)["summary"]
    outcomes = run_item_outcomes(store, demo_home.run_id)
    store.close()

    def ids(cat: str) -> list[str]:
        return sorted(o.item_id for o in outcomes if cat in o.categories)

    exp = summary["expected_agreement"]
    # 13 since issues 29 and 32 (19 before): rule 4 fails four hedging-only answers the lawyers
    # fail, and the citation checker overrides eu-002 (GDPR art. 183) and us-fed-003 (a known
    # fabrication) to fail.
    assert len(ids("passed_should_fail")) == exp["false_pass"] == 13
    assert len(ids("failed_should_pass")) == exp["false_fail"]
    assert len(ids("failed")) == round(summary["scored"] * (1 - summary["pass_rate"]))
    assert ids("overridden") == sorted(summary["citation_overrides"])
    assert ids("flagged") == sorted(summary["flagged_for_review"])
    assert ids("inconclusive") == sorted(summary["inconclusive"])
    split = [o for o in outcomes if "split" in o.categories]
    assert split and all(o.judge_votes["pass"] and o.judge_votes["fail"] for o in split)
    assert all("judges split on pass/fail" in o.flags for o in split)


def test_run_report_lists_every_item_with_its_lists(demo_home: Any, tmp_path: Path) -> None:
    store = demo_home.store()
    outcomes = run_item_outcomes(store, demo_home.run_id)
    doc = build_report(store, demo_home.run_id)
    items = {i["id"]: i for i in store.load_items(demo_home.run_id)}
    store.close()
    html = render_html(doc)
    rows = _rows(html)
    assert list(rows) == [o.item_id for o in outcomes]  # every item, in the run's order
    should_fail = [i for i, cats in rows.items() if "passed_should_fail" in cats.split()]
    assert sorted(should_fail) == sorted(o.item_id for o in outcomes
                                         if "passed_should_fail" in o.categories)
    assert len(should_fail) == 13
    for key, label in (("failed", "Failed"), ("passed_should_fail", "Passed but should fail"),
                       ("split", "Judges split"), ("overridden", "Overridden"),
                       ("inconclusive", "Inconclusive")):
        n = sum(key in o.categories for o in outcomes)
        assert re.search(rf'data-filter="{key}" data-label="{label}" aria-pressed="false"'
                         rf'{" disabled" if n == 0 else ""}>{label} <span class="count">{n}'
                         "</span>", html), key
    # Each row opens the item: its prompt, answer, expected conclusion and each judge's reasons.
    first = should_fail[0]
    detail = html.split(f'data-item="{first}"', 1)[1].split('<tr class="item-row', 1)[0]
    assert str(escape(items[first]["response"].splitlines()[0])) in detail
    assert str(escape(items[first]["metadata"]["lawyer_conclusion"])) in detail
    assert "expected: should fail" in detail and "Each judge&#39;s rationale" in detail
    assert "Rule-based citation findings" in detail
    # The section replaced the flagged-items cards (the fixture has lawyer labels, so the raw and
    # corrected figures make a tenth section; the README shows the plain demo's nine).
    assert [s.title for s in doc.sections].count("Items") == 1 and len(doc.sections) == 10


def test_the_one_script_is_inline_and_allowed_by_its_hash(demo_home: Any) -> None:
    store = demo_home.store()
    html = render_html(build_report(store, demo_home.run_id))
    store.close()
    script = html.split("<script>", 1)[1].split("</script>", 1)[0]
    digest = base64.b64encode(hashlib.sha256(script.encode()).digest()).decode()
    csp = re.search(r'http-equiv="Content-Security-Policy" content="([^"]+)"', html)
    assert csp and f"script-src 'sha256-{digest}'" in csp[1] and "default-src 'none'" in csp[1]
    for forbidden in ("fetch(", "XMLHttpRequest", "WebSocket", "import(", "localStorage",
                      "http://", "https://", "src="):
        assert forbidden not in script


def test_markdown_lists_items_and_details_the_flagged(demo_home: Any) -> None:
    store = demo_home.store()
    doc = build_report(store, demo_home.run_id)
    summary = store.get_run(demo_home.run_id)["summary"]
    store.close()
    md = render_markdown(doc)
    table = doc.item_tables()[0]
    assert isinstance(table, ItemTable) and len(table.rows) == summary["items"]
    assert "Passed but should fail: 13" in md
    for row in table.rows:
        assert f"| {row.item_id} |" in md
    for item_id in summary["flagged_for_review"]:
        assert f"### {item_id} " in md
    data = json.loads(json.dumps(doc.to_dict(charts=False), default=str))
    items = next(b for s in data["sections"] for b in s["blocks"] if b["type"] == "itemtable")
    assert {r["item_id"] for r in items["rows"]} == {r.item_id for r in table.rows}


def test_paired_outcomes_classify_each_change(demo_home: Any) -> None:
    store = demo_home.store()
    pairs = paired_outcomes(store, demo_home.run_id, demo_home.run_b_id)
    result = compare_runs(store, demo_home.run_id, demo_home.run_b_id)
    store.close()
    changed = {p.item_id: p.change for p in pairs if p.change != "unchanged"}
    assert {i for i, c in changed.items() if c == "regressed"} == set(REGRESSED)
    assert {i for i, c in changed.items() if c == "improved"} <= set(IMPROVED)
    assert sorted(result["regressed_items"]) == sorted(REGRESSED)
    t = transition_counts(pairs)
    assert (t["pass_fail"], t["fail_pass"]) == (result["pass_rate"]["b"], result["pass_rate"]["c"])
    assert sum(t.values()) == len(pairs) == 57
    p = next(p for p in pairs if p.item_id == REGRESSED[0])
    assert p.response_a != p.response_b and p.a.overall == "pass" and p.b.overall == "fail"
    assert p.score_changes["legal_soundness"] == round(
        p.b.scores["legal_soundness"] - p.a.scores["legal_soundness"], 4) < 0


def test_comparison_report_shows_deltas_mcnemar_and_both_verdicts(demo_home: Any,
                                                                  tmp_path: Path) -> None:
    a, b = demo_home.run_id, demo_home.run_b_id
    html, md = tmp_path / "c.html", tmp_path / "c.md"
    res = _cli("report", a, b, "--html", str(html), "--md", str(md))
    assert res.exit_code == 0, res.output
    assert f"comparison report {a} vs {b}" in res.output
    store = demo_home.store()
    result = compare_runs(store, a, b)
    store.close()
    text = html.read_text(encoding="utf-8")
    assert "<script" not in text and "default-src 'none'" in text
    for rubric, r in result["rubrics"].items():
        row = (f'<td>{rubric}</td><td class="num">{r["n"]}</td>'
               f'<td class="num">{r["mean_difference"]:+.3f}</td>')
        assert row in text, rubric
    pr = result["pass_rate"]
    assert f"{pr['rate_a']:.1%} -&gt; {pr['rate_b']:.1%} (exact McNemar p = {pr['p_value']:.4f}" \
        in text
    regressed = text.split('id="regressed"', 1)[1].split("<section", 1)[0]
    improved = text.split('id="improved"', 1)[1].split("<section", 1)[0]
    for item in REGRESSED:
        card = regressed.split(f"<h3>{item}</h3>", 1)[1].split('<div class="card">', 1)[0]
        assert "Both verdicts" in card and "<ins>" in card  # the answers side by side
        assert re.search(r"<td>ensemble verdict</td><td>pass</td><td>fail</td>", card)
    assert all(f"<h3>{i}</h3>" not in regressed for i in IMPROVED)
    assert any(f"<h3>{i}</h3>" in improved for i in IMPROVED)
    said = md.read_text(encoding="utf-8")
    assert "## Regressed items (A passed and B failed, or a rubric score dropped)" in said
    # Issue 28: the release decision, its margins and the policy come first, as in the terminal.
    assert "## Release decision" in said and "RELEASE GATE" in said
    assert "policy: bundled default (sha256 " in said
    for e in result["release"]["endpoints"]:
        assert f"| {e['endpoint']} |" in said and f"| -{e['margin']:g} | {e['decision']} |" in said


def test_comparison_adapter_reads_richer_compare_results() -> None:
    view = comparison_view({
        "run_a": "a", "run_b": "b", "n_items": 9, "warnings": [],
        "rubrics": {"legal_soundness": {"n": 9, "mean_difference": -0.6, "ci95": [-1.0, -0.2],
                                        "test": "t", "p_value": 0.01, "p_holm": 0.03,
                                        "regressed": True},
                    "completeness": {"n": 3, "mean_difference": None, "ci95": None,
                                     "status": "insufficient"}},
        "regressions": ["legal_soundness"],
        "regressed_items": [{"item_id": "q1", "before": "pass", "after": "fail"}, "q2"],
        "pass_rate": {"rate_a": 0.8, "rate_b": 0.6, "p_value": 0.2, "b": 2, "c": 0},
        "corrected": "raw"})
    by = {r.rubric: r for r in view.rubrics}
    assert by["legal_soundness"].p_adjusted == 0.03 and by["legal_soundness"].status == "regressed"
    assert by["completeness"].status == "insufficient" and by["completeness"].delta is None
    assert view.regressed_items == ["q1", "q2"] and view.extra == {"corrected": "raw"}


def test_report_refuses_what_is_not_two_runs(demo_home: Any, tmp_path: Path) -> None:
    out = str(tmp_path / "c.html")
    res = _cli("report", demo_home.run_id, demo_home.audit_ids[0], "--html", out)
    assert res.exit_code == 2 and "is an audit, not a run" in res.output and "fix:" in res.output
    res = _cli("report", demo_home.run_id, demo_home.run_b_id, "x", "--html", out)
    assert res.exit_code == 2 and "one id or two run ids" in res.output
    res = _cli("report", demo_home.run_id, "no-such-run", "--html", out)
    assert res.exit_code == 2 and "no-such-run" in res.output
    assert not Path(out).exists()
    store = demo_home.store()
    doc = build_comparison_report(store, demo_home.run_id, demo_home.run_b_id, threshold=0.01,
                                  alpha=0.5)
    store.close()
    assert "above -0.05 (pass rate) and -0.01 points (each rubric)" in render_html(doc)
