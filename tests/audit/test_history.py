"""Audits over time: only audits that judged something count, an ensemble needs every judge
audited, drift and diff compare the same base judge only; the traffic audit counts items once."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
from pg_server import open_store

from legal_judge.audit.history import audit_needed, prior_audit
from legal_judge.audit.traffic import once_per_item, traffic_audit

from .helpers import invoke

SMALL = ("--dimensions", "verbosity", "--pairs", "10", "--noise-pairs", "2", "--probes",
         "hedge_only", "--probe-pairs", "10")


def _audit_id(report: Path) -> str:
    return str(json.loads(report.read_text())["extensions"]["audit_id"])


def test_needed_ignores_audits_that_judged_nothing_and_checks_every_ensemble_judge(
        tmp_path: Path) -> None:
    home = tmp_path / "home"
    stopped = invoke(home, "audit", "run", "--judge", "demo", "--dimensions", "demographic",
                     "--pairs", "10")
    assert stopped.exit_code == 1 and "INSUFFICIENT_DATA" in stopped.output
    needed = invoke(home, "audit", "needed", "--judge", "demo")
    assert needed.exit_code == 1
    assert "3 of 3 judge(s) have no audit that judged something" in needed.output
    assert "judged nothing (INSUFFICIENT_DATA" in needed.output
    assert "fix: legal-judge audit run --judge demo\n" in needed.output
    # Issue 33: an ensemble's audit audits every judge (it audited the first one only).
    every = invoke(home, "audit", "run", "--judge", "demo", *SMALL)
    assert every.exit_code == 0, every.output
    done = invoke(home, "audit", "needed", "--judge", "demo")
    assert done.exit_code == 0, done.output
    assert done.output.count("audited by") == 3
    store = open_store(home)
    ids = [r[0] for r in store.db.execute("SELECT judge_id FROM audits WHERE status = "
                                          "'INSUFFICIENT_DATA'")]
    assert audit_needed(store, ids) == []  # audited since, by an audit that judged something


def test_drift_and_diff_only_compare_the_same_base_judge(tmp_path: Path) -> None:
    home = tmp_path / "home"
    a, b, c = (tmp_path / f"{n}.json" for n in "abc")
    aware = tmp_path / "aware.yaml"
    aware.write_text("kind: judge\nspec: simulated:demo-openai\ndebias: {mode: aware}\n")
    for judge, out in (("simulated:demo-openai", a), ("simulated:fair", b), (str(aware), c)):
        res = invoke(home, "audit", "run", "--judge", judge, *SMALL, "--out", str(out))
        assert res.exit_code == 0, res.output
    store = open_store(home)
    prior = prior_audit(store, _audit_id(c))
    assert prior is not None and prior["id"] == _audit_id(a)  # not the newer audit of fair
    assert prior["same_judge_id"] is False  # same base judge, another debias mode
    assert prior_audit(store, _audit_id(b)) is None
    assert prior_audit(store, _audit_id(a)) is None
    refused = invoke(home, "audit", "diff", str(a), str(b))
    assert refused.exit_code == 2
    assert "not comparable" in refused.output and "simulated:fair" in refused.output
    assert "--force" in refused.output
    forced = invoke(home, "audit", "diff", str(a), str(b), "--force")
    assert forced.exit_code == 0 and "compared anyway" in forced.output
    same = invoke(home, "audit", "diff", _audit_id(a), _audit_id(c))
    assert same.exit_code == 0, same.output
    assert "simulated:demo-openai" in same.output
    html = tmp_path / "c.html"
    assert invoke(home, "report", _audit_id(c), "--html", str(html)).exit_code == 0
    text = html.read_text()
    assert _audit_id(a) in text and _audit_id(b) not in text
    assert "Same base judge, another judge_id" in text
    html_b = tmp_path / "b.html"
    assert invoke(home, "report", _audit_id(b), "--html", str(html_b)).exit_code == 0
    assert "No prior audit of this base judge (simulated:fair" in html_b.read_text()


def _repeated(n_items: int = 60) -> list[dict]:
    rng = np.random.default_rng(0)
    rows = []
    for run in range(3):  # the same items judged in three runs
        for region, shift in (("eu", 0.0), ("us", 0.0), ("mena", -0.6)):
            for i in range(n_items if region != "mena" else 20):
                rows.append({"item_id": f"{region}-{i}", "run_id": f"r{run}",
                             "created_at": f"2030-01-0{run + 1}T00:00:00+00:00",
                             "score": float(rng.normal(3.5 + shift, 0.5)),
                             "metadata": {"client_region": region}})
    return rows


def test_traffic_counts_each_item_once_with_its_latest_score() -> None:
    rows = _repeated()
    kept, counts = once_per_item(rows)
    assert counts == {"items": 140, "repeats_dropped": 280, "unidentified": 0}
    assert {r["run_id"] for r in kept} == {"r2"}  # the latest run
    res = traffic_audit(rows, attribute="metadata.client_region", min_sample=50)
    # 20 mena items judged three times are 20 observations, not 60: too few to compare.
    assert res["group_sizes"] == {"eu": 60, "mena": 20, "us": 60}
    assert res["too_small"] == ["mena"]
    assert "each item counted once, with its latest score (280 older" in res["counting"]
    assert res["reference"] == "us" and res["reference_why"] == "the largest group"
    assert "reference group 'us'" in res["summary"]


def test_traffic_cli_names_the_reference_group_and_refuses_an_unknown_one(tmp_path: Path) -> None:
    export = tmp_path / "scores.jsonl"
    rows = [r for r in _repeated(80) if r["metadata"]["client_region"] != "mena"]
    export.write_text("".join(json.dumps(r) + "\n" for r in rows))
    res = invoke(tmp_path / "home", "audit", "traffic", "--since", "2029-12-01", "--attribute",
                 "metadata.client_region", "--input", str(export))
    assert res.exit_code == 0, res.output
    assert "reference group: us (80 items, the largest group)" in " ".join(res.output.split())
    assert "320 older score(s) of 160 item(s) set aside" in " ".join(res.output.split())
    bad = invoke(tmp_path / "home", "audit", "traffic", "--since", "2029-12-01", "--attribute",
                 "metadata.client_region", "--input", str(export), "--reference", "apac")
    assert bad.exit_code == 2 and "use one of: eu, us" in bad.output
