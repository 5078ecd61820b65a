"""The provider registry: spec prefix -> factory.

Built-in adapters are imported lazily on first use; importing an adapter module registers its
prefixes with :func:`register_provider`. Anything else (the simulator, a third-party backend,
a test double) registers the same way::

    register_provider("simulated", lambda spec, options, http_client: SimulatedProvider(spec))
"""

from __future__ import annotations

import difflib
import importlib
from collections.abc import Callable

import httpx

from legal_judge.errors import ConfigError
from legal_judge.providers.base import Provider, ProviderOptions, ProviderSpec, parse_spec

__all__ = [
    "ProviderFactory",
    "get_provider",
    "known_prefixes",
    "register_provider",
    "unregister_provider",
]

# http_client is an httpx.AsyncClient (an httpx2.AsyncClient works too) or None.
ProviderFactory = Callable[[ProviderSpec, ProviderOptions, "httpx.AsyncClient | None"], Provider]

_FACTORIES: dict[str, ProviderFactory] = {}

# Modules that register these prefixes when imported.
_LAZY_MODULES: dict[str, str] = {
    "openai": "legal_judge.providers.openai",
    "gemini": "legal_judge.providers.openai",
    "mistral": "legal_judge.providers.openai",
    "together": "legal_judge.providers.openai",
    "groq": "legal_judge.providers.openai",
    "openai-compatible": "legal_judge.providers.openai",
    "anthropic": "legal_judge.providers.anthropic",
    "local": "legal_judge.providers.local",
    "simulated": "legal_judge.providers.simulated",
}


def register_provider(prefix: str, factory: ProviderFactory) -> None:
    """Register (or replace) the factory for a spec prefix.

    Args:
        prefix: the part of the spec before the first ``:``, lower case.
        factory: called as ``factory(spec, options, http_client)``; must return a Provider.
    """
    _FACTORIES[prefix.lower()] = factory


def unregister_provider(prefix: str) -> None:
    """Remove a registered factory (tests use it to undo a registration)."""
    _FACTORIES.pop(prefix.lower(), None)


def known_prefixes() -> list[str]:
    """Every prefix that is registered or can be loaded, sorted."""
    return sorted(set(_FACTORIES) | set(_LAZY_MODULES))


def _factory_for(prefix: str) -> ProviderFactory:
    module = _LAZY_MODULES.get(prefix)
    if prefix not in _FACTORIES and module is not None:
        try:
            importlib.import_module(module)
        except ModuleNotFoundError as exc:
            if exc.name != module:  # the adapter exists but one of its imports is missing
                raise
    factory = _FACTORIES.get(prefix)
    if factory is None:
        close = difflib.get_close_matches(prefix, known_prefixes(), n=1)
        raise ConfigError(
            f"unknown provider '{prefix}'" + (f" (did you mean '{close[0]}'?)" if close else ""),
            code="provider-unknown",
            fix="use one of: " + ", ".join(known_prefixes()),
        )
    return factory


def get_provider(
    spec: str,
    *,
    options: ProviderOptions | None = None,
    http_client: httpx.AsyncClient | None = None,
) -> Provider:
    """Create the provider a judge spec names.

    Args:
        spec: ``<prefix>:<model>[@<base_url>]``, see :mod:`legal_judge.providers.base`.
        options: transport settings; defaults apply when None.
        http_client: an HTTP client for the SDK to use (tests pass one over
            ``httpx.MockTransport``); the caller keeps ownership and closes it.

    Returns:
        A ready provider. Keys are checked here, before any call is made.

    Raises:
        ConfigError: bad spec (``provider-spec-invalid``) or unknown prefix
            (``provider-unknown``).
        MissingKeyError: the provider's key variable is not set.
        MissingDependency: an optional package the provider needs is not installed.
    """
    parsed = parse_spec(spec)
    return _factory_for(parsed.prefix)(parsed, options or ProviderOptions(), http_client)
