"""Journey: a certificate records its settings, and the gate checks them (issue 28, item 4).

Issue 28: "A certificate can be bought with flags." A judge that returns random scores (the
project's OpenAI-compatible stub, which scores each request from a hash of its text), audited with
``--significance 0.5 --min-sensitivity 0 --probes wrong_jurisdiction --dimensions
authority,confidence``, was ``certified``, and ``audit gate report.json`` passed it without
showing those settings. Each step below was run against the code before the fix and failed there.
"""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET

from .conftest import Journey, openai_stub

# Walk of the audit area: --min-complete-pairs 2 and --correction none (probes certified on a
# few pairs, without Holm) were recorded but never checked: "settings meet the policy".
WEAK = ("--significance", "0.5", "--min-sensitivity", "0", "--probes", "wrong_jurisdiction",
        "--dimensions", "authority,confidence", "--pairs", "10", "--noise-pairs", "0",
        "--equivalence-margin", "1.0", "--min-complete-pairs", "2", "--correction", "none")
ALL_OVERRIDES = ("--override", "significance=0.5", "--override", "min_sensitivity=0",
                 "--override", 'probes=["wrong_jurisdiction"]',
                 "--override", 'dimensions=["authority", "confidence"]',
                 "--override", "pairs=10", "--override", "equivalence_margin=1.0",
                 "--override", "min_complete_pairs=2", "--override", "correction=none")
NAMED = ("significance 0.5 > policy 0.05", "min sensitivity 0 < policy 0.7",
         "probes missing: conclusion_flip, fabricated_authority, hedge_only, partial_answer, "
         "missing_elements", "dimensions missing: position, verbosity, formatting",
         "pairs 10 < policy 30", "equivalence margin 1 > policy 0.5",
         "min complete pairs 2 < policy 10", "correction none is weaker than policy holm")


def _flat(text: str) -> str:
    return " ".join(text.split())


def _properties(path: str) -> dict[str, str]:
    return {p.get("name", ""): p.get("value", "") for p in ET.parse(path).iter("property")}


def test_a_random_judge_certified_under_weak_settings_fails_the_gate_of_record(
        journey: Journey) -> None:
    with openai_stub() as url:
        spec = f"openai-compatible:random@{url}"
        run = journey("audit", "run", "--judge", spec, *WEAK, "--out", "rep.json")
    # The audit itself certifies the random judge at these settings (the case) ...
    assert "verdict: certified" in run.out
    # ... and (walk of the audit area) says right there that it is no certificate of record:
    # "Certified: ..." was the last word of `audit run`, the gate's refusal came only later.
    said = _flat(run.out)
    assert "not a certificate of record under the policy: bundled default (sha256 " in said
    assert "significance 0.5 > policy 0.05" in said and "`legal-judge audit gate` refuses it" in said
    report = json.loads((journey.cwd / "rep.json").read_text())
    settings = report["extensions"]["settings"]
    # ... and now records what it was made under, in the file and in the store.
    assert settings | {"pairs_complete": None} == settings | {
        "significance": 0.5, "min_sensitivity": 0.0, "probes": ["wrong_jurisdiction"],
        "dimensions": ["authority", "confidence"], "pairs_requested": 10,
        "equivalence_margin": 1.0, "method": "auto", "seed": 0, "judge_spec": spec,
        "min_complete_pairs": 2, "correction": "none",
        "simulated": False, "pairs_complete": None}
    assert settings["pairs_complete"] == {"authority": 10, "confidence": 10}
    (stored,) = journey.query("SELECT report_json FROM audits")
    assert json.loads(stored[0])["extensions"]["settings"] == settings

    # Issue 28.4: `audit gate` passed it. Now each loosened setting is named, exit 1.
    gate = journey("audit", "gate", "rep.json", "--junit", "gate.xml", "--summary-md", "gate.md",
                   expect=1)
    text = _flat(gate.text)
    assert "gate passed" not in text
    assert "policy: bundled default (sha256 " in text and "[certification]" in text
    for named in NAMED:
        assert named in text, named
    assert "re-audit under the policy: legal-judge audit run --judge " + spec in text
    failures = {c.get("name"): c.find("failure") for c in ET.parse(
        journey.cwd / "gate.xml").iter("testcase")}
    assert failures["setting significance"] is not None
    assert "significance 0.5 > policy 0.05" in (failures["setting significance"].get("message")
                                                 or "")
    assert failures["setting judge of record"] is None  # a real endpoint, not the simulator
    assert "| FAIL | setting pairs | pairs 10 &lt; policy 30" in (
        journey.cwd / "gate.md").read_text()

    # A flag may only tighten the policy: loosening is refused and names --override.
    loose = journey("audit", "gate", "rep.json", "--max-severity", "critical", expect=2)
    assert "--override max_severity=critical" in _flat(loose.err)

    # One override loosens one setting, printed; the others still fail the gate.
    one = journey("audit", "gate", "rep.json", "--override", "significance=0.5", expect=1)
    text = _flat(one.text)
    assert "policy override: certification.significance=0.5 (policy 0.05)" in text
    assert "significance 0.5 > policy" not in text and "pairs 10 < policy 30" in text

    # Every setting overridden: it passes, and each override is printed in the terminal, the
    # JSON and the JUnit properties.
    passed = journey("audit", "gate", "rep.json", *ALL_OVERRIDES, "--junit", "ok.xml")
    text = _flat(passed.out)
    assert "gate passed: verdict certified" in text
    for line in ("certification.significance=0.5 (policy 0.05)",
                 "certification.min_sensitivity=0.0 (policy 0.7)",
                 "certification.probes=[wrong_jurisdiction] (policy all)",
                 "certification.dimensions=[authority, confidence] (policy [position, "
                 "verbosity, authority, formatting])",
                 "certification.pairs=10 (policy 30)",
                 "certification.equivalence_margin=1.0 (policy 0.5)",
                 "certification.min_complete_pairs=2 (policy 10)",
                 "certification.correction=none (policy holm)"):
        assert f"policy override: {line}" in text, line
    # Walk of the audit area: a list override written as `--probes` takes one was refused
    # ("Input should be 'all'", "Input should be a valid tuple") with no way to write it named.
    flag_style = [a.replace('["wrong_jurisdiction"]', "wrong_jurisdiction").replace(
        '["authority", "confidence"]', "authority,confidence") for a in ALL_OVERRIDES]
    assert flag_style != list(ALL_OVERRIDES)
    same = journey("audit", "gate", "rep.json", *flag_style)
    assert "policy override: certification.dimensions=[authority, confidence]" in _flat(same.out)
    as_json = journey("audit", "gate", "rep.json", *ALL_OVERRIDES, "--json")
    decision = json.loads(as_json.out)
    assert decision["passed"] is True and decision["settings"] == settings
    overrides = {o["key"]: o for o in decision["policy"]["overrides"]}
    assert overrides["certification.significance"] | {"value": 0.5, "policy_value": 0.05,
                                                      "source": "override", "loosens": True} \
        == overrides["certification.significance"]
    assert len(overrides) == 8 and all(o["loosens"] for o in overrides.values())
    assert "policy override: certification.pairs=10 (policy 30)" in decision["policy_overrides"]
    props = _properties(str(journey.cwd / "ok.xml"))
    assert props["policy override certification.significance"] == \
        "certification.significance=0.5 (policy 0.05)"
    assert props["policy override certification.equivalence_margin"] == \
        "certification.equivalence_margin=1.0 (policy 0.5)"

    # A report written before settings were recorded cannot show them: it fails, naming the fix
    # (and it is not the report the audit logged either).
    old = dict(report, extensions={k: v for k, v in report["extensions"].items()
                                   if k != "settings"})
    (journey.cwd / "old.json").write_text(json.dumps(old))
    before = journey("audit", "gate", "old.json", *ALL_OVERRIDES, expect=1)
    text = _flat(before.text)
    assert "settings not recorded" in text and "report edited after the audit" in text

    # Walk of the audit area: the certificate edited by hand into one of record (the policy's
    # settings written over the weak ones) passed `audit gate` with no override: "gate passed".
    # The gate now checks the file against the digest its audit logged.
    audit_id = report["extensions"]["audit_id"]
    forged = json.loads(json.dumps(report))
    forged["extensions"]["settings"] |= {
        "significance": 0.05, "min_sensitivity": 0.7, "equivalence_margin": 0.5,
        "min_complete_pairs": 10, "correction": "holm",
        "pairs_requested": 30, "pairs_complete": {"position": 30, "verbosity": 30,
                                                  "authority": 30, "formatting": 30},
        "dimensions": ["position", "verbosity", "authority", "formatting"],
        "probes": ["conclusion_flip", "wrong_jurisdiction", "fabricated_authority",
                   "hedge_only", "partial_answer", "missing_elements"]}
    (journey.cwd / "forged.json").write_text(json.dumps(forged))
    caught = journey("audit", "gate", "forged.json", "--junit", "forged.xml", expect=1)
    text = _flat(caught.text)
    assert "gate passed" not in text and "report edited after the audit" in text
    assert f"fix: gate the audit as stored: legal-judge audit gate {audit_id}" in text
    assert _flat(caught.err).count("setting ") == 0  # the forged settings themselves "pass"
    cases = {c.get("name"): c.find("failure") for c in ET.parse(
        journey.cwd / "forged.xml").iter("testcase")}
    assert cases["audit log"] is not None
    # The stored audit, by id, is the evidence: it fails on the settings it was really made under.
    stored_gate = journey("audit", "gate", audit_id, expect=1)
    assert "significance 0.5 > policy 0.05" in _flat(stored_gate.text)
    # The unedited file gated with another store (a CI job without the audit's store) cannot
    # be checked against the log: it fails unless the policy allows it, printed.
    other = {"LEGAL_JUDGE_HOME": str(journey.home.parent / "elsewhere")}
    foreign = journey("audit", "gate", "rep.json", *ALL_OVERRIDES, env=other, expect=1)
    assert "report not in this store's audit log" in _flat(foreign.text)
    allowed = journey("audit", "gate", "rep.json", *ALL_OVERRIDES, "--override",
                      "allow_unlogged=true", env=other)
    assert "policy override: certification.allow_unlogged=true (policy false)" in allowed.out


def test_a_simulated_judge_is_not_a_judge_of_record_unless_the_policy_says_so(
        journey: Journey) -> None:
    # The team's reviewed policy file, found in the working directory: small audits are enough.
    (journey.cwd / "legal-judge.policy.toml").write_text(
        '[certification]\nprobes = ["wrong_jurisdiction"]\n'
        'dimensions = ["authority", "confidence"]\npairs = 10\n')
    small = ("--probes", "wrong_jurisdiction", "--probe-pairs", "10", "--dimensions",
             "authority,confidence", "--pairs", "10", "--noise-pairs", "0")
    # `audit run --max-severity` gates through the same policy; a loosening flag is refused
    # before any judge call.
    refused = journey("audit", "run", "--judge", "simulated:fair", *small, "--max-severity",
                      "critical", expect=2)
    assert "--override max_severity=critical" in _flat(refused.err)
    assert not journey.store_file.exists()  # nothing started, nothing paid
    run = journey("audit", "run", "--judge", "simulated:fair", *small, "--max-severity", "low",
                  "--out", "sim.json", expect=1)
    text = _flat(run.text)
    assert "verdict: certified" in text
    assert "legal-judge.policy.toml (sha256 " in text
    assert "simulated judge: not a judge of record (simulated:fair)" in text
    assert "--override allow_simulated=true" in text
    assert journey.query("SELECT status FROM audits") == [("complete",)]
    gate = journey("audit", "gate", "sim.json", "--summary-md", "sim.md", expect=1)
    assert "simulated judge: not a judge of record" in _flat(gate.text)
    assert "> **Note:** simulated judge: not a judge of record" in (
        journey.cwd / "sim.md").read_text()
    allowed = journey("audit", "gate", "sim.json", "--override", "allow_simulated=true")
    text = _flat(allowed.out)
    assert "gate passed: verdict certified" in text
    assert "policy override: certification.allow_simulated=true (policy false)" in text
    assert "simulated judge: not a judge of record (allowed by the policy)" in text
