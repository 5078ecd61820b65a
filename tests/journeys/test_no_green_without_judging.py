"""No green without judging (issue 28, item 3): a run that judged nothing, a run with too many
INCONCLUSIVE items, and a doctor that never asked the judges whether they were there.

Defects, as a new user met them:

* an ensemble whose three judges point at a closed port: ``run --limit 2`` printed empty tables,
  "provider calls: 6 (cached 0, failed 6, retries 36)" and exited **0**, the run ``completed``;
* ``doctor`` said "all checks passed" for that ensemble beforehand;
* a run whose INCONCLUSIVE share was far above anything a team would sign exited 0.
"""

from __future__ import annotations

import json
import socket
import xml.etree.ElementTree as ET
from pathlib import Path

from legal_judge.dataset import load_dataset, sample_dataset_path

from .conftest import Journey, openai_stub

MODELS = ("llama-3.1-70b", "mistral-large", "qwen2.5-72b")


def _free_port() -> int:
    """A loopback port nothing listens on (the stub is started on it later, for the resume)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _ensemble(path: Path, url: str) -> Path:
    # One retry per call keeps the journey fast; the run's rule does not depend on the count.
    path.write_text('name = "dead"\nquorum = 2\n' + "".join(
        f'\n[[judges]]\nspec = "openai-compatible:{m}@{url}"\noptions = {{max_retries = 1}}\n'
        for m in MODELS), encoding="utf-8")
    return path


def _bench(journey: Journey, n: int) -> Path:
    bench = journey.cwd / "bench.jsonl"
    bench.write_text("".join(i.model_dump_json() + "\n"
                             for i in load_dataset(sample_dataset_path())[:n]), encoding="utf-8")
    return bench


def _status(journey: Journey, run_id: str) -> str:
    return str(journey.query("SELECT status FROM runs WHERE id = ?", run_id)[0][0])


def test_a_dead_ensemble_fails_is_named_by_doctor_and_resumes(journey: Journey) -> None:
    port = _free_port()
    url = f"http://127.0.0.1:{port}/v1"
    dead = _ensemble(journey.cwd / "dead.toml", url)
    bench = _bench(journey, 4)

    # doctor without --ping: it says it did not look (it said "all checks passed", full stop).
    step = journey("doctor", "--ensemble", str(dead))
    assert "reachability not checked" in step.out and "doctor --ping" in step.out

    # doctor --ping: exit 2, each of the three endpoints named with its error on one line.
    step = journey("doctor", "--ping", "--ensemble", str(dead), expect=2)
    lines = [ln for ln in step.out.splitlines() if ln.strip().startswith("problem  reach")]
    assert len(lines) == 3, step.describe()
    for model, line in zip(MODELS, lines, strict=True):
        assert model in line and f"{url} unreachable: connection refused" in line, line
    assert "3 problem(s) found." in step.out

    # The run: exit 3, status failed, one line saying why, the resume command; no "completed".
    step = journey("run", str(bench), "--ensemble", str(dead), "--limit", "2", "--run-id", "r-dead",
                   "--quiet", "--junit", "run.xml", "--summary-md", "run.md", expect=3)
    assert (f"run failed: no item could be judged: 6 of 6 calls failed: connection refused at "
            f"{url}") in step.out, step.describe()
    assert "legal-judge run --resume r-dead" in step.out
    assert "completed" not in step.text.lower()
    assert _status(journey, "r-dead") == "failed"
    summary = json.loads(journey.query("SELECT summary_json FROM runs WHERE id = ?",
                                       "r-dead")[0][0])
    assert summary["scored"] == 0 and summary["failure"]["external"] is True
    assert journey.query("SELECT DISTINCT status FROM verdicts WHERE run_id = 'r-dead'") == \
        [("error",)]
    # CI sees a failure, never a green suite.
    suite = ET.parse(journey.cwd / "run.xml").getroot().find("testsuite")
    assert suite is not None and int(suite.get("failures", "0")) >= 1
    assert "### FAILED" in (journey.cwd / "run.md").read_text(encoding="utf-8")

    # runs list / runs show: failed, with the resume command, and no "completed" for it.
    step = journey("runs", "list")
    assert "failed" in step.out and "legal-judge run --resume r-dead" in step.out
    assert "completed" not in step.out
    step = journey("runs", "show", "r-dead")
    assert "no item could be judged: 6 of 6 calls failed" in step.out
    assert "finish it with: legal-judge run --resume r-dead" in step.out
    assert "completed" not in step.out.lower()

    # The batch path shares RunState.finish: the same failure (these judges go online in it).
    step = journey("run", str(bench), "--ensemble", str(dead), "--limit", "1", "--batch",
                   "--run-id", "r-dead-batch", "--quiet", expect=3)
    assert "no item could be judged: 3 of 3 calls failed: connection refused" in step.out
    assert "legal-judge run --resume r-dead-batch --batch" in step.out
    assert _status(journey, "r-dead-batch") == "failed"

    # The server comes up: doctor --ping reaches all three, and the failed run resumes.
    with openai_stub("--port", str(port)):
        step = journey("doctor", "--ping", "--ensemble", str(dead))
        assert step.out.count(f"{url}: reachable: answered") == 3, step.describe()
        step = journey("run", "--resume", "r-dead", "--quiet")
    assert "Run r-dead — completed" in step.out
    assert "run gate: passed: inconclusive share 0.0% (0 of 2 items)" in step.out
    assert _status(journey, "r-dead") == "completed"
    assert journey.query("SELECT COUNT(*) FROM ensemble_results WHERE run_id = 'r-dead' AND "
                         "json_extract(result_json, '$.status') = 'ok'") == [(2,)]


def _flaky(path: Path) -> Path:
    # Judge a never answers valid JSON and b rarely does: the items where b fails too are
    # INCONCLUSIVE (fewer valid verdicts than the quorum of 2). 1 of the first 4 sample items.
    path.write_text(
        'name = "flaky"\nquorum = 2\n'
        '[[judges]]\nname = "a"\nspec = "simulated:demo-openai?invalid_json=1"\n'
        '[[judges]]\nname = "b"\nspec = "simulated:demo-google?invalid_json=0.8"\n'
        '[[judges]]\nname = "c"\nspec = "simulated:demo-mistral"\n', encoding="utf-8")
    return path


def test_an_inconclusive_share_over_the_policy_fails_the_run_gate(journey: Journey) -> None:
    flaky = _flaky(journey.cwd / "flaky.toml")
    bench = _bench(journey, 4)

    step = journey("run", str(bench), "--ensemble", str(flaky), "--run-id", "r-flaky", "--quiet",
                   "--junit", "gate.xml", "--summary-md", "gate.md", expect=1)
    line = ("run gate: FAILED: inconclusive share 25.0% (1 of 4 items) > policy limit 10.0% "
            "(run.max_inconclusive_share)")
    assert line in step.out, step.describe()
    assert "policy: bundled default (sha256 " in step.out
    # A gate, not a failed run: everything is stored and the run is completed.
    assert _status(journey, "r-flaky") == "completed"
    assert journey.query("SELECT COUNT(*) FROM ensemble_results WHERE run_id = 'r-flaky'") == [(4,)]
    root = ET.parse(journey.cwd / "gate.xml").getroot()
    props = {p.get("name"): p.get("value") for p in root.iter("property")}
    assert props["policy.run.max_inconclusive_share"] == "0.1"
    assert props["run gate"].startswith("FAILED: inconclusive share 25.0%")
    gate_case = [c for c in root.iter("testcase") if c.get("name") == "run gate"]
    assert gate_case and gate_case[0].find("failure") is not None
    assert "run gate" in (journey.cwd / "gate.md").read_text(encoding="utf-8")

    # Judge a never answered validly: the share alone is not the gate. Loosening only the share
    # still fails on it (exit 1: its answers are stored, a resume would reuse them).
    step = journey("run", str(bench), "--ensemble", str(flaky), "--quiet",
                   "--override", "max_inconclusive_share=0.3", expect=1)
    said = " ".join(step.out.split())
    assert ("run gate: FAILED: judge a returned a verdict on 0 of 4 items (0.0%) < policy minimum "
            "90% (run.min_judge_coverage)") in said, step.describe()
    assert "a: 4 INCONCLUSIVE; 4 item(s) were judged without it" in said
    assert "--resume" not in said

    # Explicit overrides loosen both on purpose, and say so (terminal and JUnit).
    step = journey("run", str(bench), "--ensemble", str(flaky), "--quiet", "--junit", "ov.xml",
                   "--override", "max_inconclusive_share=0.3", "--override",
                   "min_judge_coverage=0")
    assert "run gate: passed: inconclusive share 25.0% (1 of 4 items) <= policy limit 30.0%" \
        in step.out
    assert "policy override: run.min_judge_coverage=0.0 (policy 0.9)" in step.out
    assert "policy override: run.max_inconclusive_share=0.3 (policy 0.1)" in step.out
    props = {p.get("name"): p.get("value")
             for p in ET.parse(journey.cwd / "ov.xml").getroot().iter("property")}
    assert props["policy override run.max_inconclusive_share"] == \
        "run.max_inconclusive_share=0.3 (policy 0.1)"

    # A policy that cannot be read is refused before anything is paid for or stored.
    runs_before = journey.query("SELECT COUNT(*) FROM runs")
    step = journey("run", str(bench), "--ensemble", str(flaky), "--policy", "nope.toml", expect=2)
    assert "policy file nope.toml does not exist" in step.err
    assert journey.query("SELECT COUNT(*) FROM runs") == runs_before

    # A team's policy file in the working directory is found and named.
    (journey.cwd / "legal-judge.policy.toml").write_text("[run]\nmax_inconclusive_share = 0.0\n",
                                                         encoding="utf-8")
    step = journey("run", str(bench), "--ensemble", "demo", "--quiet", "--limit", "2")
    assert "run gate: passed: inconclusive share 0.0% (0 of 2 items) <= policy limit 0.0%" \
        in step.out
    assert "legal-judge.policy.toml (sha256 " in step.out

    # The demo stays green: the bundled sample has no INCONCLUSIVE item.
    step = journey("demo", "--quiet")
    assert "inconclusive items: 0" in step.out


def test_a_judge_down_all_run_fails_the_gate_and_a_resume_adds_its_verdicts(
        journey: Journey) -> None:
    """Defect: one judge of three refused on every call. Every item still met the quorum of 2,
    so the run was `completed`, "run gate: passed", exit 0: a "three-judge cross-provider" run
    judged by two, the dead judge named only by an `error` column. Each judge must now return a
    verdict on run.min_judge_coverage of the items; its calls failed, so exit 3 with the resume,
    which adds its verdicts once it is up."""
    port = _free_port()
    ensemble = journey.cwd / "one-dead.toml"
    ensemble.write_text(
        'name = "one-dead"\nquorum = 2\n'
        '[[judges]]\nname = "gpt"\nspec = "simulated:demo-openai"\n'
        '[[judges]]\nname = "gemini"\nspec = "simulated:demo-google"\n'
        '[[judges]]\nname = "llama"\n'
        f'spec = "openai-compatible:llama-3.1-70b@http://127.0.0.1:{port}/v1"\n'
        'options = {max_retries = 1}\n', encoding="utf-8")
    bench = _bench(journey, 3)
    step = journey("run", str(bench), "--ensemble", str(ensemble), "--run-id", "r-one",
                   "--quiet", "--json", expect=3)
    said = " ".join(step.err.split())
    assert ("run gate: FAILED: judge llama returned a verdict on 0 of 3 items (0.0%) < policy "
            "minimum 90% (run.min_judge_coverage)") in said, step.describe()
    assert "llama: 3 verdict(s) failed (connection refused at http://127.0.0.1:" in said
    assert "then `legal-judge run --resume r-one` judges the failed verdicts again" in said
    doc = json.loads(step.out)
    assert doc["gate"]["passed"] is False and doc["resume_command"] == "legal-judge run --resume r-one"
    assert [j["judge"] for j in doc["gate"]["judges"] if not j["met"]] == ["llama"]
    assert _status(journey, "r-one") == "completed"  # stored, a gate that failed

    with openai_stub("--port", str(port)):
        step = journey("run", "--resume", "r-one", "--quiet")
    assert ("run gate: passed: inconclusive share 0.0% (0 of 3 items) <= policy limit 10.0% "
            "(run.max_inconclusive_share); every judge returned a verdict on >= 90% of the items "
            "(run.min_judge_coverage)") in " ".join(step.out.split()), step.describe()
