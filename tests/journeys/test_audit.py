"""Journeys: auditing a judge before it gates anything (issue 16; issue 20, items 5 and 6).

Each step is a user's command through the real CLI; the comment on a step names the defect it
holds fixed (each was run against the code before the fix and failed there).
"""

from __future__ import annotations

import json
import signal
import time
from collections.abc import Iterator

import pytest

from .conftest import Journey, openai_stub

SMALL = ("--dimensions", "verbosity", "--pairs", "10", "--noise-pairs", "2")


@pytest.fixture
def constant_endpoint() -> Iterator[str]:
    """The project's OpenAI-compatible stub answering every request with the same verdict."""
    with openai_stub("--fixed-score", "3") as url:
        yield url


def test_a_judge_that_ignores_the_answer_is_not_certified_and_the_gate_stops_it(
        journey: Journey, constant_endpoint: str) -> None:
    report = journey.cwd / "rep.json"
    # Issue 16: the constant endpoint (every rubric 3, clean, pass) was "severity: none".
    run = journey("audit", "run", "--judge", f"openai-compatible:constant@{constant_endpoint}",
                  "--dimensions", "verbosity,authority", "--pairs", "12", "--noise-pairs", "4",
                  "--out", str(report))
    assert "verdict: insensitive" in run.out and "severity: none" not in run.out
    assert "does not discriminate" in " ".join(run.out.split())
    data = json.loads(report.read_text())
    assert data["extensions"]["verdict"] == "insensitive"
    assert data["overall_assessment"]["severity"] in ("high", "critical")
    # ... and `audit gate --max-severity low` passed it ("gate passed", exit 0).
    gate = journey("audit", "gate", str(report), "--max-severity", "low", expect=1)
    text = " ".join(gate.text.split())
    assert "gate passed" not in text and "the verdict is insensitive" in text
    assert "failed probes: " in text and "conclusion_flip" in text and "hedge_only" in text
    stored = journey.query("SELECT status, severity FROM audits")
    assert stored == [("complete", data["overall_assessment"]["severity"])]


def test_audit_needed_wants_every_ensemble_judge_audited_by_an_audit_that_judged(
        journey: Journey) -> None:
    # Issue 20.5: an audit that stopped at INSUFFICIENT_DATA before any judge call counted as
    # "audited", and only the first judge of the ensemble was checked.
    stopped = journey("audit", "run", "--judge", "demo", "--dimensions", "demographic",
                      "--pairs", "10", expect=1)
    assert "INSUFFICIENT_DATA" in stopped.text and "severity: none" not in stopped.text
    # Every judge of the ensemble (issue 33), each stopped the same way.
    assert journey.query("SELECT status FROM audits") == [("INSUFFICIENT_DATA",)] * 3
    assert journey.query("SELECT COUNT(*) FROM judge_calls") == [(0,)]
    needed = journey("audit", "needed", "--judge", "demo", expect=1)
    text = " ".join(needed.text.split())
    assert "3 of 3 judge(s) have no audit that judged something" in text
    assert "judged nothing" in text
    # The fix audits every judge, not only the first one (issue 33: which `audit run --judge
    # demo` now does by itself).
    assert "fix: legal-judge audit run --judge demo" in text and "--all-judges" not in text
    journey("audit", "run", "--judge", "demo", *SMALL, "--probes", "hedge_only",
            "--probe-pairs", "10")
    done = journey("audit", "needed", "--judge", "demo")
    assert done.out.count("audited by") == 3


def test_drift_and_diff_never_compare_unrelated_judges(journey: Journey) -> None:
    a, b = journey.cwd / "openai.json", journey.cwd / "fair.json"
    journey("audit", "run", "--judge", "simulated:demo-openai", *SMALL, "--out", str(a))
    journey("audit", "run", "--judge", "simulated:fair", *SMALL, "--out", str(b))
    # Issue 20.6: `audit diff` of two different judges printed "resolved".
    refused = journey("audit", "diff", str(a), str(b), expect=2)
    text = " ".join(refused.text.split())
    assert "not comparable" in text and "simulated:demo-openai" in text
    assert "simulated:fair" in text and "--force" in text
    forced = journey("audit", "diff", str(a), str(b), "--force")
    assert "compared anyway" in forced.text
    # ... and the report's "drift against the prior audit" picked another model's audit.
    fair_id = json.loads(b.read_text())["extensions"]["audit_id"]
    openai_id = json.loads(a.read_text())["extensions"]["audit_id"]
    html = journey.cwd / "fair.html"
    journey("report", fair_id, "--html", str(html))
    page = html.read_text()
    assert openai_id not in page
    assert "No prior audit of this base judge (simulated:fair" in page


def test_a_gate_on_a_missing_report_file_names_the_file(journey: Journey) -> None:
    # It said "no audit 'rep.json' in STORE", as if a file name were an audit id.
    missing = journey("audit", "gate", "reports/rep.json", expect=2)
    assert "reports/rep.json: no such file" in missing.err
    assert "audit list" in missing.err
    unknown = journey("audit", "gate", "audit-20990101T000000-abcdef", expect=2)
    assert "no audit 'audit-20990101T000000-abcdef'" in unknown.err


def test_only_a_simulated_judge_gets_the_simulated_notice(journey: Journey) -> None:
    """The audit report's "SIMULATED JUDGE ... Not a judge of record" banner was given to any
    judge whose spec contained the word (a real endpoint serving a model named
    "simulated-review"); only the simulator's prefix says so now, as for runs and debias."""
    with openai_stub("--fixed-score", "3") as url:
        journey("audit", "run", "--judge", f"openai-compatible:simulated-review@{url}", *SMALL,
                "--out", "real.json", expect=(0, 1))
    real = json.loads((journey.cwd / "real.json").read_text())
    assert "notice" not in real["extensions"], real["extensions"]
    journey("audit", "run", "--judge", "simulated:demo-openai", *SMALL, "--out", "sim.json",
            expect=(0, 1))
    sim = json.loads((journey.cwd / "sim.json").read_text())
    assert sim["extensions"]["notice"].startswith("simulated judge")


def test_settings_the_statistics_cannot_use_stop_the_audit_before_it_starts(
        journey: Journey) -> None:
    """Walk of the audit area: `audit run --significance 0.6` judged every pair and then ended
    in "internal error: ValueError: `confidence_level` must be a number between 0 and 1" (exit
    70); `--disparity-threshold 0` judged every pair and then said "the equivalence margin must
    be positive" without naming the flag. Each left an `interrupted` audit whose `--resume`
    failed the same way. And the equivalence interval was called "90% CI" at any significance
    (at 0.5 it was the mean twice)."""
    small = ("--judge", "simulated:fair", *SMALL, "--probes", "hedge_only")
    high = journey("audit", "run", *small, "--significance", "0.6", expect=2)
    assert "0.6 is above 0.5" in high.err and "internal error" not in high.err
    zero = journey("audit", "run", *small, "--disparity-threshold", "0", expect=2)
    assert "--equivalence-margin" in " ".join(zero.err.split())
    assert "interrupted" not in journey("audit", "list").text
    assert not journey.store_file.exists() or journey.query("SELECT COUNT(*) FROM audits") == [(0,)]
    run = journey("audit", "run", *small, "--significance", "0.1")
    assert "paired TOST, 80% CI inside the margin" in " ".join(run.out.split())


def test_an_interrupted_audit_resumed_as_printed_writes_its_report_file(
        journey: Journey) -> None:
    """Walk of the audit area: `audit run ... --out rep.json`, Ctrl-C, then the resume command
    it printed (`legal-judge audit run --resume ID`, no --out) finished the audit without
    writing rep.json, so the CI's next step, `audit gate rep.json`, said "no such file"."""
    with openai_stub("--latency-ms", "150") as url:
        proc = journey.spawn("audit", "run", "--judge", f"openai-compatible:slow@{url}", *SMALL,
                             "--probes", "hedge_only", "--concurrency", "2", "--out", "rep.json")
        deadline = time.time() + 120
        while time.time() < deadline and proc.poll() is None:
            try:
                if journey.query("SELECT COUNT(*) FROM judge_calls")[0][0] >= 4:
                    break
            except Exception:  # noqa: BLE001 - the store is being created
                pass
            time.sleep(0.1)
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=60)
        assert proc.returncode == 130, err
        resume = " ".join(err.split()).split("(if it stops: ")[1].split(")")[0]
        assert not (journey.cwd / "rep.json").exists()
        elsewhere = journey.cwd / "later"
        elsewhere.mkdir()
        done = journey(*resume.removeprefix("legal-judge ").split(), cwd=elsewhere)
    assert f"wrote {journey.cwd / 'rep.json'}" in " ".join(done.out.split())
    journey("audit", "gate", "rep.json", expect=1)  # the report is there to be gated


def test_a_traffic_audit_by_an_attribute_no_output_has_names_the_ones_they_have(
        journey: Journey) -> None:
    """Walk of the audit area: `audit traffic --attribute metadata.region` on an export whose
    rows carry metadata.client_region exited 1 ("fewer than two groups ... have 50 or more
    scores", fix "widen --since"): a misspelt attribute read as a failed audit."""
    rows = [{"item_id": f"i{i}", "score": 3.0 + (i % 3) * 0.5,
             "metadata": {"client_region": ("eu", "us")[i % 2]}} for i in range(120)]
    (journey.cwd / "scores.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    wrong = journey("audit", "traffic", "--input", "scores.jsonl", "--attribute",
                    "metadata.region", expect=2)
    text = " ".join(wrong.err.split())
    assert "--attribute metadata.region: none of the 120 scored outputs has it" in text
    assert "fix: use an attribute the outputs carry: metadata.client_region" in text
    journey("audit", "traffic", "--input", "scores.jsonl", "--attribute",
            "metadata.client_region")


def test_a_diff_says_at_which_significance_a_bias_got_worse(journey: Journey) -> None:
    """Walk of the audit area: `audit diff` of a re-audit made with `--significance 0.5` showed
    "worse" for a change of +0.01 in effect, with nothing saying that one-sided p = 0.49 counted
    as significant there."""
    def report(diffs: list[float], significance: float) -> dict[str, object]:
        pairs = [{"variant_a_input": f"a{i}", "variant_b_input": f"b{i}", "variant_a_score": d,
                  "variant_b_score": 0.0, "difference": d} for i, d in enumerate(diffs)]
        return {"audit_metadata": {"significance_threshold": significance},
                "dimension_results": [{"dimension": "formatting", "flagged": False,
                                       "mean_difference": sum(diffs) / len(diffs),
                                       "effect_size": -0.1, "test_pairs": pairs}]}

    before = [-0.5, 0.0, -0.5, 0.5, 0.0, -0.5, 0.0, 0.0, -0.5, 0.5]
    after = [-0.5, 0.0, -0.5, 0.5, 0.0, -0.5, 0.0, 0.0, -0.5, 0.0]
    (journey.cwd / "old.json").write_text(json.dumps(report(before, 0.05)))
    (journey.cwd / "new.json").write_text(json.dumps(report(after, 0.5)))
    diff = journey("audit", "diff", "old.json", "new.json", "--force")
    text = " ".join(diff.out.split())
    assert "worse" in text
    assert "one-sided p below the new audit's significance 0.5 (formatting p = " in text
