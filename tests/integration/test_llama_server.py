"""Integration tier: llama-cpp-python's OpenAI-compatible server with SmolLM2 on 127.0.0.1.

Two sample items are judged end to end through the ``openai-compatible`` provider over real HTTP. A
135M model often cannot produce a useful verdict: a schema-valid verdict or a correctly handled
INCONCLUSIVE (raw output kept, never an invented score) are both correct outcomes; usage is recorded.
"""

from __future__ import annotations

import asyncio

import pytest

pytest.importorskip("llama_cpp")
pytest.importorskip("llama_cpp.server", reason="llama-cpp-python[server] is not installed")

from legal_judge.dataset import load_dataset, sample_dataset_path  # noqa: E402
from legal_judge.judge.config import JudgeConfig  # noqa: E402
from legal_judge.judge.judge import Judge  # noqa: E402
from legal_judge.providers.base import ProviderOptions  # noqa: E402
from legal_judge.providers.registry import get_provider  # noqa: E402
from legal_judge.store import Store  # noqa: E402

pytestmark = pytest.mark.integration


def test_smollm2_judges_two_items_over_real_http(llama_server: str, tmp_path) -> None:  # type: ignore[no-untyped-def]
    from legal_judge.providers.openai import negotiated_mode

    spec = f"openai-compatible:smollm2@{llama_server}"
    store = Store(tmp_path / "s.sqlite3")
    store.create_run("int", kind="run", config={})
    # Token log-probabilities off: llama-cpp-python computes them token by token (slow); the
    # expected-score test below asks for them.
    judge = Judge(JudgeConfig(spec=spec, max_tokens=700),
                  get_provider(spec, options=ProviderOptions(logprobs=False)), store=store)
    items = [i for i in load_dataset(sample_dataset_path()) if i.id in ("us-ca-001", "us-fed-006")]
    assert len(items) == 2

    async def go() -> list:  # type: ignore[type-arg]
        try:
            return [await judge.judge(item, run_id="int") for item in items]
        finally:
            await judge.provider.aclose()

    verdicts = asyncio.run(go())
    for v in verdicts:
        assert v.status in ("ok", "inconclusive"), v.reason
        if v.status == "ok":
            assert set(v.scores) >= {"legal_soundness", "completeness"}
            assert all(0 <= s <= 5 for s in v.scores.values())
        else:
            assert v.scores == {} and v.raw and v.attempts == 3
        assert v.input_tokens and v.input_tokens > 100 and v.output_tokens
    # llama-cpp-python's server refuses json_schema; the provider fell back to json_object + schema
    assert negotiated_mode(llama_server, "smollm2") == "json_object+schema"
    calls = store.db.execute("SELECT COUNT(*), SUM(usage_json IS NOT NULL) FROM judge_calls").fetchone()
    assert calls[0] >= 2 and calls[0] == calls[1]


def test_smollm2_audit_with_probes_is_never_certified(llama_server: str, tmp_path) -> None:  # type: ignore[no-untyped-def]
    """A 135M model cannot be shown to tell good legal answers from bad ones: whatever numbers it
    returns, the audit (two probes, one dimension) must not certify it."""
    from legal_judge.audit import AuditSettings, JudgeTarget, run_audit

    spec = f"openai-compatible:smollm2@{llama_server}"
    store = Store(tmp_path / "s.sqlite3")
    judge = Judge(JudgeConfig(spec=spec, max_tokens=500),
                  get_provider(spec, options=ProviderOptions(logprobs=False)), store=store)
    target = JudgeTarget(judge)
    settings = AuditSettings(dimensions=["verbosity"], pairs=4, noise_pairs=0,
                             probes=["hedge_only", "conclusion_flip"], probe_pairs=4,
                             min_complete_pairs=2, concurrency=2)
    items = load_dataset(sample_dataset_path())

    async def go() -> object:
        try:
            return await run_audit(target, items, settings, store=store, sync=False)
        finally:
            await target.aclose()

    outcome = asyncio.run(go())
    ext = outcome.report["extensions"]  # type: ignore[attr-defined]
    assert set(ext["probes"]) == {"hedge_only", "conclusion_flip"}
    assert ext["verdict"] in ("insensitive", "biased", "inconclusive")
    assert ext["verdict"] != "certified"
    assert outcome.report["overall_assessment"]["severity"] != "none"  # type: ignore[attr-defined]


def test_smollm2_verdicts_store_log_probability_expected_scores(llama_server: str,
                                                                 tmp_path) -> None:  # type: ignore[no-untyped-def]
    """llama-cpp-python's server returns token log-probabilities: a verdict stores, beside each
    chosen score, the probability-weighted expected score, within the rubric's scale."""
    spec = f"openai-compatible:smollm2@{llama_server}"
    store = Store(tmp_path / "lp.sqlite3")
    judge = Judge(JudgeConfig(spec=spec, max_tokens=700),
                  get_provider(spec, options=ProviderOptions(timeout_s=600)), store=store)
    items = [i for i in load_dataset(sample_dataset_path()) if i.id in ("us-ca-001", "us-fed-006")]

    async def go() -> list:  # type: ignore[type-arg]
        try:
            return [await judge.judge(item) for item in items]
        finally:
            await judge.provider.aclose()

    ok = [v for v in asyncio.run(go()) if v.status == "ok"]
    assert ok, "SmolLM2 gave no schema-valid verdict on either item"
    expected = [(r, e) for v in ok for r, e in v.extra["expected_scores"].items()]
    assert expected, "no rubric's score token carried log-probabilities"
    for rubric, value in expected:
        scale = judge.assets.rubric(rubric).scale
        assert scale is not None and scale.min <= value <= scale.max, (rubric, value)
