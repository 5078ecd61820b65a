"""Judge backends behind one small contract.

A judge is named by one spec string, ``<prefix>:<model>[@<base_url>]`` (grammar and key variables
in :mod:`legal_judge.providers.base`)::

    provider = get_provider("anthropic:claude-sonnet-4-5")
    response = await provider.complete(CompletionRequest(model=provider.spec.model, messages=[...]))
    await provider.aclose()

Adapters translate SDK errors into :mod:`legal_judge.errors` at this boundary, retry transport
failures themselves (:mod:`~legal_judge.providers.retry`), negotiate structured output per
endpoint, and report usage, latency, retries and the structured-output mode used.
"""

from legal_judge.providers.base import (
    Provider,
    ProviderOptions,
    ProviderSpec,
    parse_spec,
)
from legal_judge.providers.families import family_of
from legal_judge.providers.pricing import cost_usd, load_prices
from legal_judge.providers.registry import (
    ProviderFactory,
    get_provider,
    known_prefixes,
    register_provider,
    unregister_provider,
)
from legal_judge.providers.retry import RetryDecision, RetryPolicy

__all__ = [
    "Provider",
    "ProviderFactory",
    "ProviderOptions",
    "ProviderSpec",
    "RetryDecision",
    "RetryPolicy",
    "cost_usd",
    "family_of",
    "get_provider",
    "known_prefixes",
    "load_prices",
    "parse_spec",
    "register_provider",
    "unregister_provider",
]
