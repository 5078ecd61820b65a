"""``--junit`` and ``--summary-md`` on ``run``, ``compare`` and ``audit gate``; ``$GITHUB_STEP_SUMMARY``.

Every JUnit file is parsed and checked against the common JUnit schema (``junit.xsd``).
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from click.testing import CliRunner, Result
from lxml import etree

from legal_judge.benchmark.ensemble_config import load_ensemble_config
from legal_judge.benchmark.runner import run_benchmark
from legal_judge.cli import cli
from legal_judge.dataset import load_dataset, sample_dataset_path
from legal_judge.reports.ci import CiCase, CiSuite
from legal_judge.reports.junit import junit_xml
from legal_judge.reports.summary_md import summary_markdown
from legal_judge.store import Store

from .junit_check import XSD, cases, validated

SAMPLE = str(sample_dataset_path())
FLAKY = """name = "flaky"
quorum = 3
[[judges]]
name = "broken"
spec = "simulated:demo-google?invalid_json=1"
[[judges]]
spec = "simulated:demo-openai"
[[judges]]
spec = "simulated:demo-mistral"
"""


def _cli(*args: str, env: dict[str, str] | None = None) -> Result:
    return CliRunner().invoke(cli, list(args), env={"COLUMNS": "80", **(env or {})})


def test_every_outcome_gives_schema_valid_junit_even_with_control_characters(tmp_path: Path) -> None:
    suite = CiSuite(kind="run", name="s", title="t", facts=[("run", "r\x01 <&>")], notes=["n"],
                    cases=[CiCase("ok", "passed", "pass", "details"),
                           CiCase("bad\x00id <script>", "failed", "fail: x < 1 & y", "why\x0b"),
                           CiCase("q", "inconclusive", "INCONCLUSIVE: 1 valid verdict(s)"),
                           CiCase("later", "skipped", "not run")])
    path = tmp_path / "j.xml"
    path.write_text(junit_xml(suite), encoding="utf-8")
    root = validated(path)
    by_name = cases(root)
    assert by_name["bad\ufffdid <script>"].find("failure").get("type") == "fail"  # type: ignore[union-attr]
    assert by_name["q"].find("failure").get("type") == "inconclusive"  # type: ignore[union-attr]
    assert by_name["later"].find("skipped") is not None
    assert root.get("failures") == "2" and root.get("skipped") == "1"
    # The schema is not vacuous: a test case without a name is refused.
    broken = tmp_path / "broken.xml"
    broken.write_text(path.read_text(encoding="utf-8").replace('name="ok" ', ""), encoding="utf-8")
    assert not etree.XMLSchema(etree.parse(str(XSD))).validate(etree.parse(str(broken)))
    md = summary_markdown(suite)
    assert md.startswith("### FAILED: t") and "1 inconclusive" in md
    assert "| FAIL | bad\ufffdid &lt;script> | fail: x &lt; 1 & y |" in md


def test_run_junit_summary_and_github_step_summary(tmp_path: Path) -> None:
    flaky = tmp_path / "flaky.toml"
    flaky.write_text(FLAKY, encoding="utf-8")
    junit, md, gh = tmp_path / "ci" / "run.xml", tmp_path / "run.md", tmp_path / "gh.md"
    gh.write_text("earlier step\n", encoding="utf-8")
    res = _cli("run", SAMPLE, "--ensemble", "demo", "--ids", "us-fed-001,us-fed-004", "--quiet",
               "--junit", str(junit), "--summary-md", str(md), env={"GITHUB_STEP_SUMMARY": str(gh)})
    assert res.exit_code == 0, res.output
    # One case per item and the [run] gate's (issue 28: the policy decides when a run is green).
    assert f"wrote {junit} (JUnit, 3 testcases)" in res.output
    assert f"wrote {md} (Markdown, 3 checks)" in res.output
    assert f"appended the summary to $GITHUB_STEP_SUMMARY ({gh})" in res.output
    by_name = cases(validated(junit))
    assert set(by_name) == {"us-fed-001", "us-fed-004", "run gate"}
    assert by_name["run gate"].find("failure") is None
    props = {p.get("name"): p.get("value") for p in validated(junit).iter("property")}
    assert props["policy.run.max_inconclusive_share"] == "0.1"
    assert by_name["us-fed-001"].find("failure") is None
    failure = by_name["us-fed-004"].find("failure")
    assert failure is not None and failure.get("type") == "fail"
    assert "hallucination = hallucinated" in (failure.get("message") or "")
    assert "gpt-4o (simulated): ok, fail" in (failure.text or "")
    text = md.read_text(encoding="utf-8")
    assert "| FAIL | us-fed-004 |" in text and "| pass | us-fed-001 |" in text
    assert gh.read_text(encoding="utf-8") == "earlier step\n" + text + "\n"
    # An item without quorum is INCONCLUSIVE, a failure in CI, with the reason; as the run's
    # only item it leaves the run with nothing scored: failed (exit 1), with its own case.
    junit2 = tmp_path / "flaky.xml"
    res = _cli("run", SAMPLE, "--ensemble", str(flaky), "--ids", "us-fed-001", "--quiet",
               "--junit", str(junit2))
    assert res.exit_code == 1, res.output
    got = cases(validated(junit2))
    assert set(got) == {"us-fed-001", "run"}
    run_failure = got["run"].find("failure")
    assert run_failure is not None
    assert "no item could be judged: 1 of 1 items INCONCLUSIVE" in (run_failure.get("message")
                                                                      or "")
    failure = got["us-fed-001"].find("failure")
    assert failure is not None and failure.get("type") == "inconclusive"
    assert "quorum is 3" in (failure.get("message") or "") and "broken: inconclusive" in (
        failure.get("message") or "")


def _two_releases() -> tuple[str, str]:
    items = [i for i in load_dataset(sample_dataset_path())
             if i.metadata.get("answer_kind") in ("correct", "incomplete")]
    worse = [i.model_copy(update={"response": "It depends. You should consult a lawyer."})
             for i in items]
    store = Store()
    config = load_ensemble_config("demo").model_copy(update={"run_checks": False})
    a = asyncio.run(run_benchmark(items, config, store=store, run_id="release-1")).run_id
    b = asyncio.run(run_benchmark(worse, config, store=store, run_id="release-2")).run_id
    return a, b


def test_compare_junit_has_a_case_per_endpoint_and_the_flip_guard(tmp_path: Path) -> None:
    a, b = _two_releases()
    junit, md = tmp_path / "cmp.xml", tmp_path / "cmp.md"
    res = _cli("compare", a, b, "--fail-on-regression", "--junit", str(junit),
               "--summary-md", str(md))
    assert res.exit_code == 1, res.output  # the gate still decides the exit code
    assert f"wrote {junit} (JUnit, 8 testcases)" in res.output
    root = validated(junit)
    by_name = cases(root)
    assert set(by_name) == {"rubric citation_quality", "rubric completeness",
                            "rubric jurisdiction_awareness", "rubric language_quality",
                            "rubric legal_soundness", "pass rate", "flip guard (max_flips 0)",
                            "requirement: items scored"}
    assert by_name["requirement: items scored"].find("failure") is None
    # language_quality is scored on few items: cannot tell, a failure under the bundled policy
    lq = by_name["rubric language_quality"].find("failure")
    assert lq is not None and (lq.get("message") or "").startswith("cannot tell")
    soundness = by_name["rubric legal_soundness"].find("failure")
    assert soundness is not None and "regressed: B-A -" in (soundness.get("message") or "")
    assert "margin -0.25" in (soundness.get("message") or "")
    pass_rate = by_name["pass rate"].find("failure")
    assert pass_rate is not None and "margin -0.05" in (pass_rate.get("message") or "")
    assert by_name["flip guard (max_flips 0)"].find("failure") is None
    props = {p.get("name"): p.get("value") for p in root.iter("property")}
    assert props["policy.release.pass_rate_margin"] == "0.05"
    assert props["policy"].startswith("bundled default (sha256 ")
    assert "| FAIL | rubric legal_soundness |" in md.read_text(encoding="utf-8")
    # With --json, stdout stays pure JSON.
    same = _cli("compare", a, a, "--json", "--junit", str(tmp_path / "same.xml"))
    assert same.exit_code == 0 and same.stdout.lstrip().startswith("{")
    same_cases = cases(validated(tmp_path / "same.xml"))
    # 24 identical items: every rubric non-inferior; the pass rate cannot tell (Tango needs 52)
    assert [n for n, c in same_cases.items() if c.find("failure") is not None] == ["pass rate"]
    # The policy may let "cannot tell" pass: then the case is skipped, never passed.
    allowed = _cli("compare", a, a, "--fail-on-regression", "--junit", str(tmp_path / "ok.xml"),
                   "--override", "on_cannot_tell=pass")
    assert allowed.exit_code == 0, allowed.output
    assert "policy override: release.on_cannot_tell=pass (policy fail)" in allowed.output
    ok_cases = cases(validated(tmp_path / "ok.xml"))
    assert ok_cases["pass rate"].find("skipped") is not None


@pytest.mark.parametrize(("judge", "code", "failed"), [("simulated:demo-openai", 1, True),
                                                       ("simulated:fair", 0, False)])
def test_audit_gate_junit_has_a_case_per_dimension_and_the_gate(tmp_path: Path, judge: str,
                                                                code: int, failed: bool) -> None:
    out = tmp_path / "audit.json"
    res = _cli("audit", "run", "--judge", judge, "--dimensions", "verbosity,position", "--pairs",
               "20", "--noise-pairs", "4", "--out", str(out))
    assert res.exit_code == 0, res.output
    assert f"wrote {out} (report JSON)" in res.output
    # A simulated judge audited on two dimensions at 20 pairs: only a policy that says so
    # (a reviewed file, named here) lets it through; the bundled policy refuses it (below).
    policy = tmp_path / "demo.policy.toml"
    policy.write_text('[certification]\npairs = 20\ndimensions = ["verbosity", "position"]\n'
                      "allow_simulated = true\n", encoding="utf-8")
    junit, gh = tmp_path / "gate.xml", tmp_path / "gh.md"
    res = _cli("audit", "gate", str(out), "--junit", str(junit), "--policy", str(policy),
               env={"GITHUB_STEP_SUMMARY": str(gh)})
    assert res.exit_code == code, res.output
    assert f"policy: {policy} (sha256 " in res.output
    if failed:  # one flagged dimension: the verdict sentence's grammar follows the count
        assert "move with verbosity, which says nothing" in " ".join(res.output.split())
    by_name = cases(validated(junit))
    assert {"verdict", "dimension verbosity", "dimension position", "severity",
            "gate (max severity low)"} <= set(by_name)
    # Each discrimination probe is a case of its own: a judge that cannot tell good from bad
    # answers fails there, not only in the gate line.
    assert {"probe conclusion_flip", "probe hedge_only"} <= set(by_name)
    assert (by_name["verdict"].find("failure") is not None) is failed
    assert (by_name["gate (max severity low)"].find("failure") is not None) is failed
    assert (by_name["dimension verbosity"].find("failure") is not None) is failed
    assert gh.read_text(encoding="utf-8").startswith("### FAILED" if failed else "### PASSED")
    props = {p.get("name"): p.get("value") for p in validated(junit).iter("property")}
    assert props["policy"].startswith(f"{policy} (sha256 ")
    assert props["policy.certification.allow_simulated"] == "true"
    assert props["judge of record"] == "simulated judge: not a judge of record"
    assert by_name["setting judge of record"].find("failure") is None
    # The bundled policy: a simulated judge is not a judge of record, and the settings fall
    # short; the JUnit case and the step summary say so.
    strict, strict_md = tmp_path / "strict.xml", tmp_path / "strict.md"
    res = _cli("audit", "gate", str(out), "--junit", str(strict), "--summary-md", str(strict_md))
    assert res.exit_code == 1, res.output
    strict_cases = cases(validated(strict))
    judge = strict_cases["setting judge of record"].find("failure")
    assert judge is not None and "simulated judge: not a judge of record" in (
        judge.get("message") or "")
    pairs = strict_cases["setting pairs"].find("failure")
    assert pairs is not None and "pairs 20 < policy 30" in (pairs.get("message") or "")
    summary = strict_md.read_text(encoding="utf-8")
    assert summary.startswith("### FAILED")
    assert "> **Note:** simulated judge: not a judge of record" in summary
    assert "| FAIL | setting dimensions | dimensions missing: authority, formatting |" in summary
