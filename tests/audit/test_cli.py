"""``legal-judge audit`` end to end through click (simulated judges, no network)."""

from __future__ import annotations

import json
from pathlib import Path

from pg_server import open_store

from legal_judge.audit.report import validate_report

from .helpers import DemoAudit, invoke


def test_demo_judge_flags_exactly_the_injected_biases(demo_audit: DemoAudit) -> None:
    report = demo_audit.report
    flagged = {d["dimension"] for d in report["dimension_results"] if d["flagged"]}
    assert flagged == {"verbosity", "authority"}
    assert {d["dimension"] for d in report["dimension_results"]} == {
        "position", "verbosity", "authority", "confidence", "formatting", "bandwagon", "sentiment",
        "demographic", "injection"}
    by_dim = {d["dimension"]: d for d in report["dimension_results"]}
    assert by_dim["verbosity"]["mean_difference"] > 0 and by_dim["authority"]["mean_difference"] > 0
    assert report["overall_assessment"]["total_dimensions_flagged"] == 2
    assert report["overall_assessment"]["severity"] in ("medium", "high")
    assert {s["dimension"] for s in report["remediation_steps"]} >= {"verbosity", "authority"}
    assert report["extensions"]["status"] == "complete"
    assert report["extensions"]["judge_id"]
    assert validate_report(report) == []
    assert "FLAG" in demo_audit.result.output


def test_gate_fails_a_biased_judge_at_any_severity_threshold(demo_audit: DemoAudit,
                                                             tmp_path: Path) -> None:
    # Only a certified judge passes: --max-severity critical no longer lets a biased judge through.
    home = demo_audit.copy_home(tmp_path / "home")
    strict = invoke(home, "audit", "gate", str(demo_audit.report_path), "--max-severity", "low")
    assert strict.exit_code == 1
    assert "above low" in strict.output and "the verdict is biased" in strict.output
    # A flag may only tighten the policy: a higher severity or allowing inconclusive is refused.
    for flags in (("--max-severity", "critical"), ("--allow-inconclusive",)):
        refused = invoke(home, "audit", "gate", str(demo_audit.report_path), *flags)
        assert refused.exit_code == 2, refused.output
        assert "loosens the policy" in refused.output and "--override" in refused.output
    lenient = invoke(home, "audit", "gate", str(demo_audit.report_path),
                     "--override", "max_severity=critical", "--override", "allow_inconclusive=true",
                     "--override", "allow_simulated=true")
    assert lenient.exit_code == 1, lenient.output
    assert "flagged dimensions: verbosity, authority" in lenient.output
    assert "policy override: certification.max_severity=critical (policy low)" in lenient.output


def test_verify_log_passes_then_fails_after_a_direct_sqlite_edit(demo_audit: DemoAudit,
                                                                 tmp_path: Path) -> None:
    home = demo_audit.copy_home(tmp_path / "home")
    ok = invoke(home, "audit", "verify-log")
    assert ok.exit_code == 0, ok.output
    assert "intact" in ok.output
    # An edit straight into the store (as someone with the file, or the server's rights, would).
    store = open_store(home)
    with store.transaction() as db:
        seq, payload = db.execute("SELECT seq, payload_json FROM audit_log "
                                  "WHERE kind = 'audit_finished'").fetchone()
        edited = json.loads(payload) | {"severity": "none"}
        db.execute("UPDATE audit_log SET payload_json = ? WHERE seq = ?", (json.dumps(edited), seq))
    store.close()
    bad = invoke(home, "audit", "verify-log")
    assert bad.exit_code == 1
    assert f"entry {seq}: content does not match its hash" in bad.output


def test_needed_exits_1_for_an_unaudited_judge_and_0_after_the_audit(demo_audit: DemoAudit,
                                                                    tmp_path: Path) -> None:
    home = demo_audit.copy_home(tmp_path / "home")
    assert invoke(home, "audit", "needed", "--judge", "simulated:demo-openai").exit_code == 0
    other = invoke(home, "audit", "needed", "--judge", "simulated:demo-google")
    assert other.exit_code == 1
    assert "no audit that judged something" in other.output


def test_insufficient_subgroups_stop_before_any_judge_call(tmp_path: Path) -> None:
    home = tmp_path / "home"
    out = tmp_path / "r.json"
    res = invoke(home, "audit", "run", "--judge", "simulated:demo-openai", "--pairs", "20",
                 "--dimensions", "verbosity,demographic", "--out", str(out))
    assert res.exit_code == 1
    report = json.loads(out.read_text())
    assert report["extensions"]["status"] == "INSUFFICIENT_DATA"
    assert report["extensions"]["subgroup_counts"]["demographic"] == {"group_a": 20, "group_b": 20}
    assert validate_report(report) == []
    db = open_store(home).db
    assert db.execute("SELECT COUNT(*) FROM judge_calls").fetchone()[0] == 0
    assert db.execute("SELECT status FROM audits").fetchone()[0] == "INSUFFICIENT_DATA"


def test_stats_from_pairs_scored_elsewhere(tmp_path: Path) -> None:
    rows = []
    for i in range(12):
        rows.append({"dimension": "verbosity", "pair_id": f"v{i}", "variant_a_input": f"long {i}",
                     "variant_a_score": 4.0 + (i % 3) * 0.1, "variant_b_input": f"short {i}",
                     "variant_b_score": 3.0 + (i % 4) * 0.1, "error": None})
    rows.append({"dimension": "verbosity", "pair_id": "v-err", "variant_a_input": "x",
                 "variant_a_score": None, "variant_b_input": "y", "variant_b_score": None,
                 "error": "judge timed out"})
    for i in range(5):
        rows.append({"dimension": "sentiment", "pair_id": f"s{i}", "variant_a_input": "a",
                     "variant_a_score": 3.0, "variant_b_input": "b", "variant_b_score": 3.0,
                     "error": None})
    pairs = tmp_path / "pairs.jsonl"
    pairs.write_text("".join(json.dumps(r) + "\n" for r in rows))
    out = tmp_path / "report.json"
    res = invoke(tmp_path / "home", "audit", "stats", str(pairs), "--out", str(out))
    assert res.exit_code == 0, res.output
    # The title said "bias audit  — judge  (None)".
    assert "bias statistics of pairs scored elsewhere" in res.output and "(None)" not in res.output
    report = json.loads(out.read_text())
    verb, sent = report["dimension_results"]
    assert verb["flagged"] is True and len(verb["test_pairs"]) == 12
    assert report["extensions"]["dimensions"]["verbosity"]["failed_pairs"][0]["error"] == \
        "judge timed out"
    assert sent["effect_size_interpretation"] == "insufficient data" and sent["p_value"] is None


def test_stats_rejects_bad_rows_with_line_numbers(tmp_path: Path) -> None:
    pairs = tmp_path / "pairs.jsonl"
    pairs.write_text('{"dimension": "x", "pair_id": "1", "variant_a_input": "a", '
                     '"variant_a_score": null, "variant_b_input": "b", "variant_b_score": 2}\n'
                     "not json\n")
    res = invoke(tmp_path / "home", "audit", "stats", str(pairs))
    assert res.exit_code == 2
    assert "pairs.jsonl:1" in res.output and "pairs.jsonl:2" in res.output


def test_high_stakes_judge_needs_an_approved_latest_audit(tmp_path: Path) -> None:
    home = tmp_path / "home"
    target = tmp_path / "judge.yaml"
    target.write_text("kind: judge\nspec: simulated:fair\nhigh_stakes: true\n")
    # The audit below is small and simulated: a reviewed policy file says that is enough here.
    policy = tmp_path / "policy.toml"
    policy.write_text('[certification]\npairs = 12\ndimensions = ["verbosity", "authority"]\n'
                      "allow_simulated = true\n")
    out = tmp_path / "r.json"
    run = invoke(home, "audit", "run", "--judge", str(target), "--pairs", "12",
                 "--dimensions", "verbosity,authority", "--noise-pairs", "4", "--out", str(out))
    assert run.exit_code == 0, run.output
    report = json.loads(out.read_text())
    assert report["extensions"]["high_stakes"] is True
    assert report["overall_assessment"]["severity"] == "none"
    blocked = invoke(home, "audit", "gate", str(out), "--max-severity", "low", "--policy",
                     str(policy))
    assert blocked.exit_code == 1 and "is not reviewed" in blocked.output
    audit_id = report["extensions"]["audit_id"]
    rejected = invoke(home, "audit", "review", audit_id, "--reject", "--reviewer", "A. Lawyer",
                      "--note", "pairs look fine, want more")
    assert rejected.exit_code == 0
    assert invoke(home, "audit", "gate", str(out), "--policy", str(policy)).exit_code == 1
    invoke(home, "audit", "review", audit_id, "--approve", "--reviewer", "A. Lawyer",
           "--note", "checked pairs and design")
    passed = invoke(home, "audit", "gate", audit_id, "--max-severity", "low", "--policy",
                    str(policy))
    assert passed.exit_code == 0, passed.output
    assert invoke(home, "audit", "verify-log").exit_code == 0


def test_diff_compares_effects_per_dimension(demo_audit: DemoAudit, tmp_path: Path) -> None:
    home = demo_audit.copy_home(tmp_path / "home")
    out = tmp_path / "fair.json"
    res = invoke(home, "audit", "run", "--judge", "simulated:fair", "--pairs", "60",
                 "--dimensions", "verbosity,authority,demographic", "--out", str(out))
    assert res.exit_code == 0, res.output
    # Two different judges are not comparable: exit 2 unless --force.
    refused = invoke(home, "audit", "diff", str(demo_audit.report_path), str(out))
    assert refused.exit_code == 2 and "not comparable" in refused.output
    diff = invoke(home, "audit", "diff", str(demo_audit.report_path), str(out), "--json", "--force")
    assert diff.exit_code == 0, diff.output
    rows = {r["dimension"]: r for r in json.loads(diff.stdout)}
    assert rows["verbosity"]["status"] == "resolved"
    assert rows["authority"]["effect_change"] < 0
    assert rows["position"]["status"] == "dropped"


def test_options_from_a_config_file_and_bad_keys(tmp_path: Path) -> None:
    home = tmp_path / "home"
    cfg = tmp_path / "audit.yaml"
    out = tmp_path / "r.json"
    cfg.write_text("judge: simulated:fair\ndimensions: [verbosity, sentiment]\npairs: 15\n"
                   "min-complete-pairs: 16\nsignificance: 0.01\ndisparity_threshold: 0.1\n")
    res = invoke(home, "audit", "run", "--config", str(cfg), "--out", str(out),
                 "--min-complete-pairs", "10")
    assert res.exit_code == 0, res.output
    report = json.loads(out.read_text())
    meta = report["audit_metadata"]
    assert meta["significance_threshold"] == 0.01 and meta["disparity_threshold"] == 0.1
    assert meta["num_dimensions"] == 2 and meta["num_test_pairs_per_dimension"] == 15
    assert report["extensions"]["min_complete_pairs"] == 10  # the command line wins
    cfg.write_text("pairz: 3\n")
    bad = invoke(home, "audit", "run", "--config", str(cfg), "--judge", "simulated:fair")
    assert bad.exit_code == 2 and "pairz" in bad.output


def test_gate_refuses_an_insufficient_data_report(tmp_path: Path) -> None:
    home = tmp_path / "home"
    out = tmp_path / "r.json"
    invoke(home, "audit", "run", "--judge", "simulated:fair", "--pairs", "10",
           "--dimensions", "demographic", "--out", str(out))
    res = invoke(home, "audit", "gate", str(out), "--override", "max_severity=critical")
    assert res.exit_code == 1 and "INSUFFICIENT_DATA" in res.output


def test_a_certified_verdict_under_weaker_settings_says_it_is_no_certificate_of_record(
        tmp_path: Path) -> None:
    # Walk of the audit area: `audit run` ended on "Certified: ..." for an audit the gate of
    # record refuses (here: one dimension, one probe, 12 pairs, a simulated judge).
    res = invoke(tmp_path / "home", "audit", "run", "--judge", "simulated:fair", "--dimensions",
                 "verbosity", "--pairs", "12", "--noise-pairs", "2", "--probes", "hedge_only",
                 "--json")
    assert res.exit_code == 0, res.output
    text = " ".join(res.output.split())
    assert "verdict: certified" in text
    assert "not a certificate of record under the policy: bundled default" in text
    assert "pairs 12 < policy 30 per dimension" in text
    doc = json.loads(res.stdout)
    (audit,) = doc["audits"]
    assert "simulated judge: not a judge of record (simulated:fair)" in audit["weaker_than_policy"]
