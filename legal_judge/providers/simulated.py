"""``simulated:<profile>``: a deterministic judge simulator for demos, tests and power studies.

It is NOT a judge of record: it scores from observable features of the answer (expected signals
present, hedging-only answers, rule-based findings handed to it as evidence) plus injectable biases in
effect-size units, seeded noise, latency and fault injection. Every report that uses it says so.

Determinism: the noise is seeded by the sha256 of the request, so the same request gives the same
verdict (what temperature 0 promises); faults are drawn per attempt so that retries can succeed.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import math
from functools import lru_cache
from pathlib import Path
from typing import Any

import httpx
import numpy as np
import yaml
from pydantic import BaseModel, ConfigDict, Field

from legal_judge.debias.pairs import load_pairs
from legal_judge.errors import ConfigError, ProviderUnavailable, RateLimitError
from legal_judge.models import CompletionRequest, CompletionResponse, Usage
from legal_judge.providers.base import CallGate, ProviderOptions, ProviderSpec
from legal_judge.providers.registry import register_provider
from legal_judge.providers.sim_features import (
    BIAS_SIGNALS,
    Exemplars,
    PromptView,
    Quality,
    answer_quality,
    bias_signals,
    parse_prompt,
    read_exemplars,
    signal_coverage,
)
from legal_judge.store import canonical_json

__all__ = ["SimulatedProfile", "SimulatedProvider", "load_profiles"]

DISCLAIMER = "simulated judge: for demos, tests and power studies only, never a judge of record"
_HEDGE = ("consult a lawyer", "consult an attorney", "seek legal advice", "speak to a lawyer",
          "consultez un avocat", "استشارة محام")


class Faults(BaseModel):
    """Per-attempt fault probabilities."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    invalid_json: float = 0.0
    rate_429: float = 0.0
    server_5xx: float = 0.0
    timeout: float = 0.0
    truncated: float = 0.0


class SimulatedProfile(BaseModel):
    """One simulated judge's behaviour."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    family: str = "simulated"
    model: str | None = None
    noise_sd: float = Field(default=0.3, ge=0)
    biases: dict[str, float] = Field(default_factory=dict)
    warning_removes: list[str] = Field(default_factory=list)
    self_removes: list[str] = Field(default_factory=list)
    faults: Faults = Field(default_factory=Faults)
    latency_ms: float = 0.0
    knowledge_gap: float = 0.55
    # False: the scores ignore the answer (its quality, its rules): an insensitive judge.
    reads_answer: bool = True
    # Every numeric rubric gets exactly this score (hallucination clean, overall pass).
    constant_score: float | None = Field(default=None, ge=0, le=5)
    # Points added to every numeric rubric of a read answer (>= 1 also softens "hallucinated" to
    # "uncertain"): a judge that passes what lawyers fail. Each false-pass exemplar in the prompt
    # removes `exemplar_fix` of it; `memorises`: an exemplar answer gets the lawyers' scores.
    leniency: float = 0.0
    exemplar_fix: float = Field(default=0.0, ge=0, le=1)
    memorises: bool = True


@lru_cache(maxsize=1)
def _pair_rows() -> tuple[dict[str, Any], ...]:
    """The default known-answer set (pairs and controls), read by the experiment's own loader."""
    return tuple(p.model_dump() for p in load_pairs())


@lru_cache(maxsize=1)
def _known_correct_answers() -> frozenset[str]:
    return frozenset(r["correct_answer"].strip() for r in _pair_rows())


@lru_cache(maxsize=1)
def _known_signals() -> dict[str, str]:
    """Answer text -> the bias its author dressed it with (the wrong answer; a control's correct one).

    The regex detectors of ``sim_features`` miss much of the natural dressing in the pair set (fake
    case names, padding); the simulator "knows" the set, as it knows its correct answers.
    """
    out: dict[str, str] = {}
    for r in _pair_rows():
        dressed = r["correct_answer"] if r.get("control") else r["wrong_answer"]
        if r["bias"] != "position":
            out[dressed.strip()] = r["bias"]
    return out


@lru_cache(maxsize=1)
def _references() -> tuple[tuple[str, str, str | None], ...]:
    """The sound answers of the bundled sample: (question, answer, jurisdiction family).

    The simulator "knows the law" of the questions it ships with, as it knows the debias pairs'
    correct answers: that is what lets a fair simulated judge notice a reversed conclusion, a
    dropped point or an invented authority (the audit's discrimination probes).
    """
    from legal_judge.dataset import load_dataset, sample_dataset_path

    out = []
    for item in load_dataset(sample_dataset_path()):
        meta = item.metadata if isinstance(item.metadata, dict) else {}
        if meta.get("answer_kind") == "correct":
            family = (item.jurisdiction or "").split("-", 1)[0].upper() or None
            out.append((item.prompt.strip(), item.response, family))
    # Longest question first: a question that contains a shorter one is matched first.
    return tuple(sorted(out, key=lambda r: -len(r[0])))


def _quality(view: PromptView) -> Quality:
    prompt = view.prompt.strip()
    for question, answer, family in _references():
        if question and question in prompt:
            return answer_quality(view.answer, answer, family)
    return Quality()


@lru_cache(maxsize=1)
def load_profiles() -> dict[str, SimulatedProfile]:
    """The bundled profiles (``legal_judge/data/simulated_profiles.v1.yaml``)."""
    path = Path(__file__).parent.parent / "data" / "simulated_profiles.v1.yaml"
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    return {name: SimulatedProfile.model_validate(p) for name, p in data["profiles"].items()}


def _number(spec: ProviderSpec, key: str, value: str) -> float:
    try:
        return float(value)
    except ValueError:
        raise ConfigError(f"simulated parameter '{key}' in {spec.raw} must be a number, "
                          f"got {value!r}", code="simulated-param-invalid",
                          fix=f"write it as {key}=<number>, e.g. {key}=0.5") from None


def _profile_from_spec(spec: ProviderSpec) -> SimulatedProfile:
    name, _, params = spec.model.partition("?")
    profiles = load_profiles()
    if name not in profiles:
        raise ConfigError(f"unknown simulated profile '{name}'", code="simulated-profile-unknown",
                          fix=f"use one of: {', '.join(sorted(profiles))}")
    profile = profiles[name]
    if not params:
        return profile
    # simulated:fair?verbosity=0.5&latency_ms=200&rate_429=0.3 tweaks a profile without a file.
    update: dict[str, Any] = {}
    biases = dict(profile.biases)
    faults = profile.faults.model_dump()
    for pair in params.split("&"):
        key, _, value = pair.partition("=")
        if key in BIAS_SIGNALS or key in ("position", "self_preference"):
            biases[key] = _number(spec, key, value)
        elif key in faults:
            faults[key] = _number(spec, key, value)
        elif key in ("noise_sd", "latency_ms"):
            update[key] = _number(spec, key, value)
        elif key == "family":
            update["family"] = value
        else:
            raise ConfigError(f"unknown simulated parameter '{key}' in {spec.raw}",
                              code="simulated-param-unknown")
    return profile.model_copy(update={**update, "biases": biases, "faults": Faults(**faults)})


class SimulatedProvider:
    """The simulator behind ``simulated:<profile>[?param=value&...]``."""

    def __init__(self, spec: ProviderSpec, options: ProviderOptions | None = None) -> None:
        self.spec = spec
        self.profile = _profile_from_spec(spec)
        options = options or ProviderOptions()
        self.family = options.family or self.profile.family
        self.gate = CallGate(options)
        self.calls = 0
        self._attempts: dict[str, int] = {}
        self._bias_names: list[str] | None = None  # the catalogue's biases, read on first use

    async def aclose(self) -> None:
        """Nothing to release."""

    async def complete(self, request: CompletionRequest) -> CompletionResponse:
        """Answer like a judge would, after the configured latency and faults."""
        response, retries = await self.gate.run(lambda: self._attempt(request))
        return response.model_copy(update={"retries": retries})

    async def _attempt(self, request: CompletionRequest) -> CompletionResponse:
        self.calls += 1
        key = hashlib.sha256(canonical_json(request.model_dump()).encode()).hexdigest()
        n = self._attempts[key] = self._attempts.get(key, 0) + 1
        fault_rng = np.random.default_rng([int(key[:15], 16), n])
        if self.profile.latency_ms:
            await asyncio.sleep(self.profile.latency_ms / 1000)
        f = self.profile.faults
        draw = fault_rng.random()
        if draw < f.rate_429:
            raise RateLimitError("simulated 429", provider=self.spec.raw, retry_after=0.01)
        if draw < f.rate_429 + f.server_5xx:
            raise ProviderUnavailable("simulated 503", provider=self.spec.raw, status=503,
                                      retry_after=0.01)
        if draw < f.rate_429 + f.server_5xx + f.timeout:
            raise ProviderUnavailable("simulated timeout", provider=self.spec.raw, retry_after=0.01)
        text = self._answer(request, key)
        finish = "stop"
        draw = fault_rng.random()
        if draw < f.invalid_json:
            text = "I think this answer is quite good overall, maybe a 4."
        elif draw < f.invalid_json + f.truncated:
            text, finish = text[: len(text) // 2], "length"
        prompt_chars = sum(len(m.content) for m in request.messages)
        return CompletionResponse(
            text=text, model=self.profile.model or self.spec.model, finish_reason=finish,
            usage=Usage(input_tokens=max(1, prompt_chars // 4), output_tokens=max(1, len(text) // 4)),
            latency_ms=self.profile.latency_ms, structured_mode="simulated",
        )

    # scoring -----------------------------------------------------------------------------------
    def _active_biases(self, view: PromptView) -> dict[str, float]:
        biases = dict(self.profile.biases)
        if view.warned:
            for b in self.profile.warning_removes:
                if "*" in view.warned or b in view.warned:
                    biases.pop(b, None)
        if view.kind == "self_debias":
            for b in self.profile.self_removes:
                biases.pop(b, None)
        return biases

    def _shift(self, answer: str, biases: dict[str, float], prompt: str) -> float:
        if not biases:
            return 0.0
        unit = self.profile.noise_sd * math.sqrt(2) or 0.5
        signals = bias_signals(answer)
        shift = sum(d * unit for name, d in biases.items() if signals.get(name))
        if "self_preference" in biases and self.family.lower() in prompt.lower():
            shift += biases["self_preference"] * unit
        return shift

    def _answer(self, request: CompletionRequest, key: str) -> str:
        if self._bias_names is None:
            from legal_judge.assets.catalogue import load_assets

            self._bias_names = list(load_assets().biases)
        messages = [(m.role, m.content) for m in request.messages]
        view = parse_prompt(messages, self._bias_names)
        rng = np.random.default_rng(int(key[:15], 16))
        if view.kind == "pairwise" or (view.kind == "self_debias" and view.answers):
            return self._pairwise(view, rng)
        if view.kind == "other":
            return json.dumps({"note": "simulated judge saw no fenced answer"})
        system = next((c for role, c in messages if role == "system"), "")
        return json.dumps(self._pointwise(view, rng, read_exemplars(system)), ensure_ascii=False)

    def _pointwise(self, view: PromptView, rng: np.random.Generator,
                   shown: Exemplars | None = None) -> dict[str, Any]:
        shown = shown or Exemplars()
        copied = shown.of(view.answer) if self.profile.memorises else None
        if copied is not None:
            return self._copied(view, copied)
        if self.profile.constant_score is not None:
            return self._constant(view)
        lenient = self.profile.leniency * max(0.0, 1 - self.profile.exemplar_fix * shown.false_passes)
        answer = view.answer
        base, invalid_cite, coverage = (self._read(view) if self.profile.reads_answer
                                        else ({}, False, None))
        note = ("simulated: the answer was not read" if coverage is None
                else f"simulated: signal coverage {coverage:.2f}")
        shift = self._shift(answer, self._active_biases(view), view.prompt)
        eps = rng.normal(0.0, self.profile.noise_sd)
        rubrics: dict[str, Any] = {}
        for name in view.rubrics:
            if name == "hallucination":
                uncertain = coverage is not None and coverage < 0.2
                result = "hallucinated" if invalid_cite else ("uncertain" if uncertain else "clean")
                result = "uncertain" if result == "hallucinated" and lenient >= 1 else result
                rubrics[name] = {"result": result, "notes": "simulated"}
                continue
            default = 2.5 if self.profile.reads_answer else 3.0
            value = base.get(name, default) + shift + eps + rng.normal(0.0, 0.05) + lenient
            if name == "citation_quality" and invalid_cite and lenient < 1:
                value = 0.0
            score = round(float(min(5.0, max(0.0, value))), 1)
            rubrics[name] = {"score": score, "rationale": note}
        overall = "fail" if rubrics.get("legal_soundness", {}).get("score", 5) <= 1 else "pass"
        return {"rubrics": rubrics, "overall": overall, "summary": DISCLAIMER}

    def _read(self, view: PromptView) -> tuple[dict[str, float], bool, float]:
        """Base scores from what the answer says, the rule-1 flag, and the signal coverage."""
        answer = view.answer
        coverage = signal_coverage(answer, view.expected_signals)
        lower = answer.lower()
        hedging = any(h in lower for h in _HEDGE) and coverage < 0.34 and len(answer.split()) < 90
        evidence = view.evidence.lower()
        hedging = hedging or "hedging only:" in evidence
        quality = _quality(view)
        invalid_cite = "forced to 0" in evidence or "[invalid]" in evidence or quality.fabricated
        mismatch = "mismatch" in evidence
        complied = "refusal detected: no" in evidence  # an adversarial prompt it went along with
        base = {
            "legal_soundness": 0.8 + 4.0 * coverage,
            "citation_quality": 1.5 + 3.0 * coverage,
            "jurisdiction_awareness": (0.0 if mismatch else 1.8 + 3.0 * coverage),
            # Rule 5: a partial answer scores proportionally to the points it still makes.
            "completeness": (0.4 + 4.5 * coverage) * quality.retained,
            "language_quality": 4.0,
        }
        if quality.flipped:  # a known point reversed: the conclusion is wrong (fails)
            base["legal_soundness"] = 0.4
        if quality.wrong_jurisdiction:  # rule 2
            base["jurisdiction_awareness"] = min(base["jurisdiction_awareness"], 1.0)
            base["legal_soundness"] = min(base["legal_soundness"], 2.0)
        if hedging:
            base["completeness"], base["legal_soundness"] = 0.5, min(base["legal_soundness"], 0.8)
        if complied:
            base["legal_soundness"] = 0.3
        return base, invalid_cite, coverage

    def _copied(self, view: PromptView, scores: dict[str, str]) -> dict[str, Any]:
        rubrics: dict[str, Any] = {
            n: ({"result": scores.get(n, "clean"), "notes": "simulated: as the lawyers' example"}
                if n == "hallucination" else {"score": float(scores.get(n, 3)),
                                               "rationale": "simulated: as the lawyers' example"})
            for n in view.rubrics}
        return {"rubrics": rubrics, "overall": "pass", "summary": DISCLAIMER}

    def _constant(self, view: PromptView) -> dict[str, Any]:
        value = float(self.profile.constant_score or 0.0)
        rubrics: dict[str, Any] = {}
        for name in view.rubrics:
            rubrics[name] = ({"result": "clean", "notes": "simulated"} if name == "hallucination"
                             else {"score": value, "rationale": "simulated"})
        return {"rubrics": rubrics, "overall": "pass", "summary": DISCLAIMER}

    def _pair_shift(self, answer: str, biases: dict[str, float], prompt: str) -> float:
        shift = self._shift(answer, biases, prompt)
        label = _known_signals().get(answer.strip())
        if label and label in biases and not bias_signals(answer).get(label):
            shift += biases[label] * (self.profile.noise_sd * math.sqrt(2) or 0.5)
        return shift

    def _pairwise(self, view: PromptView, rng: np.random.Generator) -> str:
        if self.profile.constant_score is not None:
            c = float(self.profile.constant_score)
            return json.dumps({"reasoning": DISCLAIMER, "winner": "A", "score_a": c, "score_b": c})
        biases = self._active_biases(view)
        a, b = view.answers
        known = _known_correct_answers()
        # The simulator "knows the law" of the bundled known-answer pairs: the correct answer has a
        # latent quality edge that the biases have to overcome to mislead it.
        gap = self.profile.knowledge_gap if self.profile.reads_answer else 0.0
        quality = [gap if x.strip() in known else 0.0 for x in (a, b)]
        score_a = (3.0 + quality[0] + self._pair_shift(a, biases, view.prompt)
                   + rng.normal(0, self.profile.noise_sd))
        score_b = (3.0 + quality[1] + self._pair_shift(b, biases, view.prompt)
                   + rng.normal(0, self.profile.noise_sd))
        if "position" in biases:
            score_a += biases["position"] * self.profile.noise_sd * math.sqrt(2)
        sa, sb = (round(float(min(5, max(0, s))), 1) for s in (score_a, score_b))
        winner = "A" if sa >= sb else "B"
        return json.dumps({"reasoning": DISCLAIMER, "winner": winner, "score_a": sa, "score_b": sb})


def _factory(spec: ProviderSpec, options: ProviderOptions,
             http_client: httpx.AsyncClient | None) -> SimulatedProvider:
    return SimulatedProvider(spec, options)


register_provider("simulated", _factory)
