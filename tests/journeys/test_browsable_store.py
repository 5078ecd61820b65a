"""Journeys: a store a person can browse and filter (issue 33, Build 7 and 8).

A team names the release a run judges and finds its traces in Langfuse by tag; a lead reads the
calibration, the audit and the debias experiment in HTML, then publishes the whole store as a
static site. The comment on each step names the defect it holds fixed (each failed before).
"""

from __future__ import annotations

import csv
import json
import re
import sys
from pathlib import Path

from legal_judge.dataset import sample_dataset_path

from .conftest import Journey

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "sync"))

from standin import LangfuseStandin  # noqa: E402

RUBRICS = ("legal_soundness", "citation_quality", "jurisdiction_awareness", "completeness",
           "hallucination")
TAGS = "langfuse.trace.tags"


def _flat(text: str) -> str:
    return " ".join(text.split())


def test_a_release_is_found_in_langfuse_by_its_tags(journey: Journey,
                                                    langfuse: LangfuseStandin) -> None:
    bench = str(sample_dataset_path())
    # A release name that cannot be a tag is refused before anything exists.
    bad = journey("run", bench, "--ensemble", "demo", "--limit", "3", "--release", "v 2",
                  "--quiet", expect=2)
    assert "--release 'v 2' is not a release name" in _flat(bad.text)
    assert "without spaces" in _flat(bad.text)
    assert not journey.store_file.exists() or journey.query("SELECT COUNT(*) FROM runs")[0][0] == 0

    # Defect: simulated runs carried no tag, and no trace named its system under test or
    # release, so the Langfuse UI could not filter a release's traces.
    ran = journey("run", bench, "--ensemble", "demo", "--limit", "3", "--release", "v2.3.1",
                  "--run-id", "rel", "--quiet", expect=(0, 1))
    assert "release: v2.3.1" in ran.out
    config = json.loads(journey.query("SELECT config_json FROM runs WHERE id = 'rel'")[0][0])
    assert config["release"] == "v2.3.1"
    items = [json.loads(r[0]) for r in journey.query(
        "SELECT item_json FROM items WHERE run_id = 'rel' ORDER BY position")]
    traces: dict[str, set[str]] = {}
    for span in langfuse.state.observations.values():
        tags = span["attributes"].get(TAGS)
        if tags is not None:
            traces.setdefault(span["trace_id"], set()).update(
                json.loads(tags) if isinstance(tags, str) else tags)
    assert len(traces) == len(items) == 3
    assert {i["system_under_test"] for i in items} == {
        t.split(":", 1)[1] for tags in traces.values() for t in tags if t.startswith("sut:")}
    assert all({"simulated", "release:v2.3.1"} <= tags for tags in traces.values())

    # A resumed run keeps the release it was started with.
    again = journey("run", "--resume", "rel", "--release", "v3", expect=2)
    assert "a resumed run keeps the release it was started with" in _flat(again.text)
    assert "drop --release to finish run rel" in _flat(again.text)


def _fill(sheet: Path, out: Path) -> None:
    """One lawyer scores the sampled answers with the dataset's expected scores."""
    meta = {r["id"]: r["metadata"] for r in map(json.loads, sample_dataset_path().read_text(
        "utf-8").splitlines()) if r}
    with sheet.open(encoding="utf-8-sig", newline="") as fh:
        reader = csv.DictReader(fh)
        rows, columns = list(reader), list(reader.fieldnames or [])
    for row in rows:
        expected = meta[row["item_id"]]["expected_scores"]
        row.update({r: str(expected[r]) for r in RUBRICS})
        row.update(annotator="lawyer_a", labeled_at="2026-11-20")
    with out.open("w", newline="", encoding="utf-8") as fh:
        writer = csv.DictWriter(fh, fieldnames=columns)
        writer.writeheader()
        writer.writerows(rows)


def test_a_lead_reads_the_reports_then_publishes_the_store(journey: Journey) -> None:
    journey("demo", "--quiet")
    run_id = journey.query("SELECT id FROM runs WHERE kind = 'run'")[0][0]
    journey("calibrate", "sample", run_id, "--n", "30", "--seed", "7", "--out", "sheet.csv")
    _fill(journey.cwd / "sheet.csv", journey.cwd / "filled.csv")
    journey("calibrate", "import", "filled.csv", "--run", run_id)
    cmp = journey("calibrate", "compare", run_id, "--quarter", "2026-Q4", expect=(0, 1))
    cal_id = re.search(r"calibration id: (\S+)", cmp.out)[1]  # type: ignore[index]
    false_passes = json.loads(journey.query("SELECT report_json FROM calibrations WHERE id = ?",
                                            cal_id)[0][0])["pass_fail"]["ensemble"][
        "judge_pass_human_fail"]
    assert false_passes > 0

    # Defect: the "judge passed, lawyers failed" cell had the colour of the agreement cells.
    journey("report", cal_id, "--html", "cal.html")
    cal = (journey.cwd / "cal.html").read_text("utf-8")
    assert re.search(r'<g id="[a-z0-9-]+-harmful">', cal) and ">harmful<" in cal
    assert f'<td class="num harmful">{false_passes}</td>' in cal

    # Defect: the audit's grey noise band covered flagged effects ("within noise").
    journey("audit", "run", "--judge", "simulated:demo-openai", "--dimensions", "verbosity",
            "--pairs", "10", "--noise-pairs", "2", "--probes", "hedge_only", "--probe-pairs", "10",
            expect=(0, 1))
    audit_id = journey.query("SELECT id FROM audits")[0][0]
    journey("report", audit_id, "--html", "audit.html")
    audit = (journey.cwd / "audit.html").read_text("utf-8")
    assert "#bbbbbb" not in audit and 'id="effect-per-dimension-with-95-ci-ci-0"' in audit
    assert 'id="effect-per-dimension-with-95-ci-margin"' in audit

    # Defect: the debias overview was judge_id hashes, plain sorted into the middle, and
    # percentage points written as "%".
    journey("debias", "compare", "--judge", "simulated:demo-openai", "--modes", "self,plain",
            "--biases", "position", "--repeats", "1")
    dx = journey.query("SELECT id FROM debias_experiments")[0][0]
    journey("report", dx, "--html", "dx.html")
    debias = (journey.cwd / "dx.html").read_text("utf-8")
    assert "<dt>modes</dt><dd>plain, self</dd>" in debias and "judge_id (" not in debias
    assert re.search(r'<td class="num">[+-]\d+\.\d pts</td>', debias)
    assert not re.search(r'<td class="num">[+-]\d+\.\d%</td>', debias)

    # Defect: there was no page that lists everything in a store.
    site = journey("report", "--site", "site")
    n = 1 + 1 + 1 + 1  # the demo run, the calibration, the audit, the experiment
    assert f"site of {n} entries: {n} reports written" in _flat(site.out)
    index = (journey.cwd / "site" / "index.html").read_text("utf-8")
    hrefs = re.findall(r'<a href="([^"]+)">', index)
    assert sorted(hrefs) == sorted([f"runs/{run_id}.html", f"calibrations/{cal_id}.html",
                                    f"audits/{audit_id}.html", f"experiments/{dx}.html"])
    assert all((journey.cwd / "site" / h).is_file() for h in hrefs)
    assert "sample-" not in index  # the calibration sample is no run of its own
    # --site takes the whole store: an id with it, or no id without it, is the user's to fix.
    both = journey("report", run_id, "--site", "site", expect=2)
    assert "--site writes every report of the store" in _flat(both.text)
    none = journey("report", expect=2)
    assert "report needs an ID (or --site DIR for the whole store)" in _flat(none.text)
