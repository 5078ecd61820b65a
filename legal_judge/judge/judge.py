"""One judge: render the versioned prompt, call the provider, parse and validate, return a Verdict.

The JSON retry policy is the seed's: temperature 0, then up to two more attempts at 0.2 and 0.4 with
"Your previous output was not valid JSON. Ensure the response strictly conforms to the output schema."
appended. After three invalid outputs the verdict is INCONCLUSIVE with the raw output kept and an alert
emitted. A judge never invents a score: an invalid or out-of-scale score is never replaced by a default.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import logging
import re
from dataclasses import dataclass, field
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from legal_judge.assets import Assets, Rubric, RubricSet, load_assets
from legal_judge.errors import AuthError, BadRequestError, ConfigError, ProviderError
from legal_judge.models import (
    BenchmarkItem,
    CompletionRequest,
    CompletionResponse,
    Message,
    Verdict,
)
from legal_judge.store import Store, canonical_json

__all__ = [
    "DebiasConfig",
    "Judge",
    "JudgeConfig",
    "ParseError",
    "fence_for",
    "parse_verdict_json",
    "rubric_definitions",
    "rubric_vars",
    "verdict_schema",
]

log = logging.getLogger("legal_judge.judge.judge")

RETRY_TEMPERATURES = (0.0, 0.2, 0.4)
DebiasMode = Literal["plain", "aware", "self", "aware+self", "swap"]  # swap: pairwise only


class DebiasConfig(BaseModel):
    """Bias mitigation inside the judge (see ``debias.py``)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    mode: DebiasMode = "plain"
    bias: str = Field(default="generic", description="a bias name, 'generic', or 'all'")
    criterion: str = "legal accuracy and completeness under the rubrics"


class JudgeConfig(BaseModel):
    """One judge as configured in an ensemble file (``[[judges]]``) or on the command line."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    spec: str
    name: str | None = None
    weight: float = Field(default=1.0, gt=0)
    family: str | None = None
    multilingual: bool = False
    temperature: float = 0.0
    max_tokens: int = Field(default=1500, gt=0)
    options: dict[str, Any] = Field(default_factory=dict)
    debias: DebiasConfig = Field(default_factory=DebiasConfig)
    alert_webhook: str | None = None

    @property
    def label(self) -> str:
        """The judge's display name (``name`` or the spec)."""
        return self.name or self.spec


class ParseError(ValueError):
    """The judge's output is not a valid verdict; the message goes into the retry instruction."""


def fence_for(text: str) -> tuple[str, str]:
    """Delimiters the fenced text cannot close: they carry a digest of the text itself."""
    nonce = hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]
    return f"<<<UNTRUSTED_ANSWER {nonce}>>>", f"<<<END_UNTRUSTED_ANSWER {nonce}>>>"


def _score_schema(low: int, high: int) -> dict[str, Any]:
    # An integral scale as an integer enum: grammar-constrained servers (llama.cpp) enforce enums
    # but not numeric ranges, so they cannot emit 7.8 or -1. The answer is still validated.
    return {"type": "integer", "enum": list(range(int(low), int(high) + 1)),
            "minimum": low, "maximum": high}


def verdict_schema(rubrics: list[Rubric]) -> dict[str, Any]:
    """The JSON schema of a verdict for these rubrics (sent to providers that enforce schemas)."""
    props: dict[str, Any] = {}
    for r in rubrics:
        if r.kind == "numeric":
            assert r.scale is not None
            props[r.name] = {
                "type": "object",
                "properties": {
                    "score": _score_schema(r.scale.min, r.scale.max),
                    "rationale": {"type": "string"},
                },
                "required": ["score", "rationale"],
                "additionalProperties": False,
            }
        else:
            props[r.name] = {
                "type": "object",
                "properties": {"result": {"type": "string", "enum": list(r.values or [])},
                               "notes": {"type": "string"}},
                "required": ["result", "notes"],
                "additionalProperties": False,
            }
    return {
        "type": "object",
        "properties": {
            "rubrics": {"type": "object", "properties": props, "required": [r.name for r in rubrics],
                        "additionalProperties": False},
            "overall": {"type": "string", "enum": ["pass", "fail"]},
            "summary": {"type": "string"},
        },
        "required": ["rubrics", "overall", "summary"],
        "additionalProperties": False,
    }


_FENCED_JSON = re.compile(r"```(?:json)?\s*(\{.*\})\s*```", re.DOTALL)


def _extract_json(text: str) -> Any:
    candidate = text.strip()
    match = _FENCED_JSON.search(candidate)
    if match:
        candidate = match.group(1)
    elif not candidate.startswith("{"):
        start, end = candidate.find("{"), candidate.rfind("}")
        if start < 0 or end <= start:
            raise ParseError("no JSON object found")
        candidate = candidate[start : end + 1]
    try:
        return json.loads(candidate)
    except json.JSONDecodeError as exc:
        raise ParseError(f"invalid JSON: {exc.msg} at position {exc.pos}") from None


@dataclass
class ParsedVerdict:
    """The validated content of one judge answer."""

    scores: dict[str, float] = field(default_factory=dict)
    categorical: dict[str, str] = field(default_factory=dict)
    rationales: dict[str, str] = field(default_factory=dict)
    stated_overall: str = "fail"
    summary: str = ""


def _parse_numeric(r: Rubric, entry: dict[str, Any], out: ParsedVerdict) -> None:
    score = entry.get("score")
    if isinstance(score, bool) or not isinstance(score, int | float):
        raise ParseError(f"rubrics.{r.name}.score must be a number, got {score!r}")
    if not r.valid_score(float(score)):
        assert r.scale is not None
        raise ParseError(f"rubrics.{r.name}.score {score} is outside {r.scale.min}-{r.scale.max}")
    out.scores[r.name] = float(score)
    out.rationales[r.name] = str(entry.get("rationale", ""))


def _parse_categorical(r: Rubric, entry: dict[str, Any], out: ParsedVerdict) -> None:
    result = entry.get("result")
    if result not in (r.values or []):
        raise ParseError(f"rubrics.{r.name}.result must be one of {r.values}, got {result!r}")
    out.categorical[r.name] = str(result)
    out.rationales[r.name] = str(entry.get("notes", ""))


def parse_verdict_json(text: str, rubrics: list[Rubric]) -> ParsedVerdict:
    """Parse and validate a judge's JSON answer against the active rubrics.

    Raises:
        ParseError: not JSON, a rubric missing, a score missing or out of scale, a bad category.
    """
    data = _extract_json(text)
    if not isinstance(data, dict) or not isinstance(data.get("rubrics"), dict):
        raise ParseError("the answer must be an object with a 'rubrics' object")
    out = ParsedVerdict()
    for r in rubrics:
        entry = data["rubrics"].get(r.name)
        if not isinstance(entry, dict):
            raise ParseError(f"rubrics.{r.name} is missing")
        (_parse_numeric if r.kind == "numeric" else _parse_categorical)(r, entry, out)
    overall = data.get("overall")
    if overall not in ("pass", "fail"):
        raise ParseError(f"overall must be 'pass' or 'fail', got {overall!r}")
    out.stated_overall = overall
    out.summary = str(data.get("summary", ""))
    return out


def _cost(provider: str, model: str, resp: CompletionResponse) -> float | None:
    from legal_judge.providers.pricing import cost_usd

    if resp.cached:
        return 0.0  # a cache hit makes no call
    return cost_usd(model, resp.usage.input_tokens, resp.usage.output_tokens, provider=provider)


@dataclass
class _Attempts:
    raw: list[str] = field(default_factory=list)
    input_tokens: int | None = 0
    output_tokens: int | None = 0
    cost: float | None = 0.0
    latency_ms: float = 0.0
    cached: bool = True
    calls: int = 0

    def add(self, resp: CompletionResponse, cost: float | None) -> None:
        self.calls += 1
        self.raw.append(resp.text)
        self.latency_ms += resp.latency_ms
        self.cached = self.cached and resp.cached
        self.input_tokens = _add(self.input_tokens, resp.usage.input_tokens)
        self.output_tokens = _add(self.output_tokens, resp.usage.output_tokens)
        self.cost = None if self.cost is None or cost is None else self.cost + cost


def _add(a: int | None, b: int | None) -> int | None:
    return None if a is None or b is None else a + b


class Judge:
    """A configured judge bound to a provider, the assets and (optionally) the store.

    Args:
        config: The judge configuration.
        provider: An object with ``spec``, ``family`` and ``async complete(request)``.
        assets: Loaded rubrics and templates (default: :func:`load_assets`).
        rubric_set: The rubric set reference (``name`` or ``name@N``).
        store: Where calls are logged and responses cached; None disables both.
        use_cache: Read the provider cache (writes happen whenever a store is given).
    """

    #: Identical concurrent requests share one call (batch judges leave it to the collector).
    coalesce: bool = True

    def __init__(self, config: JudgeConfig, provider: Any, *, assets: Assets | None = None,
                 rubric_set: str = "legal_judge_set", store: Store | None = None,
                 use_cache: bool = True) -> None:
        self.config = config
        self.provider = provider
        self.assets = assets or load_assets()
        self.rubric_set: RubricSet = self.assets.rubric_set(rubric_set)
        self.store = store
        self.use_cache = use_cache
        self.family: str = config.family or provider.family
        self.model: str = provider.spec.model
        self.judge_id = self._compute_id()
        self._system_cache: dict[tuple[str, ...], str] = {}
        self._schemas: dict[tuple[str, ...], dict[str, Any]] = {}
        # The digests of those schemas, by identity (the values keep them alive): encoding and
        # hashing the schema for every call's cache key and call log was a fifth of its CPU.
        self._schema_digests: dict[int, tuple[dict[str, Any], str]] = {}
        # Cache key -> the call in flight for it; identical concurrent requests share one call.
        self._in_flight: dict[str, asyncio.Future[CompletionResponse | None]] = {}

    @property
    def label(self) -> str:
        """The judge's display name."""
        return self.config.label

    def _templates_used(self) -> list[str]:
        names = ["judge_system", "judge_rubric", "judge_user", "json_retry"]
        if "aware" in self.config.debias.mode:
            names.append("bias_warning")
        if "self" in self.config.debias.mode:
            names.append("self_debias")
        return names

    def identity(self) -> dict[str, Any]:
        """Everything that can change a verdict; its digest is the judge_id."""
        all_rubrics = [self.assets.rubric(n) for n in self.rubric_set.rubrics] + [
            self.assets.rubric(o.rubric) for o in self.rubric_set.optional_rubrics
        ]
        return {
            "templates": {n: self.assets.template(n).sha256 for n in self._templates_used()},
            "rubrics": {r.id: r.sha256 for r in all_rubrics},
            "rubric_set": {self.rubric_set.id: self.rubric_set.sha256},
            "provider": self.provider.spec.prefix,
            "model": self.model,
            "base_url": getattr(self.provider, "base_url", None)
            or getattr(self.provider.spec, "base_url", None),
            "temperature": self.config.temperature,
            "max_tokens": self.config.max_tokens,
            "debias": self.config.debias.model_dump(),
        }

    def _compute_id(self) -> str:
        digest = hashlib.sha256(canonical_json(self.identity()).encode()).hexdigest()
        return digest[:12]

    # prompt ------------------------------------------------------------------------------------
    def messages(self, item: BenchmarkItem, *, evidence: str | None = None) -> list[Message]:
        """The system and user messages for one item."""
        rubrics = self.active_rubrics(item)
        fence_open, fence_close = fence_for(item.response)
        system = self._system_prompt(tuple(r.name for r in rubrics), rubrics)
        user = self.assets.template("judge_user").render(
            prompt=item.prompt, response=item.response, jurisdiction=item.jurisdiction,
            expected_signals=item.expected_signals, rubric_names=[r.name for r in rubrics],
            evidence=evidence or "", fence_open=fence_open, fence_close=fence_close,
        )
        return [Message(role="system", content=system), Message(role="user", content=user)]

    def _system_prompt(self, key: tuple[str, ...], rubrics: list[Rubric]) -> str:
        # The system prompt depends only on the active rubrics: render it once per rubric list. A
        # static system prompt also lets providers' prefix caching discount the repeated tokens.
        cached = self._system_cache.get(key)
        if cached is None:
            from legal_judge.judge.mitigation import warning_text

            warning = (warning_text(self.assets, self.config.debias)
                       if "aware" in self.config.debias.mode else "")
            cached = self._system_cache[key] = self.assets.template("judge_system").render(
                rubrics=[rubric_vars(r) for r in rubrics],
                rubric_definitions=rubric_definitions(self.assets, rubrics),
                pass_fail_rule=self.rubric_set.describe_rule(), bias_warning=warning,
            )
        return cached

    def active_rubrics(self, item: BenchmarkItem) -> list[Rubric]:
        """Rubrics scored for this item (the language rubric only for Arabic/French answers)."""
        language = item.metadata.get("language") if isinstance(item.metadata, dict) else None
        return self.assets.active_rubrics(self.rubric_set, language=language)

    # calls -------------------------------------------------------------------------------------
    def cache_key(self, request: CompletionRequest) -> str:
        """Key of what changes the output: provider, model, base URL, messages, parameters, schema."""
        spec = self.provider.spec
        # The URL actually used (a default endpoint or an options override), not only the spec's.
        base_url = getattr(self.provider, "base_url", None) or getattr(spec, "base_url", None)
        # Hash the message texts directly: JSON-encoding ~10 KB of prompt per call is the slow part.
        h = hashlib.sha256()
        head = request.model_dump(exclude={"messages", "json_schema"})
        h.update(canonical_json({"provider": spec.prefix, "base_url": base_url, **head}).encode())
        h.update(b"\x00" + self._schema_digest(request.json_schema).encode())
        for m in request.messages:
            h.update(b"\x00" + m.role.encode() + b"\x1f" + m.content.encode())
        return h.hexdigest()

    def _schema_digest(self, schema: dict[str, Any] | None) -> str:
        """SHA-256 of the schema's canonical JSON (``"none"`` without one)."""
        if schema is None:
            return "none"
        known = self._schema_digests.get(id(schema))
        if known is not None and known[0] is schema:  # one of this judge's own schemas
            return known[1]
        return hashlib.sha256(canonical_json(schema).encode()).hexdigest()

    async def complete(self, request: CompletionRequest, *, run_id: str | None, item_id: str,
                       purpose: str, attempt: int) -> CompletionResponse:
        """One provider call through the cache, logged in the store.

        A request identical to one in flight (same cache key) waits for it and is answered as a
        cache hit, as it would be a moment later: an audit's variants and a benchmark's repeated
        items often render the same request, and concurrency would otherwise pay for each.
        """
        key = self.cache_key(request) if self.store is not None else ""
        shared = self.store is not None and self.use_cache and self.coalesce
        if self.store is not None and self.use_cache:
            hit = self.store.cache_get(key)
            if hit is None and shared and key in self._in_flight:
                first = await asyncio.shield(self._in_flight[key])
                hit = None if first is None else first.model_dump()
            if hit is not None:
                resp = CompletionResponse.model_validate({**hit, "cached": True, "latency_ms": 0.0,
                                                          "retries": 0})
                self._log_call(run_id, item_id, purpose, attempt, request, resp, None)
                return resp
        if not shared:
            return await self._call(request, key, run_id, item_id, purpose, attempt)
        # None tells the waiting callers that this call failed: each then makes its own.
        done: asyncio.Future[CompletionResponse | None] = asyncio.get_running_loop().create_future()
        self._in_flight[key] = done
        answer: CompletionResponse | None = None
        try:
            answer = await self._call(request, key, run_id, item_id, purpose, attempt)
            return answer
        finally:
            if self._in_flight.get(key) is done:
                del self._in_flight[key]
            done.set_result(answer)

    async def _call(self, request: CompletionRequest, key: str, run_id: str | None, item_id: str,
                    purpose: str, attempt: int) -> CompletionResponse:
        try:
            resp = await self.provider.complete(request)
        except ProviderError as exc:
            self._log_call(run_id, item_id, purpose, attempt, request, None, str(exc),
                           retries=getattr(exc, "retries", 0))
            raise
        cache = None
        if self.store is not None:
            cache = (key, self.provider.spec.prefix, self.model,
                     resp.model_dump(exclude={"cached", "latency_ms", "retries"}))
        if not self._log_call(run_id, item_id, purpose, attempt, request, resp, None, cache=cache) \
                and cache is not None and self.store is not None:
            self.store.cache_put(key, provider=cache[1], model=cache[2], response=cache[3])
        return resp

    def _log_call(self, run_id: str | None, item_id: str, purpose: str, attempt: int,
                  request: CompletionRequest, resp: CompletionResponse | None, error: str | None,
                  *, cache: tuple[str, str, str, dict[str, Any]] | None = None,
                  retries: int = 0) -> bool:
        """Log the call (and cache its response in the same commit); False when not logged."""
        if self.store is None or run_id is None:
            return False
        self.store.record_call(
            run_id, item_id, self.label, purpose=purpose, attempt=attempt,
            request=_call_summary(request, self._schema_digest(request.json_schema)),
            response_text=resp.text if resp else None,
            usage=resp.usage.model_dump() if resp else None,
            latency_ms=resp.latency_ms if resp else None, cached=bool(resp and resp.cached),
            retries=resp.retries if resp else retries, error=error, cache=cache,
        )
        return True

    async def judge(self, item: BenchmarkItem, *, run_id: str | None = None,
                    evidence: str | None = None) -> Verdict:
        """Judge one item. Provider failures after transport retries become an ``error`` verdict.

        Raises:
            AuthError, BadRequestError, ConfigError: configuration problems that no retry can fix.
        """
        vkey = self.verdict_key(item, evidence) if self.store is not None else ""
        if self.store is not None and self.use_cache:
            hit = self.store.cache_get(vkey)
            if hit is not None:
                return self._verdict_from_cache(hit)
        rubrics = self.active_rubrics(item)
        messages = self.messages(item, evidence=evidence)
        verdict = await self._verdict_uncached(item, rubrics, messages, run_id=run_id)
        if self.store is not None and verdict.status != "error":
            self.store.cache_put(vkey, provider=self.provider.spec.prefix, model=self.model,
                                 response=verdict.model_dump())
        return verdict

    def verdict_key(self, item: BenchmarkItem, evidence: str | None) -> str:
        """Key of a whole verdict: the judge_id plus every item field the prompt uses.

        A rerun with the same judge on the same items skips rendering, the provider and parsing.
        """
        h = hashlib.sha256(f"verdict:{self.judge_id}".encode())
        language = item.metadata.get("language") if isinstance(item.metadata, dict) else None
        for part in (item.prompt, item.response, item.jurisdiction or "",
                     "\x1e".join(item.expected_signals), str(language), evidence or ""):
            h.update(b"\x00" + part.encode())
        return "verdict:" + h.hexdigest()

    def _verdict_from_cache(self, data: dict[str, Any]) -> Verdict:
        """A cached verdict as this judge's: its display name and family, not the cached ones.

        The cache key is the judge_id, which a display name (or a family override, which only
        weighs the verdict) does not change: a renamed judge reuses its verdicts, and they must
        carry the name the ensemble knows it by.
        """
        # No call was made, so none is logged; the verdict itself says it came from the cache.
        return Verdict.model_validate(data).model_copy(update={
            "judge": self.label, "family": self.family,
            "cached": True, "cost_usd": 0.0, "latency_ms": 0.0,
            "extra": {**data.get("extra", {}), "cache": "verdict"}})

    async def _verdict_uncached(self, item: BenchmarkItem, rubrics: list[Rubric],
                                messages: list[Message], *, run_id: str | None) -> Verdict:
        try:
            verdict = await self._judge_with_retries(item, rubrics, messages, run_id=run_id)
            if verdict.status == "ok" and "self" in self.config.debias.mode:
                from legal_judge.judge.mitigation import self_debias_pass

                verdict = await self_debias_pass(self, item, rubrics, messages, verdict, run_id=run_id)
        except (AuthError, BadRequestError, ConfigError):
            raise
        except ProviderError as exc:
            return self._verdict_error(f"provider failed after retries: {exc.message}")
        return verdict

    async def _judge_with_retries(self, item: BenchmarkItem, rubrics: list[Rubric],
                                  messages: list[Message], *, run_id: str | None,
                                  purpose: str = "verdict") -> Verdict:
        names = tuple(r.name for r in rubrics)
        schema = self._schemas.get(names)
        if schema is None:  # one schema per rubric list, built once
            schema = self._schemas[names] = verdict_schema(rubrics)
            self._schema_digests[id(schema)] = (
                schema, hashlib.sha256(canonical_json(schema).encode()).hexdigest())
        acc = _Attempts()
        convo = list(messages)
        error = ""
        for attempt, temperature in enumerate(RETRY_TEMPERATURES, start=1):
            temp = self.config.temperature if attempt == 1 else temperature
            # Built from validated parts without validating again, which would copy the schema
            # (and lose its memoised digest) on every call.
            request = CompletionRequest.model_construct(
                model=self.model, messages=convo, temperature=temp,
                max_tokens=self.config.max_tokens, json_schema=schema,
            )
            resp = await self.complete(request, run_id=run_id, item_id=item.id, purpose=purpose,
                                       attempt=attempt)
            acc.add(resp, _cost(self.provider.spec.prefix, self.model, resp))
            try:
                if resp.finish_reason == "length":
                    raise ParseError("the output was truncated at max_tokens")
                parsed = parse_verdict_json(resp.text, rubrics)
            except ParseError as exc:
                error = str(exc)
                if resp.refusal:
                    error = f"the model refused: {resp.refusal}"
                convo = [*convo, Message(role="assistant", content=resp.text or "(empty)"),
                         Message(role="user",
                                 content=self.assets.template("json_retry").render(error=error))]
                continue
            return self._verdict_ok(parsed, acc)
        return self._verdict_inconclusive(error, acc, item_id=item.id)

    def _verdict_ok(self, parsed: ParsedVerdict, acc: _Attempts) -> Verdict:
        reasons = self.rubric_set.fail_reasons(parsed.scores, parsed.categorical)
        return Verdict(
            judge_id=self.judge_id, judge=self.label, family=self.family, status="ok",
            scores=parsed.scores, hallucination=parsed.categorical.get("hallucination"),  # type: ignore[arg-type]
            rationales=parsed.rationales, overall="fail" if reasons else "pass",
            rule_fail_reasons=reasons, summary=parsed.summary, raw=acc.raw[-1], attempts=acc.calls,
            input_tokens=acc.input_tokens, output_tokens=acc.output_tokens, cost_usd=acc.cost,
            latency_ms=acc.latency_ms, cached=acc.cached,
            extra={"stated_overall": parsed.stated_overall},
        )

    def _verdict_inconclusive(self, error: str, acc: _Attempts, *, item_id: str) -> Verdict:
        log.warning("INCONCLUSIVE: judge %s on item %s after %d attempts: %s",
                    self.label, item_id, acc.calls, error)
        if self.config.alert_webhook:
            from legal_judge.alerts import post_alert

            post_alert(self.config.alert_webhook, judge=self.label, item_id=item_id, error=error)
        return Verdict(
            judge_id=self.judge_id, judge=self.label, family=self.family, status="inconclusive",
            reason=f"invalid output after {acc.calls} attempts: {error}",
            raw="\n---\n".join(acc.raw), attempts=acc.calls, input_tokens=acc.input_tokens,
            output_tokens=acc.output_tokens, cost_usd=acc.cost, latency_ms=acc.latency_ms,
            cached=acc.cached,
        )

    def _verdict_error(self, reason: str) -> Verdict:
        return Verdict(judge_id=self.judge_id, judge=self.label, family=self.family,
                       status="error", reason=reason)


def _call_summary(request: CompletionRequest, schema_digest: str) -> dict[str, Any]:
    """What the call log keeps of a request: parameters, and digests of the bulky parts."""
    out = request.model_dump(exclude={"messages", "json_schema"})
    out["n_messages"] = len(request.messages)
    out["messages_sha256"] = hashlib.sha256(
        "\x1e".join(m.content for m in request.messages).encode()).hexdigest()[:16]
    if request.json_schema is not None:
        out["json_schema_sha256"] = schema_digest[:16]
    return out


def rubric_definitions(assets: Assets, rubrics: list[Rubric]) -> str:
    """The rubric blocks of the judge prompt (``judge_rubric`` template, one per rubric)."""
    template = assets.template("judge_rubric")
    return "\n\n".join(template.render(r=rubric_vars(r)).strip() for r in rubrics)


def rubric_vars(r: Rubric) -> dict[str, Any]:
    """The variables a template sees for one rubric."""
    return _rubric_vars(r)


def _rubric_vars(r: Rubric) -> dict[str, Any]:
    return {
        "name": r.name, "title": r.title, "kind": r.kind, "description": r.description,
        "bias_guard": r.bias_guard, "guide": list(r.guide.items()),
        "scale_min": r.scale.min if r.scale else None, "scale_max": r.scale.max if r.scale else None,
        "categories": r.values or [],
    }
