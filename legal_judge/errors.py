"""The legal-judge error tree.

Every error a user can see is a :class:`LegalJudgeError`; the CLI turns it into a message that
names the fix and an exit code (0 success, 1 a gate or check failed, 2 bad input or
configuration, 3 an external service failed after retries)::

    LegalJudgeError                    exit 2 unless a subclass says otherwise
    ├── ConfigError(code)              settings, ensemble config, rubric/template problems
    │   ├── InputError(problems)       a file with defects; every problem names file, line, field
    │   ├── TemplateError              missing variable (StrictUndefined) or sandbox violation
    │   ├── MissingKeyError(env_var)   an API key is not in the environment
    │   └── MissingDependency(extra)   an optional package is not installed
    ├── ProviderError(provider)        raised by provider adapters only, translated from SDK errors
    │   ├── AuthError                  401/403: not retried; names the key variable (exit 2)
    │   ├── RateLimitError(retry_after) 429: retried with backoff
    │   ├── ProviderUnavailable        5xx, timeouts, resets: retried with backoff (exit 3)
    │   └── BadRequestError            400/404/422: not retried (exit 2)
    ├── StoreError(code)               the SQLite store is unusable: full disk, damaged file,
    │   │                              locked, read-only, newer schema (names the file and the fix)
    │   └── StoreUnavailable           a PostgreSQL store's server is unreachable (exit 3: rerun)
    ├── SyncError                      Langfuse refused or was unreachable after retries (exit 3)
    │   └── SyncAuthError              401/403: Langfuse refused the keys (exit 2: fix the keys)
    ├── NotFoundError                  a run, audit or calibration id that is not in the store
    └── GateFailure                    a CI gate decided "no" (exit 1)
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

__all__ = [
    "AuthError",
    "BadRequestError",
    "ConfigError",
    "GateFailure",
    "InputError",
    "LegalJudgeError",
    "MissingDependency",
    "MissingKeyError",
    "NotFoundError",
    "Problem",
    "problem_lines",
    "said",
    "ProviderError",
    "ProviderUnavailable",
    "RateLimitError",
    "StoreError",
    "StoreUnavailable",
    "SyncAuthError",
    "SyncError",
    "TemplateError",
]


class LegalJudgeError(Exception):
    """Base of every error legal-judge raises on purpose."""

    exit_code: int = 2

    def __init__(self, message: str, *, fix: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.fix = fix

    def __str__(self) -> str:
        if self.fix:
            return f"{self.message}\n  fix: {self.fix}"
        return self.message


class ConfigError(LegalJudgeError):
    """A configuration or asset problem; ``code`` is stable for tests and docs."""

    def __init__(self, message: str, *, code: str = "config-invalid", fix: str | None = None) -> None:
        super().__init__(message, fix=fix)
        self.code = code


@dataclass(frozen=True)
class Problem:
    """One defect in an input file."""

    file: str
    line: int | None
    field: str | None
    message: str

    def __str__(self) -> str:
        where = self.file
        if self.line is not None:
            where += f":{self.line}"
        if self.field:
            where += f": field '{self.field}'"
        return f"{where}: {self.message}"


def _ranges(lines: list[int]) -> str:
    """``2-56, 60`` for lines 2..56 and 60."""
    out: list[str] = []
    start = prev = lines[0]
    for n in [*lines[1:], None]:
        if n is not None and n == prev + 1:
            prev = n
            continue
        out.append(str(start) if start == prev else f"{start}-{prev}")
        if n is not None:
            start = prev = n
    return ", ".join(out)


def problem_lines(problems: list[Problem]) -> list[str]:
    """One line per kind of problem: the same message on many rows is said once, with the rows.

    ``labels.csv: 55 rows: run_id missing (rows 2-56)``, not 55 lines of the same words.
    """
    groups: dict[tuple[str, str | None, str], list[Problem]] = {}
    for p in problems:
        groups.setdefault((p.file, p.field, p.message), []).append(p)
    out = []
    for (file, field, message), same in groups.items():
        lines = sorted({p.line for p in same if p.line is not None})
        if len(lines) < 2:
            out += [str(p) for p in same]
            continue
        named = "" if not field or message.startswith(field) else f"field '{field}': "
        out.append(f"{file}: {len(lines)} rows: {named}{message} (rows {_ranges(lines)})")
    return out


class InputError(ConfigError):
    """One or more defects in an input file; all of them are reported at once."""

    def __init__(self, problems: list[Problem], *, fix: str | None = None) -> None:
        self.problems = list(problems)
        n = len(self.problems)
        head = f"{n} problem{'s' if n != 1 else ''} found"
        said = problem_lines(self.problems)
        body = "\n".join(f"  {line}" for line in said[:200])
        more = f"\n  ... and {len(said) - 200} more" if len(said) > 200 else ""
        super().__init__(
            f"{head}:\n{body}{more}",
            code="input-invalid",
            fix=fix or "correct the lines listed above and run the command again",
        )


class TemplateError(ConfigError):
    """A template could not be rendered (missing variable, sandbox violation, syntax)."""

    def __init__(self, message: str, *, fix: str | None = None) -> None:
        super().__init__(message, code="template-invalid", fix=fix)


class MissingKeyError(ConfigError):
    """An API key or token is not set in the environment."""

    def __init__(self, env_var: str, *, provider: str) -> None:
        super().__init__(
            f"no API key for provider '{provider}'",
            code="missing-key",
            fix=f"set {env_var} in the environment (keys are read from the environment only)",
        )
        self.env_var = env_var


class MissingDependency(ConfigError):
    """An optional dependency is not installed."""

    def __init__(self, feature: str, *, package: str, extra: str) -> None:
        super().__init__(
            f"{feature} needs the package '{package}'",
            code="missing-dependency",
            fix=f"pip install 'legal-judge[{extra}]'",
        )


class ProviderError(LegalJudgeError):
    """A provider call failed; raised by provider adapters only."""

    exit_code = 3

    def __init__(
        self, message: str, *, provider: str, status: int | None = None, fix: str | None = None
    ) -> None:
        super().__init__(f"{provider}: {message}", fix=fix)
        self.provider = provider
        self.status = status


class AuthError(ProviderError):
    """The provider refused the credentials; never retried."""

    exit_code = 2


class RateLimitError(ProviderError):
    """HTTP 429; retried after ``retry_after`` seconds when the provider says so."""

    def __init__(
        self, message: str, *, provider: str, retry_after: float | None = None, status: int = 429
    ) -> None:
        super().__init__(message, provider=provider, status=status)
        self.retry_after = retry_after


class ProviderUnavailable(ProviderError):
    """5xx, timeout or connection failure; retried with backoff."""

    def __init__(
        self,
        message: str,
        *,
        provider: str,
        status: int | None = None,
        retry_after: float | None = None,
    ) -> None:
        super().__init__(message, provider=provider, status=status)
        self.retry_after = retry_after


class BadRequestError(ProviderError):
    """The provider rejected the request itself (400, 404, 422); not retried."""

    exit_code = 2


class StoreError(LegalJudgeError):
    """The local SQLite store cannot be used; the message names the file, ``fix`` the remedy.

    ``code`` is stable for tests and scripts: ``store-full``, ``store-damaged``, ``store-locked``,
    ``store-readonly``, ``store-io``, ``store-cannot-open``, ``store-newer``.
    """

    def __init__(self, message: str, *, code: str = "store", fix: str | None = None) -> None:
        super().__init__(message, fix=fix)
        self.code = code


class StoreUnavailable(StoreError):
    """A PostgreSQL store's server cannot be reached or went away; a rerun resumes (exit 3)."""

    exit_code = 3

    def __init__(self, message: str, *, fix: str | None = None) -> None:
        super().__init__(message, code="store-unavailable", fix=fix)


class SyncError(LegalJudgeError):
    """Langfuse could not take the data; the outbox keeps it for ``legal-judge sync``."""

    exit_code = 3


class SyncAuthError(SyncError):
    """Langfuse refused the keys (HTTP 401/403): a rerun changes nothing until the user fixes
    ``LANGFUSE_PUBLIC_KEY``/``LANGFUSE_SECRET_KEY`` (exit 2, as a provider's :class:`AuthError`)."""

    exit_code = 2


_LONGEST_SAID = 200


def said(exc: LegalJudgeError) -> str:
    """What the CLI prints for ``exc``: an external service's error in one line, then the fix.

    A provider's or Langfuse's message may hold a gateway's HTML page or a JSON dump; the user
    reads its first line (at most 200 characters) and the fix, and ``--verbose`` logs it whole.
    """
    if not isinstance(exc, ProviderError | SyncError):
        return str(exc)
    lines = exc.message.strip().splitlines() or [""]
    first = lines[0]
    if len(first) > _LONGEST_SAID or len(lines) > 1:
        logging.getLogger(__name__).info("the whole message: %s", exc.message)
        first = first[:_LONGEST_SAID].rstrip() + " ... (--verbose shows all)"
    return first + (f"\n  fix: {exc.fix}" if exc.fix else "")


class NotFoundError(LegalJudgeError):
    """A run, audit, calibration or prompt id that does not exist."""


class GateFailure(LegalJudgeError):
    """A gate (bias severity, regression, audit needed) said no."""

    exit_code = 1
