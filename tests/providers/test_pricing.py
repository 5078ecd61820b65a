"""Price table and cost."""

from __future__ import annotations

import datetime as dt

import pytest

from legal_judge.errors import ConfigError
from legal_judge.providers.pricing import cost_usd, load_prices, price_for


def test_default_table_metadata_and_required_models():
    table = load_prices()
    assert table.as_of == dt.date(2025, 10, 15)
    assert table.currency == "USD" and table.source
    expected = {
        "openai": ["gpt-4o", "gpt-4o-mini", "gpt-4.1", "o3"],
        "anthropic": ["claude-sonnet-4-5", "claude-opus-4-1", "claude-haiku-4-5"],
        "gemini": ["gemini-2.5-pro", "gemini-2.5-flash"],
        "mistral": ["mistral-large-latest"],
        "cohere": ["command-r-plus"],
        "together": ["meta-llama/Meta-Llama-3.1-70B-Instruct-Turbo"],
    }
    for section, models in expected.items():
        assert set(models) <= set(table.providers[section].models), section
    assert table.providers["openai"].batch_discount == 0.5


def test_cost_known_model():
    # gpt-4o: $2.50 in / $10.00 out per million tokens
    assert cost_usd("gpt-4o", 1_000_000, 0) == pytest.approx(2.5)
    assert cost_usd("gpt-4o", 412, 58) == pytest.approx((412 * 2.5 + 58 * 10.0) / 1e6)
    assert cost_usd("gpt-4o", 1000, 1000, batch=True) == pytest.approx(0.0125 / 2)


def test_dated_and_prefixed_ids_resolve():
    assert cost_usd("gpt-4o-2024-08-06", 1_000_000, 0) == pytest.approx(2.5)
    assert cost_usd("claude-sonnet-4-5-20250929", 0, 1_000_000) == pytest.approx(15.0)
    assert cost_usd("models/gemini-2.5-pro", 1_000_000, 0) == pytest.approx(1.25)
    match = price_for("meta-llama/Meta-Llama-3.1-70B-Instruct-Turbo", provider="together")
    assert match is not None and match.section == "together" and match.price.input == 0.88


def test_unknown_is_none_never_zero():
    assert cost_usd("mystery-model-9000", 100, 100) is None
    assert cost_usd("gpt-4o", None, 100) is None
    assert cost_usd("gpt-4o", 100, None) is None
    assert cost_usd("llama3.1:70b", 100, 100, provider="openai-compatible") is None


def test_local_and_simulated_are_explicitly_free():
    assert cost_usd("smollm2", 5000, 500, provider="local") == 0.0
    assert cost_usd("fair", 5000, 500, provider="simulated") == 0.0
    assert cost_usd("smollm2", None, 500, provider="local") is None


def test_negative_tokens_rejected():
    with pytest.raises(ValueError):
        cost_usd("gpt-4o", -1, 0)


def test_user_price_file_is_merged(tmp_path, monkeypatch):
    user = tmp_path / "prices.yaml"
    user.write_text(
        "providers:\n"
        "  openai:\n"
        "    models:\n"
        "      gpt-4o: {input: 1.0, output: 2.0}\n"
        "  openai-compatible:\n"
        "    default: {input: 0, output: 0}\n"
        "  inhouse:\n"
        "    models:\n"
        "      our-judge-1: {input: 0.1, output: 0.2}\n",
        encoding="utf-8",
    )
    monkeypatch.setenv("LEGAL_JUDGE_PRICES", str(user))
    assert cost_usd("gpt-4o", 1_000_000, 1_000_000) == pytest.approx(3.0)
    assert cost_usd("gpt-4o-mini", 1_000_000, 0) == pytest.approx(0.15)  # default kept
    assert cost_usd("llama3.1:70b", 10, 10, provider="openai-compatible") == 0.0
    assert cost_usd("our-judge-1", 1_000_000, 0) == pytest.approx(0.1)
    # editing the file is picked up
    user.write_text(
        "providers:\n  openai:\n    models:\n      gpt-4o: {input: 4.0, output: 2.0}\n",
        encoding="utf-8",
    )
    import os

    os.utime(user, ns=(1, 1))
    assert cost_usd("gpt-4o", 1_000_000, 0) == pytest.approx(4.0)


def test_bad_user_price_files(tmp_path, monkeypatch):
    monkeypatch.setenv("LEGAL_JUDGE_PRICES", str(tmp_path / "missing.yaml"))
    with pytest.raises(ConfigError) as info:
        load_prices()
    assert info.value.code == "prices-not-found"

    bad = tmp_path / "bad.yaml"
    bad.write_text("providers:\n  openai:\n    models:\n      gpt-4o: {input: -1, output: 2}\n")
    monkeypatch.setenv("LEGAL_JUDGE_PRICES", str(bad))
    with pytest.raises(ConfigError) as info:
        load_prices()
    assert info.value.code == "prices-invalid"
