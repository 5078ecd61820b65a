"""Journey: a CI script reads every decision as JSON (issue 33, Build 3).

`run`, `doctor`, `audit run`, `audit gate`, `audit needed` and `prompts list` had no `--json`; a
gate's JSON went to stdout mixed with text. Now stdout is one JSON document (text goes to stderr)
and the exit code is the one without `--json`: a failed gate exits 1 and its document says why.
"""

from __future__ import annotations

import json

from legal_judge.dataset import sample_dataset_path

from .conftest import Journey
from .test_no_green_without_judging import _bench, _flaky


def _doc(step_out: str) -> dict:
    """The one JSON document stdout holds (json.loads refuses anything before or after it)."""
    doc = json.loads(step_out)
    assert isinstance(doc, dict)
    return doc


def test_a_ci_script_reads_each_decision_as_json(journey: Journey) -> None:
    # validate and run: the run's figures, its [run] gate and the policy, in one document.
    valid = _doc(journey("validate", str(sample_dataset_path()), "--json").out)
    assert valid["rows"] == 57 and valid["valid"] is True
    flaky = _flaky(journey.cwd / "flaky.toml")
    bench = _bench(journey, 4)
    step = journey("run", str(bench), "--ensemble", str(flaky), "--run-id", "r-json", "--json",
                   expect=1)
    run = _doc(step.out)
    assert run["id"] == "r-json" and run["status"] == "completed"
    gate = run["gate"]
    assert {k: gate[k] for k in ("passed", "inconclusive", "items", "share",
                                 "max_inconclusive_share", "min_judge_coverage")} == {
        "passed": False, "inconclusive": 1, "items": 4, "share": 0.25,
        "max_inconclusive_share": 0.1, "min_judge_coverage": 0.9}
    # judge a never answered validly: it is named as the judge short of its coverage
    assert [(j["judge"], j["verdicts"], j["met"]) for j in gate["judges"]] == [
        ("a", 0, False), ("b", 3, False), ("c", 4, True)]
    assert run["policy"]["section"] == "run" and len(run["policy"]["sha256"]) == 64
    assert run["summary"]["items"] == 4 and len(run["summary"]["inconclusive"]) == 1
    # The text a person reads went to stderr, the progress bar nowhere.
    assert "run gate: FAILED: inconclusive share 25.0%" in step.err
    assert "judging" not in step.err
    assert journey.query("SELECT status FROM runs WHERE id = 'r-json'") == [("completed",)]

    # doctor: every check, and the problems it exits 2 for (no keys for the default ensemble).
    doctor = journey("doctor", "--json", expect=2)
    checks = _doc(doctor.out)
    assert checks["passed"] is False and checks["problems"] >= 1
    assert any(c["status"] == "problem" and c["fix"] for c in checks["checks"])

    # audit run with the gate: the report and the gate's decision; the simulated judge fails it.
    step = journey("audit", "run", "--judge", "simulated:demo-openai", "--pairs", "12",
                   "--dimensions", "verbosity", "--probe-pairs", "12", "--noise-pairs", "4",
                   "--max-severity", "low", "--json", expect=1)
    audited = _doc(step.out)["audits"][0]
    assert audited["status"] == "complete" and audited["report"]["extensions"]["judge_id"]
    assert audited["gate"]["passed"] is False and audited["gate"]["simulated"] is True
    assert audited["gate"]["policy"]["section"] == "certification"
    stored = journey.query("SELECT id, status FROM audits")
    assert stored == [(audited["audit_id"], "complete")]

    # audit gate: the same decision from the stored audit, exit 1, the JSON alone on stdout.
    gate = journey("audit", "gate", audited["audit_id"], "--json", expect=1)
    assert _doc(gate.out)["passed"] is False
    assert "policy: bundled default (sha256 " in gate.err

    # audit needed: the ensemble's two other judges have no audit; the fix audits them all.
    needed = journey("audit", "needed", "--judge", "demo", "--json", expect=1)
    cover = _doc(needed.out)
    assert (cover["judges"], cover["missing"]) == (3, 2) and cover["passed"] is False
    assert cover["fix"] == "legal-judge audit run --judge demo"  # every judge of an ensemble
    assert [c["audit_id"] for c in cover["coverage"]].count(audited["audit_id"]) == 1

    # prompts list: the catalogue's sha256 of each asset (prompts diff shows the same ones).
    listed = json.loads(journey("prompts", "list", "--json").out)
    assert {r["kind"] for r in listed} >= {"rubric", "template"}
    assert all(len(r["sha256"]) == 64 for r in listed)


def test_prompts_list_and_diff_show_one_sha256_per_asset(journey: Journey) -> None:
    """`prompts list` showed the asset file's sha256 and `prompts diff` the composed Langfuse
    prompt's: two hashes for one rubric. Both now show the catalogue's."""
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "sync"))
    from standin import PUBLIC_KEY, SECRET_KEY, LangfuseStandin

    server = LangfuseStandin().start()
    journey.env.update({"LANGFUSE_PUBLIC_KEY": PUBLIC_KEY, "LANGFUSE_SECRET_KEY": SECRET_KEY,
                        "LANGFUSE_BASE_URL": server.base_url, "LANGFUSE_TIMEOUT": "5"})
    try:
        listed = json.loads(journey("prompts", "list", "--json").out)
        journey("prompts", "push")
        diff = journey("prompts", "diff")
        assert "same" in diff.out and "changed" not in diff.out, diff.describe()
        rows = json.loads(journey("prompts", "diff", "--json").out)
        stored = server.state.prompts
    finally:
        server.stop()
    by_asset = {f"{r['name']}@{r['version']}": r["sha256"] for r in listed}
    rubric = next(r for r in rows if r["kind"] == "rubric")
    assert rubric["sha256"] == by_asset[rubric["asset"]] == rubric["remote_sha256"]
    assert all(r["sha256"] == by_asset[r["asset"]] for r in rows)
    # What Langfuse holds names the same asset hash.
    config = stored[rubric["name"]][-1]["config"]
    assert config["legal_judge"]["asset_sha256"] == rubric["sha256"]
