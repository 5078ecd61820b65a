"""LLM-assisted variants: paraphrase-level variant pairs written by an auditor LLM.

The auditor gets the seed's auditor prompt (``prompts/auditor``) for one base answer and one dimension
and returns ``{"variant_a", "variant_b", "changed"}``. The answer is validated as JSON with the retry
policy (temperature 0, then 0.2 and 0.4 with the retry instruction); after three failures that pair
is INCONCLUSIVE: its raw outputs are logged, an alert is emitted, and the pair is excluded and
documented in the report. The auditor only writes variants: the harness judges and computes
everything. ``fetch_prior_audit_results`` is offered to the auditor as a tool description so it can
read the previous baseline instead of inventing a trend.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from legal_judge.assets.catalogue import load_assets
from legal_judge.audit.calls import with_json_retries
from legal_judge.audit.design import AuditSettings, Design, TestPair
from legal_judge.audit.log import AuditLog
from legal_judge.audit.target import AuditTarget
from legal_judge.errors import ProviderError
from legal_judge.judge.parse import ParseError, extract_json, fence_for
from legal_judge.models import Message
from legal_judge.store import Store

__all__ = ["generate_variants", "parse_variants"]

logger = logging.getLogger("legal_judge.audit")

# The seed offers the auditor LLM a fetch_prior_audit_results tool so that it does not invent a
# trend. Here the auditor only writes variants; findings and drift are computed by code from the
# stored baseline (legal_judge.audit.history.fetch_prior_audit_results, `audit diff`), so no tool
# is offered.
_VARIANT_SCHEMA = {
    "type": "object",
    "properties": {"variant_a": {"type": "string"}, "variant_b": {"type": "string"},
                   "changed": {"type": "string"}},
    "required": ["variant_a", "variant_b", "changed"], "additionalProperties": False,
}


def parse_variants(text: str) -> tuple[str, str, str]:
    """Validate the auditor's answer: two non-empty variants and what changed."""
    data = extract_json(text)
    if not isinstance(data, dict):
        raise ParseError("the answer must be a JSON object")
    out = []
    for key in ("variant_a", "variant_b"):
        value = data.get(key)
        if not isinstance(value, str) or not value.strip():
            raise ParseError(f"'{key}' must be a non-empty string")
        out.append(value)
    return out[0], out[1], str(data.get("changed", ""))


async def _one(pair: TestPair, provider: Any, settings: AuditSettings, target: AuditTarget,
               description: str) -> dict[str, Any]:
    assets = load_assets()
    spec = target.describe()
    base = pair.b.response
    fence_open, fence_close = fence_for(base)
    prompt = assets.template("auditor").render(
        judge_prompt_template=settings.judge_prompt_template or spec["judge_prompt_template"],
        judge_input_schema=settings.judge_input_schema or spec["judge_input_schema"],
        judge_output_schema=settings.judge_output_schema or spec["judge_output_schema"],
        judge_scoring_rubric=settings.judge_scoring_rubric or spec["judge_scoring_rubric"],
        bias_dimensions=f"- {pair.dimension}: {description}", num_test_pairs=settings.pairs,
        base_answer=base, dimension=pair.dimension, fence_open=fence_open, fence_close=fence_close,
    )

    try:
        out = await with_json_retries(
            provider.complete, [Message(role="user", content=prompt)], parse_variants, assets=assets,
            provider=provider.spec.prefix, model=provider.spec.model, temperature=0.0, max_tokens=2000,
            json_schema=_VARIANT_SCHEMA, schema_name="variants", seed=None)
    except ProviderError as exc:
        return {"pair_id": pair.pair_id, "status": "error", "error": exc.message, "raw": []}
    if out.value is None:
        return {"pair_id": pair.pair_id, "status": "INCONCLUSIVE", "error": out.reason,
                "raw": out.raw}
    a, b, changed = out.value
    pair.a = pair.a.model_copy(update={"response": a})
    pair.b = pair.b.model_copy(update={"response": b})
    pair.meta["llm_changed"] = changed
    return {"pair_id": pair.pair_id, "status": "ok", "error": None, "raw": out.raw}


async def generate_variants(design: Design, settings: AuditSettings, *, store: Store, log: AuditLog,
                            audit_id: str, target: AuditTarget,
                            provider: Any = None) -> dict[str, Any]:
    """Replace the variants of text dimensions with auditor-written ones (position and demographic
    pairs keep their exact construction). Returns counts for the report's extensions.

    ``provider`` is the auditor model already built (the caller closes it); None builds one from
    ``settings.llm_variants`` and closes it here.
    """
    from legal_judge.providers.registry import get_provider

    assert settings.llm_variants is not None
    owned = provider is None
    provider = provider or get_provider(settings.llm_variants)
    kinds = {d.name: d.effective_kind for d in design.dimensions}
    described = {d.name: d.description for d in design.dimensions}
    pairs = [p for p in design.pairs if kinds[p.dimension] == "text"]
    sem = asyncio.Semaphore(settings.concurrency)

    async def guarded(p: TestPair) -> dict[str, Any]:
        async with sem:
            return await _one(p, provider, settings, target, described[p.dimension])

    try:
        results = list(await asyncio.gather(*(guarded(p) for p in pairs)))
    finally:
        close = getattr(provider, "aclose", None) if owned else None
        if close is not None:
            await close()
    by_id = {p.pair_id: p for p in pairs}
    failed = [r for r in results if r["status"] != "ok"]
    for r in failed:
        by_id[r["pair_id"]].meta["llm_error"] = r["error"]
    if failed:
        logger.warning("ALERT fairness-engineering: %d auditor outputs INCONCLUSIVE in %s",
                    len(failed), audit_id)
    log_entries: list[tuple[str, dict[str, Any]]] = [
        ("llm_variants", {"auditor": settings.llm_variants, "results": results,
                          "validator": {"ok": len(results) - len(failed), "failed": len(failed)}})]
    log.append_many(audit_id, log_entries)
    return {"auditor": settings.llm_variants, "requested": len(results),
            "ok": len(results) - len(failed), "inconclusive": len(failed)}
