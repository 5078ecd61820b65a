"""Bias mitigation inside the judge: bias-aware warnings and the self-debiasing second pass.

The method of "The Judge Can Debias Itself" (Yin et al.): ``aware`` puts a warning before the verdict
(specific bias, generic "any systematic bias", or the full list of seven); ``self`` sends a second
request carrying the first verdict and asks the judge to check it for a bias step by step, then revisit.
Both verdicts are kept, with whether the verdict changed.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from legal_judge.assets import Assets, Rubric
from legal_judge.models import BenchmarkItem, Message, Verdict

if TYPE_CHECKING:
    from legal_judge.judge import DebiasConfig, Judge

__all__ = ["self_debias_text", "self_debias_pass", "warning_text"]

FOCUS = "legal accuracy under the rubrics: is the legal content actually correct and complete?"


def warning_text(assets: Assets, config: DebiasConfig, *, focus: str = FOCUS) -> str:
    """The bias-aware warning for a judge config (specific, generic or full list)."""
    template = assets.template("bias_warning")
    if config.bias == "generic":
        return template.render(mode="generic", criterion=config.criterion, focus=focus)
    if config.bias == "all":
        return template.render(mode="all", biases=list(assets.biases.values()), focus=focus)
    return template.render(mode="specific", bias=assets.bias(config.bias), focus=focus)


def self_debias_text(assets: Assets, config: DebiasConfig, *, verdict: str,
                     final_instruction: str, focus: str = FOCUS) -> str:
    """The self-debiasing request carrying the first verdict."""
    variables: dict[str, Any] = {"verdict": verdict, "criterion": config.criterion, "focus": focus,
                                 "final_instruction": final_instruction}
    if config.bias in ("generic", "all"):
        return assets.template("self_debias").render(mode="generic", **variables)
    return assets.template("self_debias").render(mode="specific", bias=assets.bias(config.bias),
                                                 **variables)


def _verdict_json(v: Verdict) -> str:
    body: dict[str, Any] = {
        "rubrics": {k: {"score": s, "rationale": v.rationales.get(k, "")} for k, s in v.scores.items()},
        "overall": v.overall,
        "summary": v.summary,
    }
    if v.hallucination is not None:
        body["rubrics"]["hallucination"] = {"result": v.hallucination,
                                            "notes": v.rationales.get("hallucination", "")}
    return json.dumps(body, ensure_ascii=False)


async def self_debias_pass(judge: Judge, item: BenchmarkItem, rubrics: list[Rubric],
                           messages: list[Message], first: Verdict, *,
                           run_id: str | None) -> Verdict:
    """Second request: check the first verdict for bias, then give the final verdict (same schema)."""
    text = self_debias_text(
        judge.assets, judge.config.debias, verdict=_verdict_json(first),
        final_instruction="answer with the final verdict as the same JSON object only.",
    )
    convo = [*messages, Message(role="assistant", content=first.raw), Message(role="user", content=text)]
    second = await judge._judge_with_retries(item, rubrics, convo, run_id=run_id, purpose="self_debias")
    first_summary = {"scores": first.scores, "hallucination": first.hallucination,
                     "overall": first.overall}
    if second.status != "ok":
        # The second pass failed: the first verdict stands, and the failure is recorded.
        return first.model_copy(update={"extra": {**first.extra, "self_debias": {
            "status": second.status, "reason": second.reason, "changed": False}}})
    changed = (second.scores != first.scores or second.overall != first.overall
               or second.hallucination != first.hallucination)
    return second.model_copy(update={
        "attempts": first.attempts + second.attempts,
        "input_tokens": _sum(first.input_tokens, second.input_tokens),
        "output_tokens": _sum(first.output_tokens, second.output_tokens),
        "cost_usd": None if first.cost_usd is None or second.cost_usd is None
        else first.cost_usd + second.cost_usd,
        "latency_ms": first.latency_ms + second.latency_ms,
        "cached": first.cached and second.cached,
        "extra": {**second.extra, "self_debias": {"status": "ok", "first_verdict": first_summary,
                                                  "changed": changed}},
    })


def _sum(a: int | None, b: int | None) -> int | None:
    return None if a is None or b is None else a + b
