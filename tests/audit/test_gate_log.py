"""The audit gate checks the report against the audit log: a report edited after the audit, or one
the store's log does not hold, never certifies a judge without a printed override."""

from __future__ import annotations

import copy
import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from pg_server import ON_SQLITE, load_into_test_store, open_store

from legal_judge.audit.gate import gate_decision
from legal_judge.policy import load_policy

from .helpers import DemoAudit, invoke

# A small audit of a simulated judge: a policy that lets that through (printed overrides) leaves
# the audit log as the one thing the gate can still refuse on.
LENIENT = ["allow_simulated=true", "pairs=12", 'dimensions=["verbosity"]',
           'probes=["hedge_only"]']


@pytest.fixture(scope="module")
def small_audit(tmp_path_factory: pytest.TempPathFactory) -> DemoAudit:
    """A certified audit of ``simulated:fair`` on one dimension and one probe."""
    base = tmp_path_factory.mktemp("small-audit")
    out = base / "report.json"
    result = invoke(base / "home", "audit", "run", "--judge", "simulated:fair", "--dimensions",
                    "verbosity", "--pairs", "12", "--noise-pairs", "2", "--probes", "hedge_only",
                    "--out", str(out), env=ON_SQLITE)
    assert result.exit_code == 0, result.output
    report = json.loads(out.read_text(encoding="utf-8"))
    assert report["extensions"]["verdict"] == "certified"
    return DemoAudit(base / "home", out, report, result)


@pytest.fixture
def insensitive(demo_audit: DemoAudit, tmp_path: Path) -> DemoAudit:
    """The demo audit (a biased judge) in a private home."""
    demo_audit.copy_home(tmp_path / "home")
    return DemoAudit(tmp_path / "home", demo_audit.report_path, demo_audit.report,
                     demo_audit.result)


def _certified(report: dict[str, Any]) -> dict[str, Any]:
    """``report`` edited by hand into a certificate (verdict, severity, every probe and
    dimension), as someone with the file could."""
    forged = copy.deepcopy(report)
    ext = forged["extensions"]
    ext["verdict"], forged["overall_assessment"]["severity"] = "certified", "none"
    for probe in ext["probes"].values():
        probe["status"], probe["reasons"] = "pass", []
    for dim in ext["dimensions"].values():
        dim["outcome"] = "equivalent"
        dim["equivalence"] = dim.get("equivalence") or {"statement": "equivalent"}
    for d in forged["dimension_results"]:
        d["flagged"] = False
    return forged


def test_a_report_edited_into_a_certificate_fails_the_gate(insensitive: DemoAudit,
                                                           tmp_path: Path) -> None:
    home, report = insensitive.home, insensitive.report
    store = open_store(home)
    policy = load_policy().with_settings(overrides=["allow_simulated=true"])
    audit_id = report["extensions"]["audit_id"]
    # The report as the audit wrote it matches its log entry (and fails on its verdict).
    honest = gate_decision(report, policy=policy, store=store)
    assert [c.outcome for c in honest.checks if c.kind == "audit log"] == ["pass"]
    assert not honest.passed and "the verdict is biased" in honest.reasons[0]
    # Before the fix the gate read the file's verdict as it stood: "gate passed".
    forged = gate_decision(_certified(report), policy=policy, store=store)
    assert not forged.passed
    assert forged.reasons == [next(c.reason for c in forged.failed("audit log"))]
    assert forged.reasons[0].startswith(f"report edited after the audit: it is not the report "
                                        f"{audit_id} logged")
    # allow_unlogged excuses a report the log does not hold, never one that contradicts it.
    unlogged = policy.with_settings(overrides=["allow_unlogged=true"])
    assert not gate_decision(_certified(report), policy=unlogged, store=store).passed
    store.close()
    # Through the CLI: exit 1, naming the edit and the stored audit to gate instead.
    path = tmp_path / "forged.json"
    path.write_text(json.dumps(_certified(report)), encoding="utf-8")
    res = invoke(home, "audit", "gate", str(path), "--override", "allow_simulated=true")
    assert res.exit_code == 1, res.output
    text = " ".join(res.output.split())
    assert "gate passed" not in text and "report edited after the audit" in text
    assert f"legal-judge audit gate {audit_id}" in text


def test_a_certificate_passes_only_in_the_store_that_logged_it(small_audit: DemoAudit,
                                                               tmp_path: Path) -> None:
    policy = load_policy().with_settings(overrides=LENIENT)
    home = tmp_path / "home"
    shutil.copytree(small_audit.home, home)
    load_into_test_store(home / "store.sqlite3")
    args = [a for o in LENIENT for a in ("--override", o)]
    assert invoke(home, "audit", "gate", str(small_audit.report_path), *args).exit_code == 0
    # Another store (a fresh home, as in a CI job without the audit's store): not in its log.
    elsewhere = tmp_path / "elsewhere"
    res = invoke(elsewhere, "audit", "gate", str(small_audit.report_path), *args, env=ON_SQLITE)
    assert res.exit_code == 1, res.output
    assert "report not in this store's audit log" in " ".join(res.output.split())
    allowed = invoke(elsewhere, "audit", "gate", str(small_audit.report_path), *args,
                     "--override", "allow_unlogged=true", env=ON_SQLITE)
    assert allowed.exit_code == 0, allowed.output
    assert "policy override: certification.allow_unlogged=true (policy false)" in allowed.output
    # The same decision through the library, with the store given.
    store = open_store(home)
    assert gate_decision(small_audit.report, policy=policy, store=store).passed
    store.close()
