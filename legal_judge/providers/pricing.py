"""Token prices and the cost of a call.

The default table ships as ``legal_judge/data/prices.v1.yaml`` (USD per million input/output
tokens, per provider section, with an ``as_of`` date and a source note). A user file named by the
``LEGAL_JUDGE_PRICES`` environment variable has the same layout and is merged over the default:
per model, and per section for ``batch_discount`` and ``default``.

An unknown model, or a call whose token counts are unknown, has an unknown cost: ``None``, never
0. Local and simulated judges are priced at 0 explicitly by their sections' ``default`` entry.
"""

from __future__ import annotations

import functools
import os
import re
from datetime import date
from importlib import resources
from pathlib import Path
from typing import Any, Literal, NamedTuple

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from legal_judge.errors import ConfigError

__all__ = [
    "PRICES_ENV",
    "ModelPrice",
    "PriceMatch",
    "PriceTable",
    "ProviderPrices",
    "cost_usd",
    "load_prices",
    "price_for",
]

PRICES_ENV = "LEGAL_JUDGE_PRICES"
_DEFAULT_RESOURCE = "data/prices.v1.yaml"
_DATE_SUFFIX = re.compile(r"-(?:\d{4}-\d{2}-\d{2}|\d{8})$")


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class ModelPrice(_Strict):
    """USD per million tokens."""

    input: float = Field(ge=0)
    output: float = Field(ge=0)


class ProviderPrices(_Strict):
    """One provider section of the table."""

    batch_discount: float | None = Field(default=None, gt=0, le=1)
    """Price multiplier of the provider's batch API (0.5 = half price); None when unknown."""
    models: dict[str, ModelPrice] = Field(default_factory=dict)
    default: ModelPrice | None = None
    """Prices every model of the section (local and simulated judges cost 0)."""


class PriceTable(_Strict):
    """The whole price table."""

    version: Literal[1] = 1
    as_of: date
    currency: Literal["USD"] = "USD"
    unit: Literal["per_million_tokens"] = "per_million_tokens"
    source: str = ""
    providers: dict[str, ProviderPrices]


class PriceMatch(NamedTuple):
    """A model's price and the section it was found in."""

    price: ModelPrice
    section: str
    batch_discount: float | None


def load_prices(path: str | Path | None = None) -> PriceTable:
    """Load the default table, merged with a user file.

    Args:
        path: the user price file; defaults to ``$LEGAL_JUDGE_PRICES`` when set.

    Returns:
        The merged, validated table (cached until the user file changes).

    Raises:
        ConfigError: the user file is missing (``prices-not-found``) or invalid
            (``prices-invalid``).
    """
    return _load_cached(*_table_version(path))


def _table_version(path: str | Path | None) -> tuple[str | None, int | None]:
    """The user file and its mtime: what identifies the loaded table."""
    user = str(path) if path is not None else os.environ.get(PRICES_ENV) or None
    mtime = None
    if user is not None:
        try:
            mtime = Path(user).stat().st_mtime_ns
        except OSError as exc:
            raise ConfigError(
                f"price file {user} cannot be read: {exc.strerror}",
                code="prices-not-found",
                fix=f"point {PRICES_ENV} at an existing YAML file, or unset it",
            ) from exc
    return user, mtime


@functools.lru_cache(maxsize=8)
def _load_cached(user: str | None, mtime: int | None) -> PriceTable:
    del mtime  # part of the cache key only: an edited file is read again
    text = resources.files("legal_judge").joinpath(_DEFAULT_RESOURCE).read_text("utf-8")
    data = _read_yaml(text, _DEFAULT_RESOURCE)
    if user is not None:
        data = _merge(data, _read_yaml(Path(user).read_text("utf-8"), user))
    try:
        return PriceTable.model_validate(data)
    except ValidationError as exc:
        raise ConfigError(
            f"price table is invalid: {exc.errors()[0]['loc']}: {exc.errors()[0]['msg']}",
            code="prices-invalid",
            fix=f"correct {user or _DEFAULT_RESOURCE} (USD per million tokens, see the default file)",
        ) from exc


def _read_yaml(text: str, where: str) -> dict[str, Any]:
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise ConfigError(
            f"price file {where} is not valid YAML: {exc}",
            code="prices-invalid",
            fix="fix the YAML syntax",
        ) from exc
    if not isinstance(data, dict):
        raise ConfigError(
            f"price file {where} must be a mapping with a 'providers' section",
            code="prices-invalid",
            fix="copy the layout of legal_judge/data/prices.v1.yaml",
        )
    return data


def _merge(base: dict[str, Any], user: dict[str, Any]) -> dict[str, Any]:
    merged = {**base, **{k: v for k, v in user.items() if k != "providers"}}
    providers = {name: dict(section) for name, section in base.get("providers", {}).items()}
    for name, section in (user.get("providers") or {}).items():
        target = providers.setdefault(name, {})
        for key, value in (section or {}).items():
            if key == "models":
                target["models"] = {**target.get("models", {}), **(value or {})}
            else:
                target[key] = value
    merged["providers"] = providers
    return merged


def _name_candidates(model: str) -> list[str]:
    name = model.strip()
    lowered = name.lower().removeprefix("models/")
    return list(dict.fromkeys([name, lowered, _DATE_SUFFIX.sub("", lowered)]))


def _find(models: dict[str, ModelPrice], model: str) -> ModelPrice | None:
    by_lower = {k.lower(): v for k, v in models.items()}
    for candidate in _name_candidates(model):
        price = models.get(candidate) or by_lower.get(candidate)
        if price is not None:
            return price
    return None


def price_for(
    model: str, *, provider: str | None = None, table: PriceTable | None = None
) -> PriceMatch | None:
    """Find the price of a model.

    The provider's own section is searched first, then its ``default``, then every other
    section (an OpenAI model behind an OpenAI-compatible proxy costs what OpenAI charges).

    Args:
        model: the model id, e.g. ``gpt-4o-2024-08-06`` (a date suffix is ignored).
        provider: the judge spec prefix, e.g. ``together`` or ``local``.
        table: a table to search instead of :func:`load_prices`.

    Returns:
        The price, its section and the section's batch discount, or None when the model is not
        priced.
    """
    if table is None:
        # Every judge call prices itself: search the loaded table once per model and provider.
        return _cached_price(*_table_version(None), model, provider)
    return _search(table, model, provider)


@functools.lru_cache(maxsize=256)
def _cached_price(user: str | None, mtime: int | None, model: str,
                  provider: str | None) -> PriceMatch | None:
    return _search(_load_cached(user, mtime), model, provider)


def _search(table: PriceTable, model: str, provider: str | None) -> PriceMatch | None:
    section = table.providers.get(provider) if provider else None
    if section is not None:
        price = _find(section.models, model) or section.default
        if price is not None:
            return PriceMatch(price, provider or "", section.batch_discount)
    for name, other in table.providers.items():
        if name == provider:
            continue
        price = _find(other.models, model)
        if price is not None:
            return PriceMatch(price, name, other.batch_discount)
    return None


def cost_usd(
    model: str,
    input_tokens: int | None,
    output_tokens: int | None,
    *,
    provider: str | None = None,
    batch: bool = False,
    table: PriceTable | None = None,
) -> float | None:
    """USD cost of one call.

    Args:
        model: the model id.
        input_tokens: prompt tokens, or None when the provider did not say.
        output_tokens: completion tokens, or None when the provider did not say.
        provider: the judge spec prefix (``local`` and ``simulated`` cost 0).
        batch: apply the provider's batch discount (standard price when none is known).
        table: a table to use instead of :func:`load_prices`.

    Returns:
        The cost, or None when the model's price or the token counts are unknown.
    """
    if input_tokens is None or output_tokens is None:
        return None
    if input_tokens < 0 or output_tokens < 0:
        raise ValueError("token counts cannot be negative")
    found = price_for(model, provider=provider, table=table)
    if found is None:
        return None
    price = found.price
    cost = (input_tokens * price.input + output_tokens * price.output) / 1_000_000
    if batch and found.batch_discount is not None:
        cost *= found.batch_discount
    return round(cost, 12)
