"""A failed Langfuse call in one line: the status, what was asked, the fix.

The SDK's exceptions print their whole payload (``ApiError: headers: {'date': ...},
status_code: 500, body: ...``); a user reads one line and the fix, and ``--verbose`` logs the
raw error for a bug report.
"""

from __future__ import annotations

import logging

from legal_judge.errors import SyncAuthError, SyncError

__all__ = ["KEYS_FIX", "failure_line", "keys_refused", "langfuse_failure"]

logger = logging.getLogger(__name__)

_LONGEST = 120  # a server's own message is kept when short; the raw payload goes to --verbose


def _status(exc: BaseException) -> int | None:
    code = getattr(exc, "status_code", None)
    return code if isinstance(code, int) else None


#: The fix of refused keys: the same words from every command (``doctor`` says it too).
KEYS_FIX = ("check LANGFUSE_PUBLIC_KEY and LANGFUSE_SECRET_KEY (and the project they name): copy "
            "them from the project's settings page (API keys) of this Langfuse host")


def keys_refused(exc: BaseException) -> bool:
    """Whether Langfuse refused the keys (HTTP 401/403): the user's to fix, not a rerun's."""
    return _status(exc) in (401, 403)


def _fix(status: int | None, connect: bool) -> str:
    if connect:
        return "check LANGFUSE_BASE_URL and that Langfuse is up, then run the command again"
    if status in (401, 403):
        return KEYS_FIX
    if status == 404:
        return "check LANGFUSE_BASE_URL and the name asked for"
    if status is not None and (status == 429 or status >= 500):
        return ("Langfuse failed on its side: run the command again later (nothing is lost; "
                "`legal-judge sync --status` shows what waits)")
    return "run again with --verbose for Langfuse's full answer"


def _detail(exc: BaseException) -> str:
    """The server's message when it is short and one line, else nothing."""
    body = getattr(exc, "body", None)
    text = body.get("message") if isinstance(body, dict) else body if isinstance(body, str) else None
    text = str(text).strip() if text else ""
    return text if text and "\n" not in text and len(text) <= _LONGEST else ""


def failure_line(exc: BaseException, asked: str) -> tuple[str, str]:
    """One line saying what failed and the fix; the raw error is logged at INFO (``--verbose``).

    Args:
        exc: What the SDK or the HTTP client raised.
        asked: What was asked of Langfuse, e.g. ``"prompt push"``.

    Returns:
        The message and the fix.
    """
    logger.info("Langfuse %s failed; raw error: %s: %s", asked, type(exc).__name__, exc)
    status = _status(exc)
    name = type(exc).__name__
    connect = status is None and any(w in name for w in ("Connect", "Timeout", "Network"))
    if status is not None:
        detail = _detail(exc)
        message = f"Langfuse answered HTTP {status} to {asked}" + (f": {detail}" if detail else "")
    elif connect or isinstance(exc, (ConnectionError, TimeoutError)):
        connect = True
        message = f"cannot reach Langfuse for {asked} ({name})"
    else:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
        message = f"{asked} failed: {name}" + (f": {first}" if first and len(first) <= _LONGEST
                                               else "")
    return message, _fix(status, connect)


def langfuse_failure(exc: BaseException, asked: str) -> SyncError:
    """:func:`failure_line` as the error a command raises: a SyncError (exit 3, a rerun
    resumes), or a SyncAuthError (exit 2) when Langfuse refused the keys."""
    message, fix = failure_line(exc, asked)
    return (SyncAuthError if keys_refused(exc) else SyncError)(message, fix=fix)
