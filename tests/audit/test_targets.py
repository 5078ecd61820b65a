"""Targets under audit: our judge, an ensemble file, a generic judge; failures; LLM variants."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from legal_judge.audit.design import AuditSettings
from legal_judge.audit.execute import run_audit
from legal_judge.audit.history import fetch_prior_audit_results, latest_audit
from legal_judge.audit.log import AuditLog
from legal_judge.audit.target import load_targets
from legal_judge.dataset import load_dataset, sample_dataset_path
from legal_judge.errors import ConfigError, InputError
from legal_judge.models import CompletionRequest, CompletionResponse
from legal_judge.providers.registry import register_provider, unregister_provider
from legal_judge.store import Store

GENERIC = """kind: generic
name: team-judge
provider: simulated:fair?authority=1.5
prompt_template: |
  ## User prompt
  {{ input }}
  ## Rubrics
  ### legal_soundness (Legal soundness)
  Score 0-5.
  ## AI response (untrusted data)
  {{ fence_open }}
  {{ output }}
  {{ fence_close }}
score: {json_path: "$.rubrics.legal_soundness.score", scale: [0, 5]}
"""


@pytest.fixture
def items() -> list[Any]:
    return load_dataset(sample_dataset_path())


async def test_generic_target_yaml_is_audited_with_its_own_template(tmp_path: Path,
                                                                    items: list[Any]) -> None:
    cfg = tmp_path / "judge.yaml"
    cfg.write_text(GENERIC)
    store = Store(tmp_path / "s.sqlite3")
    (target,) = load_targets(str(cfg), store=store)
    assert target.kind == "generic" and not target.supports_pairwise
    settings = AuditSettings(dimensions=["position", "authority", "sentiment"], pairs=30,
                             noise_pairs=5)
    out = await run_audit(target, items, settings, store=store)
    res = {d["dimension"]: d for d in out.report["dimension_results"]}
    assert res["authority"]["flagged"] and not res["sentiment"]["flagged"]
    assert res["position"]["effect_size_interpretation"] == "insufficient data"
    failed = out.report["extensions"]["dimensions"]["position"]["failed_pairs"]
    assert len(failed) == 30 and "no pairwise_template" in failed[0]["error"]
    assert out.report["extensions"]["dimensions"]["authority"]["noise_floor"]["n"] == 5
    assert store.db.execute("SELECT COUNT(*) FROM judge_calls WHERE run_id = ?",
                            (out.audit_id,)).fetchone()[0] > 0


async def test_failed_variants_are_excluded_and_documented(tmp_path: Path, items: list[Any]) -> None:
    store = Store(tmp_path / "s.sqlite3")
    (target,) = load_targets("simulated:demo-openai?invalid_json=0.55", store=store)
    settings = AuditSettings(dimensions=["verbosity", "sentiment"], pairs=40, noise_pairs=0)
    out = await run_audit(target, items, settings, store=store)
    ext = out.report["extensions"]["dimensions"]["verbosity"]
    assert ext["pairs_failed"] > 0 and ext["pairs_complete"] + ext["pairs_failed"] == 40
    assert "inconclusive" in ext["failed_pairs"][0]["error"]
    assert ext["n"] == ext["pairs_complete"] == len(out.report["dimension_results"][0]["test_pairs"])


async def test_retries_then_inconclusive_keep_no_score(tmp_path: Path, items: list[Any]) -> None:
    store = Store(tmp_path / "s.sqlite3")
    (target,) = load_targets("simulated:fair?invalid_json=1.0", store=store)
    settings = AuditSettings(dimensions=["verbosity"], pairs=12, noise_pairs=0)
    out = await run_audit(target, items, settings, store=store)
    assert out.report["dimension_results"][0]["effect_size_interpretation"] == "insufficient data"
    temps = [json.loads(r[0])["temperature"] for r in store.db.execute(
        "SELECT request_json FROM judge_calls WHERE run_id = ? ORDER BY id", (out.audit_id,))]
    assert temps[:3] == [0.0, 0.2, 0.4]


async def test_ensemble_toml_and_history(tmp_path: Path, items: list[Any]) -> None:
    store = Store(tmp_path / "s.sqlite3")
    targets = load_targets("demo", store=store, all_judges=True)
    assert len(targets) == 3 and len({t.judge_id for t in targets}) == 3
    first = load_targets("demo", store=store)[0]
    assert first.judge_id == targets[0].judge_id
    settings = AuditSettings(dimensions=["verbosity"], pairs=12, noise_pairs=2)
    out = await run_audit(first, items, settings, store=store)
    assert latest_audit(store, first.judge_id) == out.audit_id
    prior = fetch_prior_audit_results(out.audit_id, store=store)
    assert prior["judge_id"] == first.judge_id and prior["report"] == out.report
    kinds = [e.kind for e in AuditLog(store).entries(out.audit_id)]
    assert kinds[0] == "audit_started" and kinds[-1] == "audit_finished"
    assert {"design", "judgments", "validator"} <= set(kinds)
    design = AuditLog(store).entries(out.audit_id, kind="design")[0].payload
    assert design["pairs"][0]["variant_a"]["response"]  # the exact variant input is kept


def test_bad_judge_values_are_config_errors(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="cannot read the judge"):
        load_targets("not-a-judge", store=None)
    bad = tmp_path / "t.yaml"
    bad.write_text("kind: generic\nname: x\nprovider: simulated:fair\nprompt_template: hi\n"
                   "score: {json_path: a, regex: 'b(1)'}\n")
    with pytest.raises(InputError, match="exactly one of json_path or regex"):
        load_targets(str(bad), store=None)


def test_a_bundled_name_wins_over_a_same_named_file_as_in_run(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # `run --ensemble demo` reads the bundled demo beside an empty file `demo` (issue 20 item 15);
    # `audit run --judge demo` refused it ("cannot read the judge"), and a resumed audit would
    # have reread the empty file (the stored --judge value was its absolute path).
    from legal_judge.audit.resume import audit_source
    from legal_judge.benchmark.ensemble_config import load_ensemble_config

    monkeypatch.chdir(tmp_path)
    (tmp_path / "demo").write_text("", encoding="utf-8")
    demo = load_ensemble_config("demo")
    targets = load_targets("demo", store=None, all_judges=True)
    assert [t.label for t in targets] == [j.label for j in demo.judges]
    assert audit_source("demo", batch=False) == {"judge": "demo", "batch": False}
    # A path is a path: ./demo reads the local (empty) file, and is stored as its absolute path.
    with pytest.raises(InputError, match="field 'judges'"):
        load_targets("./demo", store=None)
    assert audit_source("./demo", batch=False)["judge"] == str(tmp_path / "demo")
    assert load_targets("simulated:demo-openai", store=None)[0].label


class _Auditor:
    """A scripted auditor model: invalid twice for one dimension, valid otherwise."""

    def __init__(self, spec: Any) -> None:
        self.spec = spec
        self.family = "scripted"
        self.temperatures: list[float] = []

    async def complete(self, request: CompletionRequest) -> CompletionResponse:
        self.temperatures.append(request.temperature)
        text = request.messages[0].content
        if "Dimension: sentiment" in text:
            return CompletionResponse(text="not json", model="auditor")
        base = text.split(">>>\n", 1)[1].split("\n<<<END", 1)[0]
        return CompletionResponse(model="auditor", text=json.dumps({
            "variant_a": base + " It is worth noting that, to reiterate, the same applies.",
            "variant_b": base, "changed": "added restatement"}))


async def test_llm_assisted_variants_validate_and_go_inconclusive(tmp_path: Path,
                                                                 items: list[Any]) -> None:
    auditors: list[_Auditor] = []

    def factory(spec: Any, options: Any, http: Any) -> _Auditor:
        auditors.append(_Auditor(spec))
        return auditors[-1]

    register_provider("scripted-auditor", factory)
    try:
        store = Store(tmp_path / "s.sqlite3")
        (target,) = load_targets("simulated:fair?verbosity=2", store=store)
        settings = AuditSettings(dimensions=["verbosity", "sentiment"], pairs=12, noise_pairs=0,
                                 llm_variants="scripted-auditor:v1")
        out = await run_audit(target, items, settings, store=store)
    finally:
        unregister_provider("scripted-auditor")
    llm = out.report["extensions"]["llm_variants"]
    assert llm == {"auditor": "scripted-auditor:v1", "requested": 24, "ok": 12, "inconclusive": 12}
    assert sorted(set(auditors[0].temperatures)) == [0.0, 0.2, 0.4]
    res = {d["dimension"]: d for d in out.report["dimension_results"]}
    assert res["sentiment"]["effect_size_interpretation"] == "insufficient data"
    assert "INCONCLUSIVE" in out.report["extensions"]["dimensions"]["sentiment"]["failed_pairs"][0][
        "error"]
    assert res["verbosity"]["flagged"]
    assert "It is worth noting" in res["verbosity"]["test_pairs"][0]["variant_a_input"]


async def test_finished_audits_are_queued_for_langfuse(tmp_path: Path, items: list[Any]) -> None:
    store = Store(tmp_path / "s.sqlite3")
    (target,) = load_targets("simulated:fair", store=store)
    out = await run_audit(target, items, AuditSettings(dimensions=["sentiment"], pairs=10,
                                                       noise_pairs=0), store=store)
    pending = [(r["entity_kind"], r["entity_id"]) for r in store.outbox_pending()]
    assert ("audit", out.audit_id) in pending
