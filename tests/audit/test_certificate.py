"""Certificates record their settings; the gate checks them against the policy (issue 28, item 4)."""

from __future__ import annotations

from pathlib import Path

import pytest

from legal_judge.audit.analysis import PairRow
from legal_judge.audit.certificate import NOT_RECORDED, reaudit_flags, settings_checks
from legal_judge.audit.design import AuditSettings
from legal_judge.audit.gate import gate_decision, gate_report
from legal_judge.audit.report import build_report, validate_report
from legal_judge.errors import ConfigError, GateFailure
from legal_judge.policy import CertificationPolicy, load_policy

PROBES = ["conclusion_flip", "wrong_jurisdiction", "fabricated_authority", "hedge_only",
          "partial_answer", "missing_elements"]
DIMS = ["position", "verbosity", "authority", "formatting"]


def _rows(name: str, n: int, *, probe: bool = False) -> list[PairRow]:
    # A sound judge: probes drop by about 3 points, dimensions move by a little noise (no tied
    # differences: scipy's Wilcoxon would fall back to a slow permutation test).
    key = {"probe": name, "expected_direction": "drop", "kind": "probe"} if probe \
        else {"dimension": name}
    return [PairRow(pair_id=f"{name}-{i}", variant_a_input=f"a{i}",
                    variant_a_score=4.0 + 0.01 * i if probe else 3.0 + (-1) ** i * 0.01 * (i + 1),
                    variant_b_input=f"b{i}", variant_b_score=1.0 if probe else 3.0,
                    **key)  # type: ignore[arg-type]
            for i in range(n)]


def _report(spec: str | None, **settings: object) -> dict:
    rows = [r for d in DIMS for r in _rows(d, 30)] + \
        [r for p in PROBES for r in _rows(p, 12, probe=True)]
    return build_report(rows, AuditSettings(pairs=30, **settings),  # type: ignore[arg-type]
                        dimensions=DIMS, judge_spec=spec)


def test_the_report_records_every_setting_that_can_change_the_verdict() -> None:
    report = _report("openai-compatible:gpt-4o@http://127.0.0.1:9/v1", significance=0.01,
                     min_sensitivity=0.8, method="wilcoxon", seed=7, disparity_threshold=0.4)
    assert validate_report(report) == []
    recorded = report["extensions"]["settings"]
    assert recorded == recorded | {
        "significance": 0.01, "min_sensitivity": 0.8, "probes": PROBES, "dimensions": DIMS,
        "pairs_requested": 30, "pairs_complete": dict.fromkeys(DIMS, 30),
        "equivalence_margin": 0.4,  # no --equivalence-margin: the disparity threshold
        "method": "wilcoxon", "correction": "holm", "seed": 7,
        "judge_spec": "openai-compatible:gpt-4o@http://127.0.0.1:9/v1", "simulated": False}
    assert _report("simulated:fair")["extensions"]["settings"]["simulated"] is True
    # A real endpoint's model named "simulated-review" is not the simulator (one rule for it).
    named = _report("openai-compatible:simulated-review@http://127.0.0.1:9/v1")
    assert named["extensions"]["settings"]["simulated"] is False
    scored_elsewhere = _report(None)["extensions"]["settings"]
    assert scored_elsewhere["judge_spec"] is None and scored_elsewhere["simulated"] is None


def test_each_setting_weaker_than_the_policy_is_named() -> None:
    report = _report("openai-compatible:m@http://h/v1", significance=0.5, min_sensitivity=0.0,
                     equivalence_margin=1.0)
    recorded = dict(report["extensions"]["settings"])
    recorded |= {"probes": ["wrong_jurisdiction"], "dimensions": ["authority", "confidence"],
                 "pairs_requested": 10}
    failed = {c.name: c.reason for c in settings_checks(recorded, CertificationPolicy())
              if not c.ok}
    assert failed == {
        "significance": "significance 0.5 > policy 0.05",
        "min sensitivity": "min sensitivity 0 < policy 0.7",
        "probes": "probes missing: conclusion_flip, fabricated_authority, hedge_only, "
                  "partial_answer, missing_elements",
        "dimensions": "dimensions missing: position, verbosity, formatting",
        "pairs": "pairs 10 < policy 30 per dimension (fewest complete: 30)",
        "equivalence margin": "equivalence margin 1 > policy 0.5"}
    # At the policy's own settings, every check passes, each with its comparison.
    ok = settings_checks(_report("openai-compatible:m@http://h/v1")["extensions"]["settings"],
                         CertificationPolicy())
    assert all(c.ok for c in ok), [c for c in ok if not c.ok]
    assert {c.name for c in ok} == {"significance", "min sensitivity", "probes", "dimensions",
                                    "pairs", "min complete pairs", "correction",
                                    "equivalence margin", "judge of record"}


def test_a_certificate_resting_on_a_few_uncorrected_pairs_is_named_weaker(
        tmp_path: Path) -> None:
    # Walk of the audit area: `audit run --probe-pairs 4 --min-complete-pairs 2 --correction
    # none` certified probes on 4 pairs each with no multiplicity correction, and `audit gate`
    # said "settings meet the policy".
    report = _report("openai-compatible:m@http://h/v1", min_complete_pairs=2, correction="none")
    assert report["extensions"]["verdict"] == "certified"
    policy = load_policy(cwd=tmp_path)
    decision = gate_decision(report, policy=policy)
    assert decision.reasons == ["made under settings weaker than the policy: min complete pairs "
                                "2 < policy 10; correction none is weaker than policy holm"]
    bh = settings_checks(_report("openai-compatible:m@http://h/v1", correction="bh")
                         ["extensions"]["settings"], CertificationPolicy(correction="bh"))
    assert all(c.ok for c in bh)
    with pytest.raises(ConfigError):  # a flag may not loosen it; an override may, printed
        policy.with_settings({"certification.correction": "none"})
    loosened = policy.with_settings(overrides=["min_complete_pairs=2", "correction=none"])
    assert gate_decision(report, policy=loosened).passed
    assert loosened.override_lines() == [
        "policy override: certification.min_complete_pairs=2 (policy 10)",
        "policy override: certification.correction=none (policy holm)"]


def test_a_certified_report_with_weak_settings_fails_and_the_fix_names_a_reaudit(
        tmp_path: Path) -> None:
    report = _report("openai-compatible:m@http://h/v1", significance=0.5)
    assert report["extensions"]["verdict"] == "certified"
    policy = load_policy(cwd=tmp_path)
    decision = gate_decision(report, policy=policy)
    assert not decision.passed
    assert decision.reasons == ["made under settings weaker than the policy: significance 0.5 > "
                                "policy 0.05"]
    with pytest.raises(GateFailure) as err:
        gate_report(report, policy=policy)
    assert err.value.fix is not None
    assert err.value.fix.startswith("re-audit under the policy: legal-judge audit run --judge "
                                    "openai-compatible:m@http://h/v1;")
    loosened = policy.with_settings(overrides=["significance=0.5"])
    assert gate_decision(report, policy=loosened).passed


def test_a_report_without_settings_cannot_show_them(tmp_path: Path) -> None:
    report = _report("openai-compatible:m@http://h/v1")
    assert gate_decision(report, policy=load_policy(cwd=tmp_path)).passed
    del report["extensions"]["settings"]  # written before audits recorded their settings
    decision = gate_decision(report, policy=load_policy(cwd=tmp_path))
    assert not decision.passed and decision.reasons == [NOT_RECORDED]
    assert [(c.name, c.outcome) for c in decision.failed("setting")] == [("settings", "fail")]
    with pytest.raises(GateFailure) as err:
        gate_report(report, policy=load_policy(cwd=tmp_path))
    assert "re-audit" in (err.value.fix or "")


def test_simulated_and_unknown_judges_are_not_judges_of_record(tmp_path: Path) -> None:
    policy = load_policy(cwd=tmp_path)
    simulated = gate_decision(_report("simulated:fair"), policy=policy)
    assert not simulated.passed and simulated.simulated is True
    assert simulated.reasons == ["simulated judge: not a judge of record (simulated:fair)"]
    with pytest.raises(GateFailure) as err:
        gate_report(_report("simulated:fair"), policy=policy)
    assert "--override allow_simulated=true" in (err.value.fix or "")
    unknown = gate_decision(_report(None), policy=policy)
    assert not unknown.passed and "judge not recorded" in unknown.reasons[0]
    allowing = policy.with_settings(overrides=["allow_simulated=true"])
    assert gate_decision(_report("simulated:fair"), policy=allowing).passed


def test_the_gate_finds_the_policy_where_the_cli_does(tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    # No policy passed: ./legal-judge.policy.toml, as `audit gate` and the pytest marker use.
    monkeypatch.chdir(tmp_path)
    assert not gate_decision(_report("simulated:fair")).passed
    (tmp_path / "legal-judge.policy.toml").write_text("[certification]\nallow_simulated = true\n")
    decision = gate_decision(_report("simulated:fair"))
    assert decision.passed and decision.policy is not None and not decision.policy.bundled


def test_the_reaudit_flags_meet_a_stricter_policy() -> None:
    assert reaudit_flags(CertificationPolicy()) == ""  # audit run's defaults meet the default
    strict = CertificationPolicy(significance=0.01, min_sensitivity=0.8, pairs=100,
                                 equivalence_margin=0.3, probes=("hedge_only",))
    assert reaudit_flags(strict) == ("--significance 0.01 --min-sensitivity 0.8 --probes "
                                     "hedge_only --pairs 100 --equivalence-margin 0.3")
    # A policy that wants no probe names it as `audit run` takes it (it printed "--probes "), and a
    # higher floor of complete pairs is a flag too.
    assert reaudit_flags(CertificationPolicy(probes=(), min_complete_pairs=20)) == \
        "--probes none --min-complete-pairs 20"
