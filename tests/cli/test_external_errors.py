"""Issue 33: an external service's error is one line and its fix; the payload with --verbose."""

from __future__ import annotations

import logging

import pytest

from legal_judge.errors import ConfigError, ProviderUnavailable, SyncError, said

PAGE = "<html>\n<head><title>502 Bad Gateway</title></head>\n<body>nginx</body>\n</html>"


def test_a_providers_page_is_one_line_and_the_whole_text_is_logged(
        caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO)
    exc = ProviderUnavailable(f"HTTP 502: {PAGE}", provider="openai", status=502)
    text = said(exc)
    assert text == "openai: HTTP 502: <html> ... (--verbose shows all)"
    assert "nginx" in caplog.text  # what --verbose prints


def test_a_long_langfuse_message_is_cut_to_one_line_and_keeps_the_fix() -> None:
    exc = SyncError("Langfuse answered HTTP 500 to prompt push: " + "x" * 400,
                    fix="run the command again later")
    first, fix = said(exc).split("\n")
    assert len(first) <= 230 and first.endswith("(--verbose shows all)")
    assert fix == "  fix: run the command again later"


def test_a_users_own_error_is_printed_whole() -> None:
    exc = ConfigError("line one\nline two", fix="edit the file")
    assert said(exc) == str(exc)
