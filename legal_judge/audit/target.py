"""The judge under audit: legal-judge's own judge (or one judge of an ensemble) or any team's judge.

``--judge`` accepts:

- a judge spec (``simulated:demo-openai``, ``openai:gpt-4o``): legal-judge's judge with that model;
- an ensemble TOML (``demo``, ``default`` or a path): every judge of it (each its own audit);
  ``high_stakes`` comes from the ensemble file;
- a YAML target file: ``kind: judge`` (a :class:`~legal_judge.judge.config.JudgeConfig` plus ``high_stakes``
  and ``rubric_set``) or ``kind: generic`` (see :mod:`legal_judge.audit.generic`).

Repeat judgments for the noise floor carry a different request ``seed`` (``Judge.judge(..., seed=)``):
they get their own cache entry (the original judgment's cache entry is never overwritten) and a fresh
call, from the same judge (same judge_id).
"""

from __future__ import annotations

import hashlib
import math
from pathlib import Path
from typing import Any, Protocol

import yaml
from pydantic import ValidationError

from legal_judge.assets.catalogue import parse_yaml
from legal_judge.assets.rubrics import DEFAULT_RUBRIC_SET
from legal_judge.audit.calls import (
    Compared,
    Scored,
    compared_or_error,
    parse_pairwise,
    repeat_seed,
    with_json_retries,
)
from legal_judge.audit.generic import GenericTarget, GenericTargetConfig
from legal_judge.errors import (
    ConfigError,
    InputError,
    Problem,
)
from legal_judge.judge.config import JudgeConfig
from legal_judge.judge.judge import Judge
from legal_judge.judge.mitigation import warning_text
from legal_judge.judge.pairwise import PAIRWISE_SCHEMA, pair_fence, pairwise_prompt
from legal_judge.models import BenchmarkItem, Message
from legal_judge.store import Store

__all__ = ["AuditTarget", "JudgeTarget", "load_targets"]


class AuditTarget(Protocol):
    """What the audit needs from a judge."""

    judge_id: str
    label: str
    high_stakes: bool
    kind: str
    supports_pairwise: bool

    def describe(self) -> dict[str, Any]:
        """The seed's target-judge specification (template, schemas, rubric, scale)."""
        ...

    async def score(self, item: BenchmarkItem, *, run_id: str, repeat: int = 0,
                    slot: int | None = None) -> Scored:
        """Score one variant; ``repeat`` > 0 re-judges it without the cache; ``slot`` is the
        judgment's call slot in its audit (a batch custom id)."""
        ...

    async def compare(self, question: str, first: str, second: str, *, run_id: str, item_id: str,
                      repeat: int = 0, slot: int | None = None) -> Compared:
        """Judge two answers shown in this order."""
        ...

    async def aclose(self) -> None:
        """Release the provider."""
        ...


def _check_rubric(judge: Judge, rubric: str) -> None:
    """``--rubric`` must be a numeric rubric the judge scores; an unknown one judged every pair
    as unscored and reported "insufficient data" (exit 0) instead of naming the typo."""
    names = [*judge.rubric_set.rubrics, *(o.rubric for o in judge.rubric_set.optional_rubrics)]
    numeric = [n for n in names if judge.assets.rubric(n).kind == "numeric"]
    if rubric not in numeric:
        raise ConfigError(f"--rubric {rubric}: not a numeric rubric of {judge.rubric_set.id}",
                          code="audit-rubric-unknown", fix=f"use one of: {', '.join(numeric)}")


class JudgeTarget:
    """legal-judge's own judge under audit; the score is one rubric or the mean of numeric rubrics."""

    kind = "legal-judge"
    supports_pairwise = True

    def __init__(self, judge: Judge, *, rubric: str | None = None, high_stakes: bool = False,
                 request_seed: int | None = None) -> None:
        if rubric is not None:
            _check_rubric(judge, rubric)
        self.judge = judge
        self.rubric = rubric
        self.high_stakes = high_stakes
        self.request_seed = request_seed
        self.judge_id = judge.judge_id
        self.label = judge.label

    def describe(self) -> dict[str, Any]:
        """Template ids and hashes, the output schema, the rubric scored and the scale."""
        ident = self.judge.identity()
        return {
            "judge_prompt_template": ", ".join(f"{k} (sha256 {v[:12]})"
                                               for k, v in ident["templates"].items()),
            "judge_input_schema": "BenchmarkItem: prompt, response, jurisdiction, expected_signals",
            "judge_output_schema": "verdict JSON: rubrics.<name>.score|result, overall, summary",
            "judge_scoring_rubric": (f"rubric {self.rubric}" if self.rubric else
                                     "mean of the numeric rubrics of " + self.judge.rubric_set.id),
            "scale": [0.0, 5.0], "scale_step": 1.0, "spec": self.judge.config.spec,
            "model": self.judge.model, "rubric_set": self.judge.rubric_set.id,
        }

    async def score(self, item: BenchmarkItem, *, run_id: str, repeat: int = 0,
                    slot: int | None = None) -> Scored:
        """Judge one variant and reduce the verdict to one score (a repeat carries its own seed)."""
        verdict = await self.judge.judge(item, run_id=run_id,
                                         seed=repeat_seed(self.request_seed, repeat), slot=slot)
        if verdict.status != "ok":
            return Scored(None, verdict.status, verdict.reason, verdict.raw, verdict.attempts,
                          verdict.cached)
        if self.rubric:
            if self.rubric not in verdict.scores:
                return Scored(None, "error", f"rubric '{self.rubric}' not in the verdict",
                              verdict.raw, verdict.attempts, verdict.cached)
            value = verdict.scores[self.rubric]
        else:
            # fsum is exact, so the mean does not depend on the order of the rubrics (a cached
            # verdict comes back with its keys sorted).
            value = math.fsum(verdict.scores.values()) / len(verdict.scores)
        detail = {"scores": dict(verdict.scores), "overall": verdict.overall,
                  "categories": ({"hallucination": verdict.hallucination}
                                 if verdict.hallucination else {})}
        return Scored(float(value), "ok", None, verdict.raw, verdict.attempts, verdict.cached,
                      detail)

    async def compare(self, question: str, first: str, second: str, *, run_id: str, item_id: str,
                      repeat: int = 0, slot: int | None = None) -> Compared:
        """Pairwise judgment with legal-judge's pairwise template (``prompts/pairwise``)."""
        j = self.judge
        debias = j.config.debias
        text = pairwise_prompt(
            j.assets, criterion=debias.criterion, question=question, answer_a=first,
            answer_b=second, fence=pair_fence(first, second, separator="\n"),
            bias_warning=warning_text(j.assets, debias) if "aware" in debias.mode else "")

        return await compared_or_error(with_json_retries(
            j.calls.complete, [Message(role="user", content=text)], parse_pairwise,
            assets=j.assets,
            provider=j.provider.spec.prefix, model=j.model, temperature=j.config.temperature,
            max_tokens=j.config.max_tokens, json_schema=PAIRWISE_SCHEMA, schema_name="pairwise",
            seed=repeat_seed(self.request_seed, repeat),
            context=j.context(item_id, run_id=run_id, purpose="audit-pairwise", slot=slot),
        ))

    async def aclose(self) -> None:
        """Close the provider."""
        close = getattr(self.judge.provider, "aclose", None)
        if close is not None:
            await close()


def _judge_target(config: JudgeConfig, store: Store | None, *, rubric_set: str, rubric: str | None,
                  high_stakes: bool, use_cache: bool, request_seed: int | None) -> JudgeTarget:
    from legal_judge.providers.base import ProviderOptions
    from legal_judge.providers.registry import get_provider

    opts = dict(config.options)
    if config.family:
        opts.setdefault("family", config.family)
    provider = get_provider(config.spec, options=ProviderOptions(**opts))
    judge = Judge(config, provider, rubric_set=rubric_set, store=store, use_cache=use_cache)
    return JudgeTarget(judge, rubric=rubric, high_stakes=high_stakes, request_seed=request_seed)


def _yaml_target(path: Path, store: Store | None, *, rubric: str | None, use_cache: bool,
                 request_seed: int | None) -> AuditTarget:
    try:
        data = parse_yaml(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as exc:
        raise InputError([Problem(str(path), None, None, f"cannot read the target: {exc}")]) from None
    if not isinstance(data, dict):
        raise InputError([Problem(str(path), 1, None, "expected a mapping with 'kind'")])
    kind = data.pop("kind", "generic")
    try:
        if kind == "judge":
            high = bool(data.pop("high_stakes", False))
            rubric_set = str(data.pop("rubric_set", DEFAULT_RUBRIC_SET))
            return _judge_target(JudgeConfig.model_validate(data), store, rubric_set=rubric_set,
                                 rubric=rubric, high_stakes=high, use_cache=use_cache,
                                 request_seed=request_seed)
        if kind == "generic":
            config = GenericTargetConfig.model_validate(data)
            return GenericTarget.from_config(config, store=store, use_cache=use_cache,
                                             request_seed=request_seed, base_dir=path.parent)
    except ValidationError as exc:
        raise InputError([Problem(str(path), None, ".".join(str(p) for p in e["loc"]) or None,
                                  e["msg"]) for e in exc.errors()]) from None
    raise InputError([Problem(str(path), None, "kind", f"unknown kind '{kind}' (judge or generic)")])


def load_targets(judge_config: str, *, store: Store | None, rubric: str | None = None,
                 all_judges: bool = True, use_cache: bool = True,
                 request_seed: int | None = None) -> list[AuditTarget]:
    """The judge(s) ``--judge`` names: a spec, an ensemble TOML or a YAML target file.

    Raises:
        ConfigError: the value is none of these; InputError for a defective file.
    """
    from legal_judge.benchmark.ensemble_config import load_ensemble_config, resolve_ensemble_path

    path = Path(judge_config)
    if path.suffix in (".yaml", ".yml"):
        if not path.exists():
            raise InputError([Problem(str(path), None, None, "file not found")])
        return [_yaml_target(path, store, rubric=rubric, use_cache=use_cache,
                             request_seed=request_seed)]
    # The rule of `run --ensemble`: a bundled name wins over a same-named file in this folder.
    ensemble = resolve_ensemble_path(judge_config, missing_ok=True)
    if ensemble is not None:
        cfg = load_ensemble_config(judge_config)  # the string: a Path drops the ./ of ./demo
        # Every judge of an ensemble is audited (each gates the ensemble's verdicts); auditing
        # only the first one silently left two of three unaudited.
        chosen = cfg.judges if all_judges else cfg.judges[:1]
        return [_judge_target(jc, store, rubric_set=cfg.rubric_set, rubric=rubric,
                              high_stakes=cfg.high_stakes, use_cache=use_cache,
                              request_seed=request_seed) for jc in chosen]
    if ":" in judge_config:
        return [_judge_target(JudgeConfig(spec=judge_config), store, rubric_set=DEFAULT_RUBRIC_SET,
                              rubric=rubric, high_stakes=False, use_cache=use_cache,
                              request_seed=request_seed)]
    raise ConfigError(f"cannot read the judge '{judge_config}'", code="audit-judge-invalid",
                      fix="pass a judge spec (simulated:demo-openai), an ensemble TOML (demo) "
                          "or a target YAML file (kind: judge | generic)")


def digest(value: str) -> str:
    """Short sha256 of a text (ids of generic judges)."""
    return hashlib.sha256(value.encode("utf-8")).hexdigest()[:12]
