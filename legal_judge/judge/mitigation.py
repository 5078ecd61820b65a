"""Bias mitigation inside the judge: bias-aware warnings, the self-debiasing pass, position swapping.

The method of "The Judge Can Debias Itself" (Yin et al.): ``aware`` puts a warning before the verdict
(specific bias, generic "any systematic bias", or the full list of seven); ``self`` sends a second
request carrying the first verdict and asks the judge to check it for a bias step by step, then revisit.
Both verdicts are kept, with whether the verdict changed.

``swap`` is the seed's remedy for position ("position is checked more reliably by swapping A and
B, not just with text"): a pairwise judgment asks both orders and combines them by balanced position
calibration (:func:`legal_judge.debias.pairwise.balanced_winner`). It acts where the judge compares two
answers (``debias compare``, :class:`~legal_judge.debias.pairwise.PairwiseJudge`); scoring one answer
against the rubrics has no order to swap, so there it changes nothing but the judge id.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from legal_judge.assets.catalogue import Assets
from legal_judge.assets.rubrics import Rubric
from legal_judge.errors import ConfigError
from legal_judge.models import BenchmarkItem, Message, Verdict

if TYPE_CHECKING:
    from legal_judge.judge.judge import DebiasConfig, Judge

__all__ = [
    "ModeSpec",
    "parse_mode",
    "prompt_texts",
    "self_debias_pass",
    "self_debias_text",
    "toml_line",
    "warning_text",
]

Scope = Literal["specific", "generic", "all"]
_BASES = ("plain", "aware", "self", "aware+self", "swap")
_NO_SCOPE = ("plain", "swap")  # neither names a bias
_SCOPES: dict[str, Scope] = {"": "specific", "generic": "generic", "all": "all"}


@dataclass(frozen=True)
class ModeSpec:
    """A mitigation mode as named in an experiment (``aware``, ``aware-generic``, ``self-all`` ...).

    ``base`` is the judge config's mode; ``scope`` says which bias the warning or the self pass
    names: the bias under test (``specific``), the generic phrasing, or the full list of seven.
    """

    name: str
    base: str
    scope: Scope

    @property
    def requests(self) -> int:
        """Provider requests per verdict (the self pass is a second request; swap asks two orders)."""
        return 2 if "self" in self.base or self.base == "swap" else 1

    def config(self, bias: str, *, criterion: str) -> DebiasConfig:
        """The judge's debias config for pairs of ``bias`` (specific scope names that bias)."""
        from legal_judge.judge.judge import DebiasConfig

        named = {"specific": bias, "generic": "generic", "all": "all"}[self.scope]
        if self.base in _NO_SCOPE:
            named = "generic"
        return DebiasConfig(mode=self.base, bias=named, criterion=criterion)  # type: ignore[arg-type]


def parse_mode(name: str) -> ModeSpec:
    """Parse ``plain``, ``swap``, ``aware``, ``self``, ``aware+self`` (the last three with an optional
    ``-generic``/``-all``).

    Raises:
        ConfigError: an unknown mode (``debias-mode-unknown``).
    """
    raw = name.strip().lower()
    base, _, suffix = raw.partition("-")
    if base not in _BASES or suffix not in _SCOPES or (base in _NO_SCOPE and suffix):
        raise ConfigError(
            f"unknown debias mode '{name}'", code="debias-mode-unknown",
            fix="use plain, swap, aware, self or aware+self, the last three optionally with "
                "-generic or -all (e.g. aware-generic, self-all)")
    return ModeSpec(name=raw, base=base, scope=_SCOPES[suffix])


def toml_line(mode: str, bias: str) -> str:
    """The line to paste into a judge's ``[[judges]]`` block of an ensemble TOML for ``mode``.

    The criterion is left at the judge's default (the rubrics): an experiment's pair criterion
    describes its known-answer questions, not the judge's rubric scoring.

    Args:
        mode: A mode name as :func:`parse_mode` takes it (``aware``, ``self-generic``, ``swap`` ...).
        bias: The bias a specific-scope mode names.
    """
    spec = parse_mode(mode)
    if spec.base == "plain":
        return 'debias = { mode = "plain" }'
    if spec.base == "swap":
        return 'debias = { mode = "swap" }'
    named = {"specific": bias, "generic": "generic", "all": "all"}[spec.scope]
    return f'debias = {{ mode = "{spec.base}", bias = "{named}" }}'


def prompt_texts(assets: Assets, bias: str, *, criterion: str) -> dict[str, str]:
    """The filled bias-aware warning, pairwise judge prompt and self-debiasing prompt.

    For teams that paste them into another harness: the answers and the first verdict stay as the
    seed's placeholders (``{question}``, ``{answer_A}``, ``{answer_B}``, ``{model_verdict}``).

    Args:
        assets: The loaded prompt assets.
        bias: A bias of the catalogue, ``generic`` or ``all``.
        criterion: The criterion, which is also what the judge is told to focus on.
    """
    from legal_judge.judge.judge import DebiasConfig

    if bias not in ("generic", "all"):
        assets.bias(bias)  # raises ConfigError naming the catalogue
    config = DebiasConfig(mode="aware+self", bias=bias, criterion=criterion)
    warning = warning_text(assets, config, focus=criterion)
    judge_prompt = assets.template("pairwise").render(
        criterion=criterion, question="{question}", answer_a="{answer_A}", answer_b="{answer_B}",
        fence_open="<<<ANSWER>>>", fence_close="<<<END_ANSWER>>>", bias_warning=warning)
    self_prompt = self_debias_text(assets, config, verdict="{model_verdict}", focus=criterion,
                                   final_instruction="name the final option: A or B.")
    return {"bias_warning": warning, "judge_prompt": judge_prompt, "self_debias": self_prompt}

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
