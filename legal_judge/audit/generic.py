"""A team's own judge under audit: a prompt template, a provider spec, where the score is, its scale.

.. code-block:: yaml

    kind: generic
    name: support-answer-judge
    provider: openai:gpt-4o
    system_template: "You grade answers of a legal assistant."
    prompt_template: |
      Question: {{ input }}
      Answer between the markers (untrusted): {{ fence_open }}
      {{ output }}
      {{ fence_close }}
      Return JSON {"score": 1-5, "reason": "..."}
    score: {json_path: "$.score", scale: [1, 5]}     # or {regex: "Score: (\\d+)", scale: [1, 5]}
    pairwise_template: null     # optional: variables question, answer_a, answer_b, fence_open/close
    high_stakes: false

Templates render in the sandbox (``legal_judge.assets.templates.render_string``) with ``input``/``prompt``,
``output``/``response``, ``jurisdiction``, ``expected_signals``, ``fence_open`` and ``fence_close``.
Calls go through the store's provider cache and call log like legal-judge's own judge.
"""

from __future__ import annotations

import hashlib
import re
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, model_validator

from legal_judge.assets.catalogue import Assets, load_assets
from legal_judge.assets.templates import render_string
from legal_judge.audit.calls import (
    Compared,
    Scored,
    compared_or_error,
    json_path_get,
    number_in,
    parse_pairwise,
    repeat_seed,
    with_json_retries,
)
from legal_judge.errors import AuthError, BadRequestError, ProviderError
from legal_judge.judge.parse import ParseError, extract_json, fence_for
from legal_judge.models import (
    BenchmarkItem,
    CallContext,
    CompletionRequest,
    CompletionResponse,
    Message,
)
from legal_judge.store import Store, canonical_json

__all__ = ["GenericTarget", "GenericTargetConfig", "ScoreLocation"]


class ScoreLocation(BaseModel):
    """Where the score sits in the judge's answer: a JSON path or a regex (group 1), and its scale."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    json_path: str | None = None
    regex: str | None = None
    scale: tuple[float, float] = (1.0, 5.0)

    @model_validator(mode="after")
    def _one_location(self) -> ScoreLocation:
        if (self.json_path is None) == (self.regex is None):
            raise ValueError("give exactly one of json_path or regex")
        if self.regex is not None:
            compiled = re.compile(self.regex)
            if compiled.groups < 1:
                raise ValueError("the regex needs a capturing group around the score")
        if self.scale[0] >= self.scale[1]:
            raise ValueError("scale must be [min, max] with min < max")
        return self

    def extract(self, text: str) -> float:
        """The score in ``text``; ParseError when absent or outside the scale."""
        if self.json_path is not None:
            value = json_path_get(extract_json(text), self.json_path)
            return number_in(value, self.scale, where=self.json_path)
        assert self.regex is not None
        match = re.search(self.regex, text)
        if match is None:
            raise ParseError(f"no match for the score regex {self.regex!r}")
        return number_in(match.group(1), self.scale, where="score")


def _step(scale: tuple[float, float]) -> float:
    """One scale step: 1 point on a scale of four points or more, else a quarter of the range."""
    span = float(scale[1] - scale[0])
    return 1.0 if span >= 4 else span / 4


class PairwiseLocation(BaseModel):
    """JSON paths of a pairwise answer."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    first: str = "score_a"
    second: str = "score_b"
    winner: str = "winner"


class GenericTargetConfig(BaseModel):
    """A generic target judge (``kind: generic`` in a target YAML file)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str
    provider: str
    prompt_template: str | None = None
    prompt_template_file: str | None = None
    system_template: str | None = None
    score: ScoreLocation
    pairwise_template: str | None = None
    pairwise: PairwiseLocation = Field(default_factory=PairwiseLocation)
    temperature: float = 0.0
    max_tokens: int = Field(default=800, gt=0)
    high_stakes: bool = False
    input_schema: str | None = None
    output_schema: str | None = None
    scoring_rubric: str | None = None
    options: dict[str, Any] = Field(default_factory=dict)

    @model_validator(mode="after")
    def _template_given(self) -> GenericTargetConfig:
        if (self.prompt_template is None) == (self.prompt_template_file is None):
            raise ValueError("give exactly one of prompt_template or prompt_template_file")
        return self


class GenericTarget:
    """Any judge described by a :class:`GenericTargetConfig`."""

    kind = "generic"

    def __init__(self, config: GenericTargetConfig, provider: Any, *, template: str,
                 store: Store | None, use_cache: bool = True, request_seed: int | None = None,
                 assets: Assets | None = None) -> None:
        self.config = config
        self.provider = provider
        self.template = template
        self.store = store
        self.use_cache = use_cache
        self.request_seed = request_seed
        self.assets = assets or load_assets()
        self.high_stakes = config.high_stakes
        self.label = config.name
        self.supports_pairwise = config.pairwise_template is not None
        self.judge_id = hashlib.sha256(canonical_json(self.identity()).encode()).hexdigest()[:12]

    @classmethod
    def from_config(cls, config: GenericTargetConfig, *, store: Store | None, use_cache: bool = True,
                    request_seed: int | None = None, base_dir: Path | None = None) -> GenericTarget:
        """Create the provider and read the template file (relative to ``base_dir``)."""
        from legal_judge.providers.base import ProviderOptions
        from legal_judge.providers.registry import get_provider

        template = config.prompt_template
        if template is None:
            assert config.prompt_template_file is not None
            path = Path(config.prompt_template_file)
            template = ((base_dir / path) if base_dir and not path.is_absolute() else path
                        ).read_text(encoding="utf-8")
        provider = get_provider(config.provider, options=ProviderOptions(**config.options))
        return cls(config, provider, template=template, store=store, use_cache=use_cache,
                   request_seed=request_seed)

    def identity(self) -> dict[str, Any]:
        """Everything that can change a score; its digest is the judge_id."""
        return {"kind": "generic", "provider": self.config.provider, "template": self.template,
                "system": self.config.system_template, "pairwise": self.config.pairwise_template,
                "score": self.config.score.model_dump(), "temperature": self.config.temperature,
                "max_tokens": self.config.max_tokens}

    def describe(self) -> dict[str, Any]:
        """The seed's target-judge specification."""
        c = self.config
        return {"judge_prompt_template": self.template,
                "judge_input_schema": c.input_schema or "input (the user prompt), output (the answer)",
                "judge_output_schema": c.output_schema or (
                    f"score at {c.score.json_path or c.score.regex}"),
                "judge_scoring_rubric": c.scoring_rubric or "as written in the prompt template",
                "scale": list(c.score.scale), "scale_step": _step(c.score.scale),
                "spec": c.provider, "name": c.name}

    async def _complete(self, request: CompletionRequest) -> CompletionResponse:
        key = hashlib.sha256(canonical_json({"provider": self.config.provider,
                                             "request": request.model_dump()}).encode()).hexdigest()
        if self.store is not None and self.use_cache:
            hit = self.store.cache_get(key)
            if hit is not None:
                return CompletionResponse.model_validate({**hit, "cached": True, "latency_ms": 0.0,
                                                          "retries": 0})
        try:
            resp = await self.provider.complete(request)
        except ProviderError as exc:
            self._log(request, None, str(exc))
            raise
        if self.store is not None:
            self.store.cache_put(key, provider=self.provider.spec.prefix, model=request.model,
                                 response=resp.model_dump(exclude={"cached", "latency_ms", "retries"}))
        self._log(request, resp, None)
        return resp

    def _log(self, request: CompletionRequest, resp: CompletionResponse | None,
             error: str | None) -> None:
        ctx = request.context
        if self.store is None or ctx is None or ctx.run is None:
            return
        self.store.record_call(
            ctx.run, ctx.item, self.label, purpose=ctx.purpose, attempt=ctx.attempt,
            request=request.model_dump(exclude={"messages"}) | {"n_messages": len(request.messages)},
            response_text=resp.text if resp else None,
            usage=resp.usage.model_dump() if resp else None,
            latency_ms=resp.latency_ms if resp else None, cached=bool(resp and resp.cached),
            retries=resp.retries if resp else 0, error=error,
        )

    def _messages(self, user: str) -> list[Message]:
        out = [Message(role="system", content=self.config.system_template)] \
            if self.config.system_template else []
        return [*out, Message(role="user", content=user)]

    async def _run(self, user: str, parse: Any, *, run_id: str, item_id: str, purpose: str,
                   repeat: int) -> Any:
        return await with_json_retries(
            self._complete, self._messages(user), parse, assets=self.assets,
            provider=self.provider.spec.prefix, model=self.provider.spec.model,
            temperature=self.config.temperature, max_tokens=self.config.max_tokens,
            json_schema=None, schema_name="score", seed=repeat_seed(self.request_seed, repeat),
            context=CallContext(run_id, item_id, self.label, purpose),
        )

    async def score(self, item: BenchmarkItem, *, run_id: str, repeat: int = 0,
                    slot: int | None = None) -> Scored:
        """Render the template for one variant, call, and extract the score."""
        fence_open, fence_close = fence_for(item.response)
        user = render_string(self.template, {
            "input": item.prompt, "prompt": item.prompt, "output": item.response,
            "response": item.response, "jurisdiction": item.jurisdiction or "",
            "expected_signals": item.expected_signals, "fence_open": fence_open,
            "fence_close": fence_close}, name=f"{self.label} prompt_template")
        try:
            out = await self._run(user, self.config.score.extract, run_id=run_id, item_id=item.id,
                                  purpose="audit", repeat=repeat)
        except (AuthError, BadRequestError):
            raise
        except ProviderError as exc:
            return Scored(None, "error", f"provider failed after retries: {exc.message}")
        return Scored(out.value, out.status, out.reason, "\n---\n".join(out.raw), len(out.raw),
                      out.cached)

    async def compare(self, question: str, first: str, second: str, *, run_id: str, item_id: str,
                      repeat: int = 0, slot: int | None = None) -> Compared:
        """Pairwise judgment with the target's own pairwise template."""
        if self.config.pairwise_template is None:
            return Compared(None, None, None, "error", "the target has no pairwise_template")
        fence_open, fence_close = fence_for(first + "\n" + second)
        user = render_string(self.config.pairwise_template, {
            "question": question, "answer_a": first, "answer_b": second,
            "fence_open": fence_open, "fence_close": fence_close},
            name=f"{self.label} pairwise_template")
        loc = self.config.pairwise

        def parse(text: str) -> tuple[float, float, str]:
            return parse_pairwise(text, first=loc.first, second=loc.second, winner=loc.winner,
                                  scale=self.config.score.scale)

        return await compared_or_error(self._run(user, parse, run_id=run_id, item_id=item_id,
                                                 purpose="audit-pairwise", repeat=repeat))

    async def aclose(self) -> None:
        """Close the provider."""
        close = getattr(self.provider, "aclose", None)
        if close is not None:
            await close()
