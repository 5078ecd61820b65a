"""Journey: a judge change proves itself against the lawyers (issue 31).

demo -> calibrate sample -> the lawyers fill the sheet -> calibrate import -> calibrate compare
-> calibrate validate (a lenient judge against a fair one: WORSE, with the false-pass difference
and its CI; exit 1) -> calibrate validate of the fair judge (stored with its judge id, with its
allowed uses) -> calibrate align (in-sample beside cross-fitted agreement; promoting a candidate
that is not better/not worse is refused).
"""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET

from .conftest import Journey
from .test_calibration import labelled_demo


def _flat(text: str) -> str:
    return " ".join(text.split())


def _calibrated(journey: Journey) -> tuple[str, str]:
    run_id = labelled_demo(journey, 50)
    cmp = journey("calibrate", "compare", run_id, "--quarter", "2026-Q4")
    return run_id, re.search(r"calibration id: (\S+)", cmp.out)[1]  # type: ignore[index]


def test_a_lenient_judge_is_worse_and_a_fair_one_may_gate(journey: Journey) -> None:
    _, cal_id = _calibrated(journey)

    # User mistakes are exit 2 with the fix, never an internal error; nothing is stored.
    gone = journey("calibrate", "validate", "--calibration", "cal-nope", "--candidate",
                   "simulated:fair", expect=2)
    assert "calibration 'cal-nope' is not in the store" in _flat(gone.err)
    typo = journey("calibrate", "validate", "--calibration", cal_id, "--candidate",
                   "simulated:nosuch", expect=2)
    # It names the judge as written, not a phantom ensemble 'candidate' to run doctor on.
    assert "judge simulated:nosuch: nothing was judged" in _flat(typo.err)
    assert "ensemble 'candidate'" not in typo.err
    assert journey.query("SELECT COUNT(*) FROM judge_validations")[0][0] == 0

    # Must show: the lenient judge against the fair one says WORSE, false-pass difference first.
    worse = journey("calibrate", "validate", "--calibration", cal_id, "--candidate",
                    "simulated:lenient", "--incumbent", "simulated:fair", "--junit",
                    "validate.xml", expect=1)
    said = _flat(worse.out)
    assert said.startswith("policy: bundled default"), worse.describe()
    assert "WORSE: simulated:lenient passes" in said, worse.describe()
    m = re.search(r"false-pass rate \(judge passes, lawyers fail\): candidate ([.\d]+) \((\d+)/"
                  r"(\d+)\), incumbent ([.\d]+) \((\d+)/\d+\), difference ([-+.\d]+) "
                  r"\[([-+.\d]+), ([-+.\d]+)\], exact McNemar p = (\S+)", said)
    assert m, worse.describe()
    assert int(m[2]) > int(m[5]) and float(m[7]) > 0, worse.describe()  # CI above zero
    assert "may gate on: nothing" in said or "pass_fail" not in said.split("may gate on:")[1][:40]
    assert "the candidate is WORSE" in _flat(worse.err)
    cases = ET.parse(journey.cwd / "validate.xml").getroot().findall(".//testcase")
    assert cases[0].get("name") == "rubric pass_fail"
    assert cases[0].find("failure") is not None
    props = {p.get("name"): p.get("value") for p in
             ET.parse(journey.cwd / "validate.xml").getroot().iter("property")}
    assert props["verdict"] == "worse" and props["policy.validation.agreement_margin"] == "0.05"
    stored = journey.query("SELECT verdict, report_json FROM judge_validations")
    assert [r[0] for r in stored] == ["worse"]
    report = json.loads(stored[0][1])
    assert report["allowed"]["may_gate"] == [] or "pass_fail" not in report["allowed"]["may_gate"]
    assert report["allowed"]["validated_on"][0]["calibration_id"] == cal_id

    # The fair judge against the lenient one: not worse or better, stored with its judge id.
    fair = journey("calibrate", "validate", "--calibration", cal_id, "--candidate",
                   "simulated:fair", "--incumbent", "simulated:lenient", "--json", "--report",
                   "fair.md")
    data = json.loads(fair.out)  # "wrote fair.md" goes to stderr: stdout stays one document
    assert "wrote fair.md" in fair.err
    assert "## Allowed uses" in (journey.cwd / "fair.md").read_text("utf-8")
    assert data["verdict"] in ("better", "not worse"), fair.out
    assert "legal_soundness" in data["allowed"]["may_gate"]
    # pass/fail may gate only above the policy's kappa floor: said, never silently dropped
    assert "pass_fail" in data["allowed"]["may_gate"] or "kappa" in data["allowed"][
        "may_not_gate"]["pass_fail"]
    judge_id = data["candidate"]["judge_id"]
    assert journey.query("SELECT verdict FROM judge_validations WHERE judge_id = ?",
                         judge_id)[0][0] == data["verdict"]

    # Defect: a validation won under a loosened override was promoted with "may go to
    # production" and neither the policy nor the override printed; both are, before the decision.
    loose = journey("calibrate", "validate", "--calibration", cal_id, "--candidate",
                    "simulated:fair", "--incumbent", "simulated:lenient", "--override",
                    "validation.agreement_margin=0.5", "--json")
    promoted = journey("calibrate", "promote", json.loads(loose.out)["validation_id"])
    said = _flat(promoted.text)
    assert "was decided under policy: bundled default" in said, promoted.describe()
    assert "policy override: validation.agreement_margin=0.5 (policy 0.05)" in said


def test_align_shows_in_sample_beside_cross_fitted_and_promotion_needs_evidence(
        journey: Journey) -> None:
    _, cal_id = _calibrated(journey)

    # A lenient judge learns from the lawyers' false-pass examples: better held out.
    aligned = journey("calibrate", "align", "--calibration", cal_id, "--judge",
                      "simulated:lenient", "--out", "aligned", "--report", "aligned.html")
    said = _flat(aligned.out)
    m = re.search(r"in-sample ([.\d]+) \(built and scored on the same labels: optimistic\), "
                  r"cross-fitted ([.\d]+) \(5 folds, seed 0, k = 4\), incumbent ([.\d]+)", said)
    assert m, aligned.describe()
    assert float(m[1]) >= float(m[2]) > float(m[3]), aligned.describe()
    assert "BETTER:" in said and "lawyers' notes (a draft to edit, not applied)" in said
    assert (journey.cwd / "aligned" / "prompt" / "prompts" / "judge_system.v2.j2").is_file()
    assert (journey.cwd / "aligned" / "lawyers-notes.md").is_file()
    html = (journey.cwd / "aligned.html").read_text("utf-8")
    assert "in-sample" in html and "cross-fitted" in html and "Allowed uses" in html
    good = re.search(r"validation id: (\S+)", aligned.out)[1]  # type: ignore[index]

    # One that only copies its examples looks better in-sample only: no verdict of fitness.
    stubborn = journey("calibrate", "align", "--calibration", cal_id, "--judge",
                       "simulated:lenient-stubborn", "--out", "stubborn")
    m = re.search(r"in-sample ([.\d]+) .*?cross-fitted ([.\d]+) .*?incumbent ([.\d]+)",
                  _flat(stubborn.out))
    assert m and float(m[1]) > float(m[2]) == float(m[3]), stubborn.describe()
    assert re.search(r"\b(NOT WORSE|CANNOT TELL):", stubborn.out), stubborn.describe()

    # Promotion: the held-out better candidate may go; a worse one is refused with the reason.
    ok = journey("calibrate", "promote", good)
    assert "may go to production" in _flat(ok.out)
    worse = journey("calibrate", "validate", "--calibration", cal_id, "--candidate",
                    "simulated:lenient", "--json", expect=1)
    refused = journey("calibrate", "promote", json.loads(worse.out)["validation_id"], expect=1)
    assert "refused: pass_fail: worse (false-pass rate +" in _flat(refused.err)
    rows = journey.query("SELECT verdict FROM judge_validations ORDER BY created_at")
    assert len(rows) == 3
