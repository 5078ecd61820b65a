"""Journeys: a release manager gates a model release with `compare` (issue 28, item 2).

Defects fixed, one step each:
- six correct answers of the bundled sample replaced by a hedge ("You should consult a lawyer. I
  cannot give legal advice on this question.") passed `compare --fail-on-regression` (exit 0,
  `### PASSED`): the gate asked "is it significantly worse?" where a release needs "is it shown
  not to be worse?"; five one-way flips can never reach p < 0.05 with exact McNemar;
- the 0.25-point threshold behind "no change" was printed nowhere; no policy was named;
- the HTML said "No item regressed." under a REGRESSION banner (rubric drops without a flip);
- `--threshold` could loosen the gate silently.
"""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

from legal_judge.dataset import sample_dataset_path

from .conftest import Journey, openai_stub

HEDGE = "You should consult a lawyer. I cannot give legal advice on this question."
HEDGED = ("us-fed-001", "us-fed-002", "us-fed-009", "us-ca-001", "us-ca-002", "us-ny-001")
# Since issue 29 (rule 4) every hedging-only answer fails, us-fed-002 included; the release also
# cuts us-ny-002 to its first sentence: its rubrics drop and it still passes (a drop, no flip).
SHORTENED = {"us-ny-002": "Generally six years, under CPLR 213(2)."}
FLIPPED = ["us-ca-001", "us-ca-002", "us-fed-001", "us-fed-002", "us-fed-009", "us-ny-001"]
ENDPOINTS = ("pass_rate", "citation_quality", "completeness", "jurisdiction_awareness",
             "language_quality", "legal_soundness")


def _write(path: Path, *, hedge: bool, critical: tuple[str, ...] = ()) -> str:
    rows = [json.loads(line) for line in sample_dataset_path().read_text("utf-8").splitlines()
            if line.strip()]
    for row in rows:
        if hedge and row["id"] in HEDGED:
            assert row["metadata"]["answer_kind"] == "correct"
            row["response"] = HEDGE
        if hedge and row["id"] in SHORTENED:
            assert row["response"].startswith(SHORTENED[row["id"]])
            row["response"] = SHORTENED[row["id"]]
        if row["id"] in critical:
            row["critical"] = True
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return str(path)


def _flat(text: str) -> str:
    return " ".join(text.split())


def _junit(path: Path) -> tuple[dict[str, ET.Element], dict[str, str]]:
    root = ET.parse(path).getroot()
    return ({c.get("name", ""): c for c in root.iter("testcase")},
            {p.get("name", ""): p.get("value", "") for p in root.iter("property")})


def test_a_hedging_release_fails_and_an_unchanged_one_passes(journey: Journey) -> None:
    sample = str(sample_dataset_path())
    journey("run", sample, "--ensemble", "demo", "--quiet", "--run-id", "r1")
    again = journey("run", sample, "--ensemble", "demo", "--quiet", "--run-id", "r2")
    assert "reused from the cache: 57 of 57 items" in again.out
    hedged = _write(journey.cwd / "hedged.jsonl", hedge=True)
    journey("run", hedged, "--ensemble", "demo", "--quiet", "--run-id", "r4")

    # The same dataset and ensemble twice (cached): shown non-inferior on every endpoint.
    same = journey("compare", "r1", "r2", "--fail-on-regression")
    said = _flat(same.out)
    assert "policy: bundled default (sha256 " in said and "[release]" in said
    for endpoint in ENDPOINTS:
        assert f"│ {endpoint}" in same.out
    assert said.count("non-inferior │") == len(ENDPOINTS)
    assert "release gate: PASS: non-inferior" in said

    # Issue 31: the policy can require a validation of record for every judge of the candidate
    # run; the demo's judges have none, so the same comparison fails, naming each judge, and
    # the JUnit carries the requirement as a failed case.
    strict = journey("compare", "r1", "r2", "--fail-on-regression", "--require-validation",
                     "--junit", "v.xml", expect=1)
    said = _flat(strict.text)
    assert "tightened by flags: validation.require_of_record=true" in said
    assert ("requirement validation of record: NOT MET: 3 of 3 judge(s) lack a usable "
            "validation of record") in said
    assert "release gate: FAIL" in said and "calibrate validate --calibration CAL" in said
    cases, _ = _junit(journey.cwd / "v.xml")
    assert cases["requirement: validation of record"].find("failure") is not None
    # The same requirement in `audit needed`: each judge is named with why it may not gate.
    needed = journey("audit", "needed", "--judge", "demo", "--require-validation", expect=1)
    said = _flat(needed.text)
    assert said.count("unvalidated ") == 3 and "validation of record: NOT MET" in said
    # Without the requirement the unchanged release still passes (the requirement is opt-in).
    journey("compare", "r1", "r2", "--fail-on-regression")

    # The hedge release: exit 1, the pass rate shown worse than its margin (six one-way flips
    # since issue 29's rule 4; five before, which could only "cannot tell"), the flips listed.
    gate = journey("compare", "r1", "r4", "--fail-on-regression", "--summary-md", "s.md",
                   "--junit", "j.xml", expect=1)
    said = _flat(gate.out)
    assert "│ pass_rate │ -0.105 │ -0.191..-0.055 │ -0.05 │ REGRESSED │" in said
    assert ("pass_rate: regressed: the one-sided 95% upper bound -0.055 is below -0.05: shown "
            "worse than the margin") in said
    assert "legal_soundness: cannot tell: the lower bound -0.688 is below -0.25" in said
    assert "items passed in A and failed in B (6): " + ", ".join(FLIPPED) in said
    assert "release gate: FAIL: regressed" in said
    assert "release gate: regressed: pass_rate" in _flat(gate.err)
    # Defect (walk-score): the endpoints that cannot tell were listed as regressed ("release
    # gate: regressed: pass_rate; legal_soundness; language_quality").
    err = _flat(gate.err)
    assert "release gate: regressed: pass_rate; cannot tell: " in err
    assert "legal_soundness" in err.split("cannot tell: ", 1)[1]
    summary = (journey.cwd / "s.md").read_text(encoding="utf-8")
    assert summary.startswith("### FAILED: legal-judge compare r4 vs r1")
    assert "**passed in A, failed in B:** " + ", ".join(FLIPPED) in summary
    assert "**policy.release.pass_rate_margin:** 0.05" in summary
    assert "| FAIL | pass rate | regressed: B-A -0.105" in summary
    cases, props = _junit(journey.cwd / "j.xml")
    assert props["policy.release.rubric_margin"] == "0.25"
    assert "margin -0.05" in (cases["pass rate"].find("failure").get("message") or "")
    assert cases["flip guard (max_flips 0)"].find("failure") is None

    # The HTML report: the same decision and policy; every regressed item, us-ny-002 included
    # (its rubrics dropped, it still passes: once "No item regressed." under REGRESSION).
    journey("report", "r1", "r4", "--html", "c.html")
    html = (journey.cwd / "c.html").read_text(encoding="utf-8")
    assert "RELEASE GATE FAILED: regressed" in html and "No item regressed." not in html
    assert "policy: bundled default (sha256 " in html
    regressed = html.split('id="regressed"', 1)[1].split("<section", 1)[0]
    for item in (*HEDGED, *SHORTENED):
        assert f"<h3>{item}</h3>" in regressed
    assert "rubric drop, no flip" in regressed.split("us-ny-002", 1)[1].split("</tr>", 1)[0]

    # An explicit override loosens the pass-rate margin, and says so everywhere.
    loose = journey("compare", "r1", "r4", "--override", "pass_rate_margin=0.2", "--json",
                    "--junit", "loose.xml")
    out = json.loads(loose.out)
    assert out["policy"]["overrides"][0] == {"key": "release.pass_rate_margin", "value": 0.2,
                                             "policy_value": 0.05, "source": "override",
                                             "loosens": True}
    assert out["pass_rate"]["status"] == "non-inferior" and out["pass_rate"]["margin"] == 0.2
    _, props = _junit(journey.cwd / "loose.xml")
    assert props["policy override release.pass_rate_margin"] == \
        "release.pass_rate_margin=0.2 (policy 0.05)"
    printed = journey("compare", "r1", "r4", "--override", "pass_rate_margin=0.2",
                      "--fail-on-regression", expect=1)  # the rubrics still cannot tell
    assert "policy override: release.pass_rate_margin=0.2 (policy 0.05)" in printed.out

    # --threshold is a deprecated alias of rubric_margin: it may tighten, never loosen.
    refused = journey("compare", "r1", "r4", "--threshold", "0.5", expect=2)
    assert "--override rubric_margin=0.5" in _flat(refused.err)
    tighter = journey("compare", "r1", "r2", "--threshold", "0.1")
    assert "note: --threshold is deprecated" in _flat(tighter.out)
    assert "tightened by flags: release.rubric_margin=0.1 (policy 0.25)" in _flat(tighter.out)


def test_a_critical_item_that_flips_trips_the_guard(journey: Journey) -> None:
    base = _write(journey.cwd / "base.jsonl", hedge=False, critical=("us-fed-001",))
    new = _write(journey.cwd / "new.jsonl", hedge=True, critical=("us-fed-001",))
    journey("run", base, "--ensemble", "demo", "--quiet", "--run-id", "c1")
    journey("run", new, "--ensemble", "demo", "--quiet", "--run-id", "c2")
    # The dataset's flag is kept with the stored item.
    ((stored,),) = journey.query("SELECT item_json FROM items WHERE run_id = 'c2' AND "
                                 "item_id = 'us-fed-001'")
    assert json.loads(stored)["critical"] is True
    gate = journey("compare", "c1", "c2", "--fail-on-regression", "--junit", "g.xml", expect=1)
    said = _flat(gate.out)
    assert ("flip guard: regressed: 1 of 1 critical item(s) went pass -> fail (max_flips 0)"
            in said)
    assert "critical items that went pass -> fail: us-fed-001" in said
    assert "release gate: FAIL: regressed" in said
    cases, _ = _junit(journey.cwd / "g.xml")
    assert "us-fed-001" in (cases["flip guard (max_flips 0)"].find("failure").get("message") or "")


def test_the_gate_pairs_only_the_same_questions_and_checks_every_critical_item(
        journey: Journey) -> None:
    """A release manager's two mistakes the gate must catch (walk-score, both exited 0)."""
    base = _write(journey.cwd / "base.jsonl", hedge=False, critical=("us-fed-001", "us-fed-002"))
    journey("run", base, "--ensemble", "demo", "--quiet", "--run-id", "k1")
    rows = [json.loads(line) for line in Path(base).read_text("utf-8").splitlines()]

    # Defect: the candidate's dataset lost a critical item (us-fed-001); the guard said
    # "passed: 0 of 2 critical item(s) went pass -> fail" and the release passed. Nothing shows
    # us-fed-001 did not go pass -> fail: the guard cannot tell, and the gate fails.
    lost = journey.cwd / "lost.jsonl"
    lost.write_text("".join(json.dumps(r) + "\n" for r in rows if r["id"] != "us-fed-001"),
                    encoding="utf-8")
    journey("run", str(lost), "--ensemble", "demo", "--quiet", "--run-id", "k2")
    gate = journey("compare", "k1", "k2", "--fail-on-regression", "--junit", "k.xml", expect=1)
    said = _flat(gate.text)
    assert ("flip guard: cannot tell: 0 of 2 critical item(s) went pass -> fail (max_flips 0); "
            "1 critical item(s) not scored in both runs, so not checked: us-fed-001") in said
    assert "release gate: FAIL: cannot tell" in said
    assert "release gate: cannot tell: flip guard" in said
    cases, _ = _junit(journey.cwd / "k.xml")
    assert cases["flip guard (max_flips 0)"].find("failure") is not None

    # Defect: items were paired by id alone. A dataset numbered like the sample but asking other
    # questions (each id holds the next row's prompt) was compared as if it were the same items
    # (57 paired items, no warning); now the runs share no item and the gate is refused (exit 2).
    shifted = journey.cwd / "shifted.jsonl"
    shifted.write_text("".join(json.dumps({**rows[(k + 1) % len(rows)], "id": r["id"]}) + "\n"
                               for k, r in enumerate(rows)), encoding="utf-8")
    journey("run", str(shifted), "--ensemble", "demo", "--quiet", "--run-id", "k3")
    refused = journey("compare", "k1", "k3", "--fail-on-regression", expect=2)
    assert "the 57 id(s) they share hold different questions (prompt or jurisdiction)" in \
        _flat(refused.err)
    # Reworded questions are left out and named; the rest are compared.
    reworded = journey.cwd / "reworded.jsonl"
    reworded.write_text("".join(json.dumps(
        {**r, "prompt": r["prompt"] + " And in Texas?"} if r["id"] in ("fr-001", "us-ca-003")
        else r) + "\n" for r in rows), encoding="utf-8")
    journey("run", str(reworded), "--ensemble", "demo", "--quiet", "--run-id", "k4")
    some = journey("compare", "k1", "k4", "--json")
    out = json.loads(some.out)
    assert out["n_items"] == 55 and out["different_question"] == ["fr-001", "us-ca-003"]
    assert ("2 item(s) have the same id but a different question in the two runs (prompt or "
            "jurisdiction): not compared (fr-001, us-ca-003)") in _flat(some.err)


def test_a_candidate_that_left_items_inconclusive_does_not_pass(journey: Journey) -> None:
    """Defect (walk-score): a candidate run whose own `run` gate FAILED (204 of 684 items
    INCONCLUSIVE) passed `compare --fail-on-regression` on the items it did score, and nothing
    said the others were left out. The release requires each run to have scored its items as
    the [run] gate does (run.max_inconclusive_share), and names the run that did not."""
    sample = str(sample_dataset_path())
    journey("run", sample, "--ensemble", "demo", "--quiet", "--run-id", "base")
    with openai_stub("--invalid-json", "0.7", "--seed", "3") as url:
        (journey.cwd / "flaky.toml").write_text(
            'name = "flaky"\nquorum = 3\n[[judges]]\nname = "flaky"\n'
            f'spec = "openai-compatible:m@{url}"\nmultilingual = true\n'
            '[[judges]]\nspec = "simulated:demo-google"\nmultilingual = true\n'
            '[[judges]]\nspec = "simulated:demo-mistral"\nmultilingual = true\n',
            encoding="utf-8")
        run = journey("run", sample, "--ensemble", "flaky.toml", "--quiet", "--run-id", "cand",
                      expect=1)
    assert "run gate: FAILED: inconclusive share" in _flat(run.out)
    ((unscored,),) = journey.query("SELECT COUNT(*) FROM ensemble_results WHERE run_id = 'cand' "
                                   "AND status != 'ok'")
    assert 6 <= unscored < 57
    gate = journey("compare", "base", "cand", "--fail-on-regression", "--json", expect=1)
    out = json.loads(gate.out)
    scored = out["release"]["requirements"][0]
    assert scored["name"] == "items scored" and not scored["met"]
    said = _flat(gate.err)
    assert (f"requirement items scored: NOT MET: run cand: {unscored} of 57 items not scored "
            in said)
    assert "> policy limit 10.0% (run.max_inconclusive_share)" in said
