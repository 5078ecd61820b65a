"""One judge: render the versioned prompt, call the provider, parse and validate, return a Verdict.

The JSON retry policy is :mod:`legal_judge.judge.calls`'s (the seed's): after three invalid outputs
the verdict is INCONCLUSIVE with the raw output kept and an alert emitted. A judge never invents a
score: an invalid or out-of-scale score is never replaced by a default. The calls themselves (cache,
single flight, call log) are :class:`~legal_judge.judge.calls.Calls`'.
"""

from __future__ import annotations

import hashlib
import logging
from dataclasses import replace
from typing import Any

from legal_judge.assets.catalogue import Assets, load_assets
from legal_judge.assets.rubrics import DEFAULT_RUBRIC_SET, Rubric, RubricSet
from legal_judge.errors import AuthError, BadRequestError, ConfigError, ProviderError
from legal_judge.judge.calls import Attempts, Calls, add_counts, run_attempts, with_batch_calls
from legal_judge.judge.config import JudgeConfig
from legal_judge.judge.mitigation import self_debias_text, verdict_json, warning_text
from legal_judge.judge.parse import (
    ParsedVerdict,
    expected_scores,
    fence_for,
    parse_verdict_json,
    rubric_definitions,
    rubric_vars,
    say_no_logprobs,
    verdict_schema,
)
from legal_judge.models import (
    BenchmarkItem,
    CallContext,
    CompletionRequest,
    CompletionResponse,
    Message,
    Verdict,
)
from legal_judge.store import PendingWrites, Store, canonical_json

__all__ = ["Judge", "rubric_definitions", "rubric_vars", "verdict_key_item_part"]

log = logging.getLogger("legal_judge.judge")

# Recently rendered user messages (a pure function of the key: see Judge.messages).
_USER_MESSAGES: dict[tuple[Any, ...], str] = {}


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

    def __init__(self, config: JudgeConfig, provider: Any, *, assets: Assets | None = None,
                 rubric_set: str = DEFAULT_RUBRIC_SET, store: Store | None = None,
                 use_cache: bool = True) -> None:
        self.config = config
        #: The judge's display name (``name`` or the spec), read once: every call's context
        #: and every verdict carry it.
        self.label: str = config.label
        self.calls = Calls(provider, label=self.label, store=store, use_cache=use_cache)
        self.assets = assets or load_assets()
        self.rubric_set: RubricSet = self.assets.rubric_set(rubric_set)
        self.store = store
        self.use_cache = use_cache
        self.family: str = config.family or provider.family
        self.model: str = provider.spec.model
        self.judge_id = self._compute_id()
        self._system_cache: dict[tuple[str, ...], str] = {}
        self._schemas: dict[tuple[str, ...], dict[str, Any]] = {}
        #: Set once a fresh answer came without token log-probabilities (said once, then quiet).
        self.logprobs_missing = False
        # Per answer language, the rubrics scored; the user template (each read once).
        self._active: dict[str | None, list[Rubric]] = {}
        self._user_template = self.assets.template("judge_user")

    @property
    def provider(self) -> Any:
        """The provider the calls go to."""
        return self.calls.provider

    @provider.setter
    def provider(self, provider: Any) -> None:
        self.calls.provider = provider

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
        names = tuple(r.name for r in rubrics)
        system = self._system_prompt(names, rubrics)
        template = self._user_template
        # The judges of an item render the same user message: render it once (the key is the
        # template's source and every variable it is given).
        key = (template.source, item.prompt, item.response, item.jurisdiction,
               tuple(item.expected_signals), names, evidence or "")
        user = _USER_MESSAGES.get(key)
        if user is None:
            fence_open, fence_close = fence_for(item.response)
            user = template.render(
                prompt=item.prompt, response=item.response, jurisdiction=item.jurisdiction,
                expected_signals=item.expected_signals, rubric_names=list(names),
                evidence=evidence or "", fence_open=fence_open, fence_close=fence_close,
            )
            if len(_USER_MESSAGES) >= 256:
                _USER_MESSAGES.pop(next(iter(_USER_MESSAGES)))  # the oldest
            _USER_MESSAGES[key] = user
        return [Message(role="system", content=system), Message(role="user", content=user)]

    def _system_prompt(self, key: tuple[str, ...], rubrics: list[Rubric]) -> str:
        # The system prompt depends only on the active rubrics: render it once per rubric list. A
        # static system prompt also lets providers' prefix caching discount the repeated tokens.
        cached = self._system_cache.get(key)
        if cached is None:
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
        if not isinstance(language, str | None):  # an odd metadata value: not a memo key
            return self.assets.active_rubrics(self.rubric_set, language=language)
        rubrics = self._active.get(language)
        if rubrics is None:
            rubrics = self._active[language] = self.assets.active_rubrics(self.rubric_set,
                                                                          language=language)
        return rubrics

    def _schema(self, rubrics: list[Rubric]) -> dict[str, Any]:
        names = tuple(r.name for r in rubrics)
        schema = self._schemas.get(names)
        if schema is None:  # one schema per rubric list, built once
            schema = self._schemas[names] = verdict_schema(rubrics)
        return schema

    # calls -------------------------------------------------------------------------------------
    def cache_key(self, request: CompletionRequest) -> str:
        """Key of what changes the output: provider, model, base URL, messages, parameters, schema."""
        return self.calls.cache_key(request)

    async def complete(self, request: CompletionRequest, *, run_id: str | None, item_id: str,
                       purpose: str, attempt: int,
                       writes: PendingWrites | None = None) -> CompletionResponse:
        """One call outside a judgment (a script, a test), its context built from these words,
        through :meth:`Calls.complete <legal_judge.judge.calls.Calls.complete>`."""
        context = CallContext(run_id, item_id, self.label, purpose, attempt)
        return await self.calls.complete(request.with_context(context), writes)

    def context(self, item_id: str, *, run_id: str | None, purpose: str = "verdict",
                slot: int | None = None) -> CallContext:
        """The context of this judge's calls about ``item_id`` (attempt 1)."""
        return CallContext(run_id, item_id, self.label, purpose, 1, slot)

    # verdicts ----------------------------------------------------------------------------------
    async def judge(self, item: BenchmarkItem, *, run_id: str | None = None,
                    evidence: str | None = None, seed: int | None = None,
                    writes: PendingWrites | None = None, read_cache: bool = True,
                    slot: int | None = None) -> Verdict:
        """Judge one item. Provider failures after transport retries become an ``error`` verdict.

        Args:
            item: The item.
            run_id: The run (or audit) the calls are logged under; None logs nothing.
            evidence: The rule-based findings shown to the judge.
            seed: A request seed (the audit's noise-floor repeat): the same judge (same judge_id)
                makes a fresh call, cached apart from the unseeded judgment.
            writes: Where the judgment's rows (its calls' log rows and cache entries, the
                verdict's cache entry) wait for the caller's commit, with the verdict row the
                caller adds (a run: one commit per judged call). None: the judgment commits its
                own rows before it returns (raises or is cancelled).
            read_cache: Look the verdict up in the verdict cache first (False: the caller
                already did, for every judge of the item at once). ``use_cache`` still applies.
            slot: The audit's call slot, carried by the calls' context (a batch custom id).

        Raises:
            AuthError, BadRequestError, ConfigError: configuration problems that no retry can fix.
        """
        context = self.context(item.id, run_id=run_id, slot=slot)
        try:
            if self.store is None:
                return await self._judged(item, context, evidence, seed, None, read_cache)
            if writes is not None:
                return await self._judged(item, context, evidence, seed, writes, read_cache)
            own = self.store.writes()
            try:
                return await self._judged(item, context, evidence, seed, own, read_cache)
            finally:
                own.flush()
        finally:
            # A provider that collects calls into batches waits for every judgment to park or end.
            self.calls.judgment_ended()

    async def _judged(self, item: BenchmarkItem, context: CallContext, evidence: str | None,
                      seed: int | None, writes: PendingWrites | None,
                      read_cache: bool) -> Verdict:
        vkey = self.verdict_key(item, evidence, seed=seed) if self.store is not None else ""
        if self.store is not None and self.use_cache and read_cache:
            hit = self.store.cached_verdicts([vkey]).get(vkey)
            if hit is not None:
                return self.cached_verdict(hit)
        rubrics = self.active_rubrics(item)
        messages = self.messages(item, evidence=evidence)
        verdict = await self._verdict_uncached(item, rubrics, messages, context=context, seed=seed,
                                               writes=writes)
        if writes is not None and verdict.status != "error":
            writes.verdict_cache(vkey, provider=self.provider.spec.prefix, model=self.model,
                                 verdict=verdict.model_dump())
        return verdict

    def verdict_key(self, item: BenchmarkItem, evidence: str | None, *,
                    seed: int | None = None, item_part: bytes | None = None) -> str:
        """Key of a whole verdict: the judge_id plus every item field the prompt uses.

        A rerun with the same judge on the same items skips rendering, the provider and parsing. A
        seeded judgment has its own key: without it, the noise-floor repeat (same judge_id, another
        seed) would be served the first judgment's verdict, and the measured noise would be zero.

        Args:
            item_part: :func:`verdict_key_item_part` of ``(item, evidence)``, when the caller
                keys the item for several judges (it is the same for each).
        """
        h = hashlib.sha256(f"verdict:{self.judge_id}".encode())
        h.update(item_part if item_part is not None else verdict_key_item_part(item, evidence))
        key = "verdict:" + h.hexdigest()
        return key if seed is None else f"{key}:seed{seed}"

    def cached_verdict(self, text: str) -> Verdict:
        """A cached verdict (its stored JSON text) as this judge's: its display name and family,
        not the cached ones.

        The cache key is the judge_id, which a display name (or a family override, which only
        weighs the verdict) does not change: a renamed judge reuses its verdicts, and they must
        carry the name the ensemble knows it by.
        """
        # Decoded and validated in one pass; the fields replaced are plain values, so the copy
        # needs no second validation. No call was made, so none is logged; the verdict itself
        # says it came from the cache.
        cached = Verdict.model_validate_json(text)
        return cached.model_copy(update={
            "judge": self.label, "family": self.family,
            "cached": True, "cost_usd": 0.0, "latency_ms": 0.0,
            "extra": {**cached.extra, "cache": "verdict"}})

    async def _verdict_uncached(self, item: BenchmarkItem, rubrics: list[Rubric],
                                messages: list[Message], *, context: CallContext,
                                seed: int | None, writes: PendingWrites | None) -> Verdict:
        try:
            verdict = await self._judge_with_retries(item, rubrics, messages, context=context,
                                                     seed=seed, writes=writes)
            if verdict.status == "ok" and "self" in self.config.debias.mode:
                verdict = await self._self_debias(item, rubrics, messages, verdict,
                                                  context=context, seed=seed, writes=writes)
        except (AuthError, BadRequestError, ConfigError):
            raise
        except ProviderError as exc:
            return self._verdict_error(f"provider failed after retries: {exc.message}")
        return verdict

    async def _judge_with_retries(self, item: BenchmarkItem, rubrics: list[Rubric],
                                  messages: list[Message], *, context: CallContext,
                                  seed: int | None, writes: PendingWrites | None) -> Verdict:
        async def call(request: CompletionRequest) -> CompletionResponse:
            return await self.calls.complete(request, writes)

        out = await run_attempts(
            call, messages, lambda text: parse_verdict_json(text, rubrics), assets=self.assets,
            provider=self.provider.spec.prefix, model=self.model,
            temperature=self.config.temperature, max_tokens=self.config.max_tokens,
            json_schema=self._schema(rubrics), seed=seed, context=context)
        if out.ok and out.value is not None:
            return with_batch_calls(self._verdict_ok(out.value, out, rubrics), out.batched)
        return with_batch_calls(self._verdict_inconclusive(out, item_id=item.id), out.batched)

    async def _self_debias(self, item: BenchmarkItem, rubrics: list[Rubric],
                           messages: list[Message], first: Verdict, *, context: CallContext,
                           seed: int | None, writes: PendingWrites | None) -> Verdict:
        """Second request: check the first verdict for bias, then give the final verdict (same schema)."""
        text = self_debias_text(
            self.assets, self.config.debias, verdict=verdict_json(first),
            final_instruction="answer with the final verdict as the same JSON object only.",
        )
        convo = [*messages, Message(role="assistant", content=first.raw),
                 Message(role="user", content=text)]
        second = await self._judge_with_retries(
            item, rubrics, convo, context=replace(context, purpose="self_debias"), seed=seed,
            writes=writes)
        batched = first.extra.get("batch_calls", 0) + second.extra.get("batch_calls", 0)
        first_summary = {"scores": first.scores, "hallucination": first.hallucination,
                         "overall": first.overall}
        if second.status != "ok":
            # The second pass failed: the first verdict stands, and the failure is recorded.
            return with_batch_calls(first.model_copy(update={"extra": {
                **first.extra, "self_debias": {"status": second.status, "reason": second.reason,
                                               "changed": False}}}), batched)
        changed = (second.scores != first.scores or second.overall != first.overall
                   or second.hallucination != first.hallucination)
        return with_batch_calls(second.model_copy(update={
            "attempts": first.attempts + second.attempts,
            "input_tokens": add_counts(first.input_tokens, second.input_tokens),
            "output_tokens": add_counts(first.output_tokens, second.output_tokens),
            "cost_usd": None if first.cost_usd is None or second.cost_usd is None
            else first.cost_usd + second.cost_usd,
            "latency_ms": first.latency_ms + second.latency_ms,
            "cached": first.cached and second.cached,
            "extra": {**second.extra, "self_debias": {"status": "ok", "first_verdict": first_summary,
                                                      "changed": changed}},
        }), batched)

    def _verdict_ok(self, parsed: ParsedVerdict, acc: Attempts[ParsedVerdict],
                    rubrics: list[Rubric]) -> Verdict:
        reasons = self.rubric_set.fail_reasons(parsed.scores, parsed.categorical)
        extra: dict[str, Any] = {"stated_overall": parsed.stated_overall}
        expected = expected_scores(acc.raw[-1], acc.logprobs, rubrics)
        if expected is not None:
            extra["expected_scores"] = expected
        elif not acc.cached and not self.logprobs_missing:
            self.logprobs_missing = say_no_logprobs(self.label, self.provider)
        return Verdict(
            judge_id=self.judge_id, judge=self.label, family=self.family, status="ok",
            scores=parsed.scores, hallucination=parsed.categorical.get("hallucination"),  # type: ignore[arg-type]
            rationales=parsed.rationales, overall="fail" if reasons else "pass",
            rule_fail_reasons=reasons, summary=parsed.summary, raw=acc.raw[-1], attempts=acc.calls,
            input_tokens=acc.input_tokens, output_tokens=acc.output_tokens, cost_usd=acc.cost_usd,
            latency_ms=acc.latency_ms, cached=acc.cached, extra=extra,
        )

    def _verdict_inconclusive(self, acc: Attempts[ParsedVerdict], *, item_id: str) -> Verdict:
        log.warning("INCONCLUSIVE: judge %s on item %s after %d attempts: %s",
                    self.label, item_id, acc.calls, acc.error)
        if self.config.alert_webhook:
            from legal_judge.alerts import post_alert

            post_alert(self.config.alert_webhook, judge=self.label, item_id=item_id, error=acc.error)
        return Verdict(
            judge_id=self.judge_id, judge=self.label, family=self.family, status="inconclusive",
            reason=acc.reason, raw="\n---\n".join(acc.raw), attempts=acc.calls,
            input_tokens=acc.input_tokens, output_tokens=acc.output_tokens, cost_usd=acc.cost_usd,
            latency_ms=acc.latency_ms, cached=acc.cached,
        )

    def _verdict_error(self, reason: str) -> Verdict:
        return Verdict(judge_id=self.judge_id, judge=self.label, family=self.family,
                       status="error", reason=reason)


def verdict_key_item_part(item: BenchmarkItem, evidence: str | None) -> bytes:
    """What a verdict key hashes of the item and its checks' evidence (every field the prompt
    uses), after the judge's id."""
    language = item.metadata.get("language") if isinstance(item.metadata, dict) else None
    return b"".join(b"\x00" + part.encode() for part in (
        item.prompt, item.response, item.jurisdiction or "", "\x1e".join(item.expected_signals),
        str(language), evidence or ""))
