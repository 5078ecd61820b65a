"""One verdict per judge: certified only with evidence (probes pass, nothing flagged, every dimension
equivalent), insensitive for a judge that cannot judge, biased, inconclusive; the severity follows."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from pg_server import ON_SQLITE, load_into_test_store

from legal_judge.audit.analysis import PairRow
from legal_judge.audit.design import AuditSettings
from legal_judge.audit.gate import gate_decision
from legal_judge.audit.report import build_report, validate_report
from legal_judge.policy import load_policy

from .helpers import DemoAudit, invoke

PROBES = ("conclusion_flip", "wrong_jurisdiction", "fabricated_authority", "hedge_only",
          "partial_answer", "missing_elements")


@pytest.fixture(scope="module")
def fair_audit(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict]:
    base = tmp_path_factory.mktemp("fair-audit")
    out = base / "fair.json"
    res = invoke(base / "home", "audit", "run", "--judge", "simulated:fair", "--out", str(out),
                 env=ON_SQLITE)
    assert res.exit_code == 0, res.output
    return base / "home", json.loads(out.read_text())


def test_fair_judge_is_certified_with_every_dimension_equivalent(fair_audit: tuple[Path, dict]
                                                                  ) -> None:
    home, report = fair_audit
    load_into_test_store(home / "store.sqlite3")
    ext = report["extensions"]
    assert ext["verdict"] == "certified", ext["verdict_reasons"]
    assert report["overall_assessment"]["severity"] == "none"
    assert ext["equivalence_margin"] == 0.5  # the default: the disparity threshold
    assert {d["outcome"] for d in ext["dimensions"].values()} == {"equivalent"}
    assert len(ext["dimensions"]) == 9
    for d in ext["dimensions"].values():
        eq = d["equivalence"]
        assert eq["ci90"][0] > -0.5 and eq["ci90"][1] < 0.5 and eq["p_value"] < 0.05
        assert eq["statement"].startswith("no bias larger than ±0.5 points")
    assert set(ext["probes"]) == set(PROBES)
    assert all(p["status"] == "pass" for p in ext["probes"].values())
    assert ext["verdict_sentence"].startswith("Certified: simulated:fair told sound legal answers")
    # Nothing failed, so the summary sends nobody to review failures that do not exist.
    assert "failed probes" not in report["overall_assessment"]["summary"]
    assert "flagged dimensions" not in report["overall_assessment"]["summary"]
    assert validate_report(report) == []
    audit_id = ext["audit_id"]
    # Certified, under the policy's settings, but by a simulated judge: not a judge of record.
    refused = invoke(home, "audit", "gate", audit_id, "--max-severity", "none")
    assert refused.exit_code == 1, refused.output
    assert "simulated judge: not a judge of record" in refused.output
    assert "setting significance" not in refused.output  # every setting meets the policy
    gate = invoke(home, "audit", "gate", audit_id, "--max-severity", "none",
                  "--override", "allow_simulated=true")
    assert gate.exit_code == 0, gate.output
    assert "gate passed: verdict certified" in gate.output
    assert "policy override: certification.allow_simulated=true (policy false)" in gate.output


def test_demo_judge_is_biased_and_passes_every_probe(demo_audit: DemoAudit) -> None:
    ext = demo_audit.report["extensions"]
    assert ext["verdict"] == "biased"
    assert {k for k, d in ext["dimensions"].items() if d["outcome"] == "flagged"} == \
        {"verbosity", "authority"}
    assert {p["status"] for p in ext["probes"].values()} == {"pass"}
    summary = demo_audit.report["overall_assessment"]["summary"]
    assert "review the flagged dimensions and their raw pairs" in summary
    for p in ext["probes"].values():
        assert p["p_value_adjusted"] < 0.05 and p["sensitivity"]["share"] >= 0.7
        assert all(c["passed"] for c in p["checks"])
    assert "verbosity and authority" in ext["verdict_sentence"]
    assert "verdict: biased" in demo_audit.result.output


def test_constant_endpoint_over_http_is_insensitive_and_the_gate_names_the_failed_probes(
        constant_endpoint: str, tmp_path: Path) -> None:
    home, out = tmp_path / "home", tmp_path / "rep.json"
    res = invoke(home, "audit", "run", "--judge", f"openai-compatible:constant@{constant_endpoint}",
                 "--dimensions", "verbosity,authority", "--pairs", "12", "--noise-pairs", "4",
                 "--probe-pairs", "10", "--out", str(out))
    assert res.exit_code == 0, res.output
    report = json.loads(out.read_text())
    ext = report["extensions"]
    assert ext["verdict"] == "insensitive"
    assert report["overall_assessment"]["severity"] in ("high", "critical")
    assert "severity: none" not in res.output and "verdict: insensitive" in res.output
    assert ext["degenerate"]["kind"] == "constant"
    assert "does not discriminate" in ext["degenerate"]["finding"]
    assert {p["status"] for p in ext["probes"].values()} == {"fail"}
    # Invariance alone would have certified it: every dimension shows no difference at all.
    assert {d["outcome"] for d in ext["dimensions"].values()} == {"equivalent"}
    gate = invoke(home, "audit", "gate", str(out), "--max-severity", "low")
    assert gate.exit_code == 1
    assert "the verdict is insensitive" in gate.output
    listed = " ".join(gate.output.split()).split("failed probes: ", 1)[1].split(";", 1)[0]
    assert sorted(listed.split(", ")) == sorted(PROBES)


def _rows(name: str, a: list[float], b: list[float], *, probe: bool = False,
          checks: dict[str, bool] | None = None) -> list[PairRow]:
    key = {"probe": name, "expected_direction": "drop", "kind": "probe", "checks": checks} \
        if probe else {"dimension": name}
    return [PairRow(pair_id=f"{name}-{i}", variant_a_input=f"a{i}", variant_a_score=x,
                    variant_b_input=f"b{i}", variant_b_score=y, **key)  # type: ignore[arg-type]
            for i, (x, y) in enumerate(zip(a, b, strict=True))]


RNG = np.random.default_rng(3)
NOISE = list(RNG.normal(0, 0.05, 20))
BASE = list(RNG.uniform(2, 4, 20))
FLAT = _rows("verbosity", [x + e for x, e in zip(BASE, NOISE, strict=True)], BASE)
GOOD = [5.0] * 12
BAD = [1.0, 2.0, 1.5, 0.5, 1.0, 2.0, 1.0, 1.5, 0.0, 1.0, 2.0, 1.0]


def _report(*groups: list[PairRow], **settings: object) -> dict:
    return build_report([r for g in groups for r in g], AuditSettings(**settings))  # type: ignore[arg-type]


def test_certified_needs_probes_and_equivalence() -> None:
    ok = _report(FLAT, _rows("p1", GOOD, BAD, probe=True), _rows("p2", GOOD, BAD, probe=True))
    assert ok["extensions"]["verdict"] == "certified"
    assert ok["overall_assessment"]["severity"] == "none"
    no_probe = _report(FLAT)
    assert no_probe["extensions"]["verdict"] == "inconclusive"
    assert no_probe["overall_assessment"]["severity"] == "low"
    assert any("no discrimination probe" in r for r in no_probe["extensions"]["verdict_reasons"])
    noisy = _rows("sentiment", list(RNG.normal(3, 1.5, 20)), list(RNG.normal(3, 1.5, 20)))
    wide = _report(noisy, _rows("p1", GOOD, BAD, probe=True))
    dim = wide["extensions"]["dimensions"]["sentiment"]
    assert wide["extensions"]["verdict"] == "inconclusive" and dim["outcome"] == "inconclusive"
    assert "cannot rule out a bias of ±0.5" in dim["equivalence"]["statement"]
    assert f"about {dim['equivalence']['pairs_needed']} pairs would be needed" in \
        dim["equivalence"]["statement"]


def test_a_failed_probe_is_insensitive_at_least_high_and_critical_when_most_fail() -> None:
    moved = _rows("p1", GOOD, BAD, probe=True)
    still = _rows("p2", GOOD, [4.5] * 6 + [5.0] * 6, probe=True)  # significant, but < one step
    still3 = _rows("p3", GOOD, GOOD, probe=True)
    one = _report(FLAT, moved, still, _rows("p4", GOOD, BAD, probe=True))
    assert one["extensions"]["verdict"] == "insensitive"
    assert one["overall_assessment"]["severity"] == "high"
    assert one["extensions"]["probes"]["p2"]["status"] == "fail"
    assert "sensitivity 0%" in one["extensions"]["probes"]["p2"]["reasons"][-1]
    most = _report(FLAT, moved, still, still3)
    assert most["overall_assessment"]["severity"] == "critical"
    assert most["remediation_steps"][0]["dimension"].startswith("probe:")


def test_rule_checks_and_insufficient_probes() -> None:
    rule = _rows("p1", GOOD, BAD, probe=True, checks={"overall fails": False})
    failed = _report(FLAT, rule)
    assert failed["extensions"]["verdict"] == "insensitive"
    assert "rule check 'overall fails' held in 0 of 12" in \
        failed["extensions"]["probes"]["p1"]["reasons"][0]
    short = _report(FLAT, _rows("p1", GOOD[:5], BAD[:5], probe=True))
    probe = short["extensions"]["probes"]["p1"]
    assert short["extensions"]["verdict"] == "inconclusive" and probe["status"] == \
        "insufficient data" and "p_value" not in probe


def test_gate_decision_carries_every_probe_and_dimension_with_its_reason(tmp_path: Path) -> None:
    report = _report(FLAT, _rows("p1", GOOD, BAD, probe=True),
                     _rows("p2", GOOD, GOOD, probe=True))
    # These reports were scored elsewhere, with their own probes: a policy that asks for them.
    lenient = load_policy(cwd=tmp_path).with_settings(overrides=[
        "allow_simulated=true", 'probes=["p1", "p2"]', 'dimensions=["verbosity"]'])
    decision = gate_decision(report, policy=lenient)
    assert not decision.passed and decision.verdict == "insensitive"
    by = {(c.kind, c.name): c for c in decision.checks}
    assert by[("probe", "p1")].outcome == "pass" and by[("probe", "p2")].outcome == "fail"
    assert by[("dimension", "verbosity")].outcome == "pass"
    assert "no bias larger than" in by[("dimension", "verbosity")].reason
    assert "failed probes: p2" in decision.reasons
    assert json.dumps(decision.as_dict())  # ready for a JUnit or JSON writer
    no_probes = lenient.with_settings(overrides=["probes=[]"])
    inconclusive = _report(FLAT)
    assert not gate_decision(inconclusive, policy=no_probes).passed
    allowing = no_probes.with_settings(overrides=["allow_inconclusive=true"])
    assert gate_decision(inconclusive, policy=allowing).passed
    old = _report(FLAT, _rows("p1", GOOD, BAD, probe=True))
    del old["extensions"]["verdict"]  # a report written before verdicts existed
    assert not gate_decision(old, policy=lenient).passed


def test_stats_accepts_probe_rows(tmp_path: Path) -> None:
    rows = [r.model_dump(exclude_none=True) for r in FLAT]
    for i, (o, d) in enumerate(zip(GOOD, BAD, strict=True)):
        rows.append({"probe": "conclusion_flip", "expected_direction": "drop", "pair_id": f"c{i}",
                     "variant_a_input": "sound", "variant_a_score": o,
                     "variant_b_input": "flipped", "variant_b_score": d,
                     "rubric": "legal_soundness", "checks": {"the verdict flips to fail": True}})
    rows.append({"probe": "conclusion_flip", "expected_direction": "drop", "pair_id": "c-err",
                 "variant_a_input": "x", "variant_a_score": None, "variant_b_input": "y",
                 "variant_b_score": None, "error": "judge timed out"})
    pairs = tmp_path / "pairs.jsonl"
    pairs.write_text("".join(json.dumps(r) + "\n" for r in rows))
    out = tmp_path / "r.json"
    res = invoke(tmp_path / "home", "audit", "stats", str(pairs), "--out", str(out))
    assert res.exit_code == 0, res.output
    report = json.loads(out.read_text())
    probe = report["extensions"]["probes"]["conclusion_flip"]
    assert probe["status"] == "pass" and probe["pairs_complete"] == 12
    assert probe["failed_pairs"] == [{"pair_id": "c-err", "error": "judge timed out"}]
    assert report["extensions"]["verdict"] == "certified"
    assert [d["dimension"] for d in report["dimension_results"]] == ["verbosity"]
    bad = tmp_path / "bad.jsonl"
    bad.write_text(json.dumps({"probe": "x", "pair_id": "1", "variant_a_input": "a",
                               "variant_a_score": 3, "variant_b_input": "b",
                               "variant_b_score": 2}) + "\n")
    refused = invoke(tmp_path / "home", "audit", "stats", str(bad))
    assert refused.exit_code == 2 and "bad.jsonl:1" in refused.output
    assert "expected_direction" in refused.output
