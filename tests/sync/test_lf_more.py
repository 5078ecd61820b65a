"""Datasets, the experiment evaluator, audits, calibrations, human labels, the stand-in itself."""

from __future__ import annotations

import base64
import json
from pathlib import Path

import httpx
import pytest
from click.testing import CliRunner
from lf_fixtures import CLIENT, RUBRICS, make_run
from standin import LangfuseStandin, validate

from legal_judge.cli import cli
from legal_judge.commands.langfuse import datasets, sync
from legal_judge.errors import ConfigError
from legal_judge.models import EnsembleResult
from legal_judge.store import Store, canonical_json, utcnow
from legal_judge.sync.langfuse_client import client_for
from legal_judge.sync.langfuse_datasets import load_langfuse_dataset, push_dataset
from legal_judge.sync.langfuse_evaluators import ensemble_evaluator
from legal_judge.sync.mask import Masker, load_masker
from legal_judge.sync.outbox import EntityKind, enqueue
from legal_judge.sync.plan import det_id, item_trace_id
from legal_judge.sync.settings import require_settings
from legal_judge.sync.sink import get_sink


def _bench(tmp_path: Path) -> Path:
    path = tmp_path / "bench.jsonl"
    rows = [{"id": f"b{i}", "prompt": f"Question {i} for {CLIENT}?", "response": f"Answer {i}",
             "jurisdiction": "France", "expected_signals": ["art. 1103"]} for i in range(3)]
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n", encoding="utf-8")
    return path


def test_dataset_push_and_load(standin: LangfuseStandin, tmp_path: Path) -> None:
    path = _bench(tmp_path)
    out = CliRunner().invoke(datasets, ["push", str(path), "--name", "gold-fr"])
    assert out.exit_code == 0, out.output
    assert push_dataset(path, name="gold-fr") == 3  # upsert by id: still 3 items
    assert len(standin.state.dataset_items) == 3
    items = load_langfuse_dataset("gold-fr")
    assert [i.id for i in items] == ["b0", "b1", "b2"]
    # The file's "France" is read as its code (issue 33), and pushed as such.
    assert items[0].jurisdiction == "FR" and items[0].expected_signals == ["art. 1103"]
    assert items[0].dataset == "langfuse:gold-fr"
    assert det_id("dataset:gold-fr:b0") in standin.state.dataset_items


def test_ensemble_evaluator_in_run_experiment(standin: LangfuseStandin) -> None:
    seen = []

    def score_fn(item):  # type: ignore[no-untyped-def]
        seen.append(item)
        return EnsembleResult(item_id=item.id, status="ok", scores={"legal_soundness": 4.0},
                              hallucination="clean", overall="pass", valid_judges=3)

    lf = client_for(require_settings()).lf
    result = lf.run_experiment(
        name="lj-exp", data=[{"input": {"id": "e1", "prompt": "Is a verbal lease valid?"}}],
        task=lambda *, item, **kw: "Yes, up to three years.",
        evaluators=[ensemble_evaluator(score_fn)])
    lf.flush()
    assert seen[0].id == "e1" and seen[0].response == "Yes, up to three years."
    evals = {e.name: e for e in result.item_results[0].evaluations}
    assert evals["legal_soundness"].value == 4.0 and evals["overall"].value == 1.0
    assert evals["hallucination"].data_type == "CATEGORICAL"
    names = {s["name"] for s in standin.state.scores.values()}
    assert {"legal_soundness", "overall", "hallucination"} <= names
    assert not standin.state.rejected


def _audit(store: Store) -> None:
    report = {"dimension_results": [
        {"dimension": "verbosity", "mean_difference": 0.6, "p_value": 0.01, "effect_size": 0.7,
         "flagged": True, "test_pairs": [{"variant_a_input": f"{CLIENT} long"}]},
        {"dimension": "position", "mean_difference": 0.0, "p_value": 1.0, "effect_size": 0.0,
         "flagged": False, "test_pairs": []}],
        "overall_assessment": {"total_dimensions_flagged": 1, "severity": "medium",
                               "summary": f"verbosity bias on {CLIENT} answers"}}
    with store.transaction() as db:
        db.execute("INSERT INTO audits (id, created_at, judge_id, status, severity, config_json, "
                   "report_json) VALUES (?, ?, ?, ?, ?, ?, ?)",
                   ("aud-1", utcnow(), "jid", "done", "medium", canonical_json({"n": 50}),
                    canonical_json(report)))


def test_audit_calibration_and_labels(standin: LangfuseStandin, store: Store,
                                      monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    mask = tmp_path / "m.yaml"
    mask.write_text(f"names: ['{CLIENT}']\n", encoding="utf-8")
    monkeypatch.setenv("LEGAL_JUDGE_MASK_FILE", str(mask))
    make_run(store)
    _audit(store)
    with store.transaction() as db:
        db.execute("INSERT INTO calibrations VALUES (?, ?, ?, ?, ?, ?, ?)",
                   ("cal-1", "run-1", "2026Q1", "jid", "legal_judge_set@1", utcnow(),
                    canonical_json({"threshold": 0.5, "recalibrate": True, "per_rubric": {
                        "legal_soundness": {"gpt.mean_divergence": 0.7, "gpt.kappa": None}}})))
        for rubric, score in (("legal_soundness", "3"), ("hallucination", "clean"),
                              ("overall", "pass"), ("unknown_rubric", "2")):
            db.execute("INSERT INTO human_labels (item_id, run_id, rubric, score, annotator, "
                       "labeled_at, source, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                       ("q0", "run-1", rubric, score, "lawyer-a", "2026-01-15", "csv", utcnow()))
    sink = get_sink()
    sink.enqueue_run(store, "run-1")
    sink.enqueue_audit(store, "aud-1")
    enqueue(store, EntityKind.CALIBRATION, "cal-1")  # what calibration and labels queue
    enqueue(store, EntityKind.HUMAN_LABELS, "run-1")
    report = sink.flush(store, timeout_s=20)
    assert report.delivered == 4 and report.pending == 0, report
    assert any("unknown_rubric" in n for n in report.notes)
    scores = list(standin.state.scores.values())
    audit_tid, cal_tid = det_id("audit:aud-1"), det_id("calibration:cal-1")
    audit = {s["name"]: s["value"] for s in scores if s["traceId"] == audit_tid}
    assert audit["bias.verbosity.flagged"] == 1 and audit["bias.position.flagged"] == 0
    assert audit["bias.verbosity.effect_size"] == 0.7 and audit["bias.severity"] == "medium"
    cal = {s["name"]: s["value"] for s in scores if s["traceId"] == cal_tid}
    assert cal["calibration.gpt.mean_divergence"] == 0.7 and cal["calibration.recalibrate"] == 1
    assert "calibration.gpt.kappa" not in cal  # None is not a score
    human = [s for s in scores if s.get("source") == "ANNOTATION"]
    assert {s["name"] for s in human} == {"legal_soundness", "hallucination", "overall"}
    assert {s["traceId"] for s in human} == {item_trace_id("run-1", "q0")}  # judges' trace
    assert all(s["configId"] for s in human)
    guard = [o for o in standin.state.observations.values() if o["name"] == "bias.verbosity"]
    assert guard[0]["attributes"]["langfuse.observation.level"] == "WARNING"
    assert CLIENT not in standin.received_text() and not standin.state.rejected


def test_sync_cli_status_and_delivery(standin: LangfuseStandin, tmp_path: Path) -> None:
    store = Store()  # the CLI's store: $LEGAL_JUDGE_HOME
    make_run(store, n_items=1)
    get_sink().enqueue_run(store, "run-1")
    store.close()
    runner = CliRunner()
    out = runner.invoke(sync, ["--status"])
    assert out.exit_code == 0 and "pending: 1" in out.output, out.output
    out = runner.invoke(sync, [])
    assert out.exit_code == 0 and "delivered 1" in out.output, out.output
    assert runner.invoke(sync, ["--status"]).output.startswith("pending: 0")


def test_standin_checks_auth_and_bodies(standin: LangfuseStandin) -> None:
    bad = httpx.post(f"{standin.base_url}/api/public/scores", json=[],
                     headers={"Authorization": "Basic " + base64.b64encode(b"pk:nope").decode()})
    assert bad.status_code == 401
    from langfuse.api.scores import CreateScoreRequest

    with pytest.raises(Exception, match="unknown keys"):
        validate(CreateScoreRequest, {"name": "x", "value": 1, "traceID": "typo"})
    good = {"Authorization": "Basic " + base64.b64encode(
        f"{standin.public_key}:{standin.secret_key}".encode()).decode()}
    r = httpx.post(f"{standin.base_url}/api/public/otel/v1/traces", content=b"",
                   headers={**good, "Content-Type": "application/x-protobuf"})
    assert r.status_code == 400  # no x-langfuse-ingestion-version: 4
    assert httpx.get(f"{standin.base_url}/api/public/nothing", headers=good).status_code == 404


def test_wrong_keys_leave_the_outbox(standin: LangfuseStandin, store: Store,
                                     monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("LANGFUSE_SECRET_KEY", "sk-wrong")
    make_run(store, n_items=1)
    sink = get_sink()
    sink.enqueue_run(store, "run-1")
    report = sink.flush(store, timeout_s=5)
    assert report.delivered == 0 and report.pending == 1 and report.errors
    assert report.keys_refused and "Langfuse refused the keys" in report.advice
    # Defect: refused keys exited 3 ("check Langfuse is reachable", a rerun resumes), although
    # no rerun delivers until the user fixes the keys: exit 2 with the keys' fix, as `doctor`.
    runner = CliRunner()
    refused = runner.invoke(cli, ["sync"])
    assert refused.exit_code == 2, refused.output
    assert "HTTP 401" in refused.output and "LANGFUSE_SECRET_KEY" in refused.output
    assert "reachable" not in refused.output
    assert store.outbox_status()["pending"] == 1  # nothing lost
    pushed = runner.invoke(cli, ["datasets", "push", str(_bench(tmp_path)), "--name", "x"])
    assert pushed.exit_code == 2 and "LANGFUSE_PUBLIC_KEY" in pushed.output, pushed.output
    # Partly configured: the missing variable is named (it said "not configured").
    monkeypatch.delenv("LANGFUSE_SECRET_KEY")
    partial = runner.invoke(cli, ["sync"])
    assert partial.exit_code == 2 and "partly configured: LANGFUSE_SECRET_KEY missing" in \
        partial.output, partial.output


def test_mask_unit(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    m = Masker(patterns=(r"\b\d{3}-\d{2}-\d{4}\b",), names=("Acme", "Acme Holdings Ltd"))
    assert m("acme holdings ltd and ACME, SSN 123-45-6789; Acmex") == \
        "[REDACTED] and [REDACTED], SSN [REDACTED]; Acmex"
    assert m.deep({"Acme": ["Acme"], "n": 1}) == {"[REDACTED]": ["[REDACTED]"], "n": 1}
    bad = tmp_path / "bad.yaml"
    bad.write_text("patterns: ['(']\n", encoding="utf-8")
    with pytest.raises(ConfigError):
        load_masker(bad)
    monkeypatch.delenv("LEGAL_JUDGE_MASK_FILE", raising=False)
    assert load_masker()("Acme") == "Acme"
    assert RUBRICS


def test_calibration_sample_creates_an_annotation_queue(standin: LangfuseStandin,
                                                        store: Store, tmp_path: Path) -> None:
    import csv

    from legal_judge.cli import cli
    from legal_judge.sync.plan import item_trace_id

    make_run(store, judge_prompt_version=1)
    out = tmp_path / "sample.csv"
    res = CliRunner().invoke(cli, ["calibrate", "sample", "run-1", "--n", "2", "--seed", "3",
                                   "--out", str(out)],
                             env={"LEGAL_JUDGE_HOME": str(tmp_path)})
    assert res.exit_code == 0, res.output
    sampled = {row["item_id"] for row in csv.DictReader(out.open(encoding="utf-8-sig"))}
    (queue,) = standin.state.queues.values()
    cfg_names = {standin.state.score_configs[c]["name"] for c in queue["scoreConfigIds"]}
    assert {"legal_soundness", "citation_quality", "hallucination"} <= cfg_names
    assert {i["objectId"] for i in queue["items"]} == {item_trace_id("run-1", i) for i in sampled}
    assert all(i["objectType"] == "TRACE" for i in queue["items"]) and len(sampled) == 2
    assert not standin.state.rejected
