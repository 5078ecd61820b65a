"""Journeys: where users live. A lead reads the items of a run and the comparison of two runs; a
team runs a Langfuse dataset twice and compares the dataset runs in Langfuse; a team adds its own
rubric. Each step is a defect of issue 17 fixed (named in its comment)."""

from __future__ import annotations

import json
import re
import shutil
import sys
from pathlib import Path

from .conftest import Journey

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "sync"))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "reports"))

from report_fixtures import REGRESSED, candidate_dataset  # noqa: E402
from standin import LangfuseStandin  # noqa: E402

TEAM = Path(__file__).resolve().parents[1] / "data" / "team_assets"
ROW = re.compile(r'<tr class="item-row [a-z]+" id="item-\d+" data-detail="detail-\d+" '
                 r'data-item="(?P<item>[^"]+)" data-categories="(?P<cats>[^"]*)">')


def _bench(folder: Path, n: int = 3) -> Path:
    path = folder / "bench.jsonl"
    rows = [{"id": f"b{i}", "prompt": f"Question {i}: can a verbal lease of a flat be valid?",
             "response": f"Answer {i}: yes, for up to three years (s. 54(2) LPA 1925).",
             "jurisdiction": "GB-EAW", "expected_signals": ["s. 54(2)"]} for i in range(n)]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def test_a_lead_reads_the_items_of_a_run_and_the_comparison_of_two(journey: Journey) -> None:
    demo = journey("demo", "--quiet")
    # Defect: the run summary never said where the results were kept.
    assert f"store: {journey.store_file}" in " ".join(demo.out.split())
    run_a = journey.query("SELECT id FROM runs")[0][0]
    summary = json.loads(journey.query("SELECT summary_json FROM runs")[0][0])

    # Defect: the "passed but should fail" items of the demo were counted, never listed.
    journey("report", run_a, "--html", "run.html")
    html = (journey.cwd / "run.html").read_text(encoding="utf-8")
    rows = {m["item"]: m["cats"].split() for m in ROW.finditer(html)}
    assert len(rows) == summary["items"] == 57
    should_fail = [i for i, cats in rows.items() if "passed_should_fail" in cats]
    # 13 since issues 29 and 32 (19 before): rule 4 fails four hedging-only answers the lawyers
    # fail, and the citation checker overrides eu-002 (GDPR art. 183) and us-fed-003 (a known
    # fabrication) to fail.
    assert len(should_fail) == summary["expected_agreement"]["false_pass"] == 13
    assert 'data-filter="passed_should_fail"' in html and 'Passed but should fail <span ' \
        'class="count">13</span>' in html

    # Defect: compare, the release gate, had no report at all.
    journey("run", str(candidate_dataset(journey.cwd)), "--ensemble", "demo", "--quiet")
    run_b = next(r[0] for r in journey.query("SELECT id FROM runs") if r[0] != run_a)
    step = journey("report", run_a, run_b, "--html", "compare.html", "--md", "compare.md")
    assert f"comparison report {run_a} vs {run_b}" in step.out and "wrote compare.html" in step.out
    text = (journey.cwd / "compare.html").read_text(encoding="utf-8")
    regressed = text.split('id="regressed"', 1)[1].split("<section", 1)[0]
    assert all(f"<h3>{i}</h3>" in regressed for i in REGRESSED)
    assert "McNemar" in text and "Both verdicts" in regressed
    bad = journey("report", run_a, "no-such-run", "--html", "x.html", expect=2)
    assert "no-such-run" in bad.text and not (journey.cwd / "x.html").exists()


def test_two_runs_over_a_langfuse_dataset_are_two_dataset_runs(
        journey: Journey, langfuse: LangfuseStandin) -> None:
    bench = _bench(journey.cwd)
    journey("datasets", "push", str(bench), "--name", "gold-gb")
    # Defect: a run over a Langfuse dataset was not linked as a dataset run, so Langfuse's
    # experiment comparison stayed empty.
    journey("run", "langfuse:gold-gb", "--ensemble", "demo", "--quiet")
    journey("run", "langfuse:gold-gb", "--ensemble", "demo", "--quiet")
    run_ids = sorted(r[0] for r in journey.query("SELECT id FROM runs"))
    st = langfuse.state
    assert not st.rejected, st.rejected
    assert sorted(e["name"] for e in st.experiments.values()) == run_ids
    dataset_items = {i["metadata"]["item_id"]: i["id"] for i in st.dataset_items.values()}
    for exp in st.experiments.values():
        linked = {i["experimentItemId"] for (e, _), i in st.experiment_items.items()
                  if e == exp["id"]}
        assert linked == set(dataset_items.values())
    # Defect: judge and ensemble scores shared names, so Langfuse charts mixed them.
    names = {(s["name"], bool(s.get("observationId"))) for s in st.scores.values()}
    assert ("legal_soundness", False) in names and ("judge.legal_soundness", True) in names
    assert ("legal_soundness", True) not in names


def test_a_team_adds_its_own_rubric(journey: Journey, langfuse: LangfuseStandin) -> None:
    assets = journey.cwd / "team-assets"
    shutil.copytree(TEAM / "rubrics", assets / "rubrics")
    shutil.copy(TEAM / "team.toml", journey.cwd / "team.toml")
    # Defect: adding a rubric meant copying the whole bundled tree; now a folder of one's own.
    journey.env["LEGAL_JUDGE_ASSETS"] = str(assets)
    listed = journey("prompts", "list")
    assert "plain_language" in listed.out and "team_set" in listed.out
    journey("prompts", "push")
    assert "legal-judge/rubric/plain_language" in langfuse.state.prompts
    run = journey("run", str(_bench(journey.cwd)), "--ensemble", "team.toml", "--quiet")
    assert "plain_language" in run.out
    st = langfuse.state
    cfg = {c["name"]: c["id"] for c in st.score_configs.values()}
    synced = {(s["name"], s.get("configId")) for s in st.scores.values()}
    assert ("plain_language", cfg["plain_language"]) in synced
    assert ("judge.plain_language", cfg["judge.plain_language"]) in synced
    assert not st.rejected
    wrong = journey("prompts", "list", env={"LEGAL_JUDGE_ASSETS": str(journey.cwd / "nope")},
                    expect=2)
    assert "does not exist" in wrong.text and "fix:" in wrong.text
