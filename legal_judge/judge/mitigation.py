"""Bias mitigation inside the judge, as texts: bias-aware warnings, the self-debiasing request, modes.

The method of "The Judge Can Debias Itself" (Yin et al.): ``aware`` puts a warning before the verdict
(specific bias, generic "any systematic bias", or the full list of seven); ``self`` sends a second
request carrying the first verdict and asks the judge to check it for a bias step by step, then revisit.
Both verdicts are kept, with whether the verdict changed. This module only writes the texts and reads
mode names; the second request itself is :meth:`legal_judge.judge.judge.Judge.judge`'s (and
:class:`~legal_judge.debias.pairwise.PairwiseJudge`'s) to make.

``swap`` is the seed's remedy for position ("position is checked more reliably by swapping A and
B, not just with text"): a pairwise judgment asks both orders and combines them by balanced position
calibration (:func:`legal_judge.debias.pairwise.balanced_winner`). It acts where the judge compares two
answers (``debias compare``, :class:`~legal_judge.debias.pairwise.PairwiseJudge`); scoring one answer
against the rubrics has no order to swap, so there it changes nothing but the judge id.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Literal

from legal_judge.assets.catalogue import Assets
from legal_judge.errors import ConfigError
from legal_judge.judge.config import DebiasConfig
from legal_judge.judge.pairwise import pairwise_prompt
from legal_judge.models import Verdict

__all__ = [
    "ModeSpec",
    "parse_mode",
    "prompt_texts",
    "self_debias_text",
    "toml_line",
    "verdict_json",
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
    if bias not in ("generic", "all"):
        assets.bias(bias)  # raises ConfigError naming the catalogue
    config = DebiasConfig(mode="aware+self", bias=bias, criterion=criterion)
    warning = warning_text(assets, config, focus=criterion)
    # The seed's placeholders stand for the answers, so a fixed fence stands for their digest.
    judge_prompt = pairwise_prompt(
        assets, criterion=criterion, question="{question}", answer_a="{answer_A}",
        answer_b="{answer_B}", fence=("<<<ANSWER>>>", "<<<END_ANSWER>>>"), bias_warning=warning)
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


def verdict_json(v: Verdict) -> str:
    """The first verdict as the self-debiasing request shows it (the verdict schema's shape)."""
    body: dict[str, Any] = {
        "rubrics": {k: {"score": s, "rationale": v.rationales.get(k, "")} for k, s in v.scores.items()},
        "overall": v.overall,
        "summary": v.summary,
    }
    if v.hallucination is not None:
        body["rubrics"]["hallucination"] = {"result": v.hallucination,
                                            "notes": v.rationales.get("hallucination", "")}
    return json.dumps(body, ensure_ascii=False)
