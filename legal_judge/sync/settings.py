"""The one reader of the sync settings in the environment (never imports ``langfuse``).

Langfuse is reached with the SDK's own variables: ``LANGFUSE_PUBLIC_KEY``, ``LANGFUSE_SECRET_KEY``
and ``LANGFUSE_BASE_URL`` (``LANGFUSE_HOST``, the SDK's older name, is accepted for the URL), and
``LANGFUSE_TIMEOUT`` seconds per request (default 5). ``LEGAL_JUDGE_JUDGE_PROMPT`` names the judge
prompt in Langfuse (default ``llm-judge-v2``); ``LEGAL_JUDGE_MASK_FILE`` names the redaction file
(:mod:`legal_judge.sync.mask`). Every other module asks here.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass

from legal_judge.errors import ConfigError

__all__ = [
    "DEFAULT_JUDGE_PROMPT",
    "LANGFUSE_VARIABLES",
    "MASK_ENV",
    "LangfuseSettings",
    "configured",
    "judge_prompt_name",
    "mask_file",
    "missing_variables",
    "require_settings",
    "set_variables",
    "settings_from_env",
]

#: The three variables Langfuse needs (``LANGFUSE_HOST`` may stand in for the URL).
LANGFUSE_VARIABLES = ("LANGFUSE_PUBLIC_KEY", "LANGFUSE_SECRET_KEY", "LANGFUSE_BASE_URL")
_HOST = "LANGFUSE_HOST"
MASK_ENV = "LEGAL_JUDGE_MASK_FILE"
DEFAULT_JUDGE_PROMPT = "llm-judge-v2"


@dataclass(frozen=True)
class LangfuseSettings:
    """Where and how to reach Langfuse."""

    public_key: str
    secret_key: str
    base_url: str
    timeout_s: float = 5.0


def _base_url() -> str | None:
    return os.environ.get("LANGFUSE_BASE_URL") or os.environ.get(_HOST)


def configured() -> bool:
    """True when the keys and the URL are set (``LANGFUSE_BASE_URL`` or ``LANGFUSE_HOST``)."""
    return bool(os.environ.get("LANGFUSE_PUBLIC_KEY") and os.environ.get("LANGFUSE_SECRET_KEY")
                and _base_url())


def _timeout_s() -> float:
    raw = os.environ.get("LANGFUSE_TIMEOUT", "").strip()
    if not raw:
        return 5.0
    try:
        value = float(raw)
    except ValueError:
        value = math.nan
    if not (math.isfinite(value) and value > 0):
        raise ConfigError(f"LANGFUSE_TIMEOUT={raw!r} is not a number of seconds",
                          code="langfuse-timeout-invalid",
                          fix="set LANGFUSE_TIMEOUT to a positive number of seconds "
                              "(default 5), or unset it")
    return value


def settings_from_env() -> LangfuseSettings | None:
    """Settings from the SDK's environment variables, or None when any of the three is missing.

    Raises:
        ConfigError: ``LANGFUSE_TIMEOUT`` is set but is no positive number of seconds.
    """
    pk, sk, url = os.environ.get("LANGFUSE_PUBLIC_KEY"), os.environ.get("LANGFUSE_SECRET_KEY"), _base_url()
    if not (pk and sk and url):
        return None
    return LangfuseSettings(pk, sk, url.rstrip("/"), _timeout_s())


def require_settings() -> LangfuseSettings:
    """The settings, or a ConfigError that names the missing variables (or the bad timeout)."""
    s = settings_from_env()
    if s is None:
        if set_variables():  # partly set: name what is missing, as `doctor` does
            missing = ", ".join(missing_variables())
            raise ConfigError(f"Langfuse is partly configured: {missing} missing",
                              code="langfuse-unconfigured",
                              fix=f"set {missing} (or unset the other LANGFUSE_* variables)")
        raise ConfigError("Langfuse is not configured", code="langfuse-unconfigured",
                          fix="set LANGFUSE_PUBLIC_KEY, LANGFUSE_SECRET_KEY and LANGFUSE_BASE_URL")
    return s


def set_variables() -> list[str]:
    """The Langfuse variables that are set (of the three, then ``LANGFUSE_HOST``)."""
    return [n for n in (*LANGFUSE_VARIABLES, _HOST) if os.environ.get(n)]


def missing_variables() -> list[str]:
    """The Langfuse variables still needed (the URL counts as set when ``LANGFUSE_HOST`` is)."""
    return [n for n in LANGFUSE_VARIABLES if not os.environ.get(n)
            and not (n == "LANGFUSE_BASE_URL" and os.environ.get(_HOST))]


def judge_prompt_name() -> str:
    """The Langfuse name of the judge system prompt."""
    return os.environ.get("LEGAL_JUDGE_JUDGE_PROMPT") or DEFAULT_JUDGE_PROMPT


def mask_file() -> str | None:
    """The redaction file named by ``LEGAL_JUDGE_MASK_FILE`` (None: nothing is masked)."""
    return os.environ.get(MASK_ENV) or None
