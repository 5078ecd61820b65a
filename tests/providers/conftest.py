"""The provider kit (``tests/provider_kit.py``): ``kit`` and the provider environment, cleaned."""

from __future__ import annotations

from provider_kit import kit, provider_env

__all__ = ["kit", "provider_env"]  # fixtures: pytest finds them in this conftest's namespace
