"""Log-probability expected scores: the openai SDK over loopback against the stub, end to end.

The stub answers ``logprobs`` requests with a known distribution at every digit (chosen 60%,
one lower 30%, one higher 10%), so a verdict's expected score is known exactly.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import pytest

from legal_judge.assets.catalogue import load_assets
from legal_judge.dataset import load_dataset, sample_dataset_path
from legal_judge.devtools.openai_stub import Faults, StubServer
from legal_judge.judge.config import JudgeConfig
from legal_judge.judge.judge import Judge
from legal_judge.judge.parse import expected_scores
from legal_judge.models import DigitToken, Verdict
from legal_judge.providers.base import ProviderOptions
from legal_judge.providers.logprobs import digit_logprobs
from legal_judge.providers.openai import forget_negotiated_modes
from legal_judge.providers.registry import get_provider
from legal_judge.store import Store


@asynccontextmanager
async def stub(faults: Faults) -> AsyncIterator[tuple[StubServer, str]]:
    server_state = StubServer(latency_ms=1, faults=faults)
    server = await asyncio.start_server(server_state.handle, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    try:
        yield server_state, f"http://127.0.0.1:{port}/v1"
    finally:
        server.close()
        await server.wait_closed()


def _judge_two(faults: Faults, tmp_path, name: str,  # type: ignore[no-untyped-def]
               options: ProviderOptions | None = None) -> list[Verdict]:
    forget_negotiated_modes()
    items = load_dataset(sample_dataset_path())[:2]

    async def go() -> list[Verdict]:
        async with stub(faults) as (_, url):
            spec = f"openai-compatible:gpt-4o@{url}"
            store = Store(tmp_path / f"{name}.sqlite3")
            judge = Judge(JudgeConfig(spec=spec), get_provider(spec, options=options),
                          store=store)
            try:
                return [await judge.judge(item) for item in items]
            finally:
                await judge.provider.aclose()

    return asyncio.run(go())


def test_expected_scores_are_stored_beside_the_chosen_ones(tmp_path) -> None:  # type: ignore[no-untyped-def]
    verdicts = _judge_two(Faults(fixed_score=3), tmp_path, "with")
    for v in verdicts:
        assert v.status == "ok"
        expected = v.extra["expected_scores"]
        numeric = {r for r, s in v.scores.items()}
        assert set(expected) == numeric and numeric
        # 3 at 60%, 2 at 30%, 4 at 10%: 1.8 + 0.6 + 0.4 = 2.8; the chosen score is unchanged
        assert all(value == pytest.approx(2.8) for value in expected.values())
        assert all(s == 3.0 for s in v.scores.values())


def test_a_top_score_renormalises_over_the_scale(tmp_path) -> None:  # type: ignore[no-untyped-def]
    verdicts = _judge_two(Faults(fixed_score=5), tmp_path, "top")
    # 6 is off the 0-5 scale: (5 * 0.6 + 4 * 0.3) / 0.9
    assert all(value == pytest.approx(14 / 3, abs=1e-4)
               for v in verdicts for value in v.extra["expected_scores"].values())


def test_a_provider_without_logprobs_stores_nothing_and_says_so_once(
        tmp_path, caplog: pytest.LogCaptureFixture) -> None:  # type: ignore[no-untyped-def]
    with caplog.at_level(logging.WARNING):
        verdicts = _judge_two(Faults(fixed_score=3, logprobs=False), tmp_path, "without")
    assert all(v.status == "ok" and "expected_scores" not in v.extra for v in verdicts)
    said = [r for r in caplog.records if "no token log-probabilities" in r.getMessage()]
    assert len(said) == 1, [r.getMessage() for r in said]


def test_a_judge_can_switch_logprobs_off(tmp_path,  # type: ignore[no-untyped-def]
                                        caplog: pytest.LogCaptureFixture) -> None:
    """`options = { logprobs = false }`: not asked (the stub would answer them), nothing stored,
    and no warning that the provider has none (it was not asked)."""
    with caplog.at_level(logging.INFO):
        verdicts = _judge_two(Faults(fixed_score=3), tmp_path, "off",
                              ProviderOptions(logprobs=False))
    assert all(v.status == "ok" and "expected_scores" not in v.extra for v in verdicts)
    assert not [r for r in caplog.records if r.levelno >= logging.WARNING
                and "log-probabilities" in r.getMessage()]
    assert any("switched off" in r.getMessage() for r in caplog.records)


def test_the_score_token_is_found_by_its_rubric_not_by_a_digit_in_a_rationale() -> None:
    text = ('{"rubrics": {"completeness": {"rationale": "said \\"score\\": 1 here", "score": 4}, '
            '"legal_soundness": {"score": 2, "rationale": "x"}}}')
    at4, at2 = text.index('"score": 4') + 9, text.index('"score": 2') + 9
    tokens = [DigitToken(offset=text.index("1 here"), token="1", logprob=0.0, top={"1": 0.0}),
              DigitToken(offset=at4, token="4", logprob=-0.1, top={"4": -0.1, "5": -2.4}),
              DigitToken(offset=at2, token="2", logprob=0.0, top={"2": 0.0, "junk": -1.0})]
    assets = load_assets()
    rubrics = [assets.rubric("completeness"), assets.rubric("legal_soundness"),
               assets.rubric("hallucination")]
    got = expected_scores(text, tokens, rubrics)
    import math
    p4, p5 = math.exp(-0.1), math.exp(-2.4)
    assert got == {"completeness": pytest.approx(round((4 * p4 + 5 * p5) / (p4 + p5), 4)),
                   "legal_soundness": 2.0}
    assert expected_scores(text, None, rubrics) is None


def test_tokens_that_do_not_spell_the_answer_give_no_offsets() -> None:
    choice = {"logprobs": {"content": [{"token": "{", "logprob": 0.0, "top_logprobs": []},
                                       {"token": "4", "logprob": -0.2, "top_logprobs": []}]}}
    assert digit_logprobs(choice, "{4") == [DigitToken(offset=1, token="4", logprob=-0.2,
                                                       top={"4": -0.2})]
    assert digit_logprobs(choice, "{ 4") is None
    assert digit_logprobs({"logprobs": None}, "{4") is None


async def test_an_endpoint_that_refuses_logprobs_is_asked_again_without_and_remembered(
        kit) -> None:  # type: ignore[no-untyped-def]
    """Groq-like servers answer 400 to ``logprobs``: the call is repeated without them (no
    retry budget spent on it), and the endpoint is not asked again."""
    import json

    import httpx

    bodies: list[dict[str, object]] = []
    ok = kit.load_fixture("openai/chat_completion.json")

    def handler(request: httpx.Request) -> httpx.Response:
        body = json.loads(request.content)
        bodies.append(body)
        if body.get("logprobs"):
            return httpx.Response(400, json={"error": {
                "message": "`logprobs` is not supported with this model", "type": "invalid"}})
        return httpx.Response(200, headers=ok["headers"], json=ok["body"])

    spec = "openai-compatible:m@http://127.0.0.1:9/v1"
    async with httpx.AsyncClient(transport=httpx.MockTransport(handler)) as client:
        provider = get_provider(spec, http_client=client)
        first = await provider.complete(kit.request("m"))
        second = await provider.complete(kit.request("m"))
    assert [b.get("top_logprobs") for b in bodies] == [5, None, None]
    assert first.text and first.digit_logprobs is None and second.retries == 0
