"""Redaction of privileged text before anything leaves the machine.

A :class:`Masker` replaces every match of its regexes and every client name (case-insensitive, whole
words) with ``[REDACTED]``. It is applied to everything sent to Langfuse (inputs, outputs,
rationales, score comments, metadata strings, dataset items); the local store keeps the originals.

Configuration comes from a YAML file named by ``LEGAL_JUDGE_MASK_FILE``::

    patterns:            # Python regexes
      - '\\b\\d{3}-\\d{2}-\\d{4}\\b'
    names:               # client names, matched as whole words, case-insensitive
      - Acme Holdings
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from legal_judge.errors import ConfigError
from legal_judge.sync.settings import MASK_ENV, mask_file

__all__ = ["REDACTED", "Masker", "load_masker"]

REDACTED = "[REDACTED]"


@dataclass(frozen=True)
class Masker:
    """Regexes and client names to redact; an empty masker changes nothing."""

    patterns: tuple[str, ...] = ()
    names: tuple[str, ...] = ()
    _compiled: tuple[re.Pattern[str], ...] = field(default=(), init=False, repr=False)

    def __post_init__(self) -> None:
        compiled = [re.compile(p) for p in self.patterns]
        # longest names first, so "Acme Holdings Ltd" wins over "Acme Holdings"
        for name in sorted({n.strip() for n in self.names if n.strip()}, key=len, reverse=True):
            compiled.append(re.compile(rf"(?<!\w){re.escape(name)}(?!\w)", re.IGNORECASE))
        object.__setattr__(self, "_compiled", tuple(compiled))

    def __call__(self, text: str) -> str:
        """Redact one string."""
        for rx in self._compiled:
            text = rx.sub(REDACTED, text)
        return text

    def deep(self, value: Any) -> Any:
        """Redact every string inside a JSON-like value (dict keys included)."""
        if not self._compiled:
            return value
        if isinstance(value, str):
            return self(value)
        if isinstance(value, dict):
            return {self.deep(k) if isinstance(k, str) else k: self.deep(v)
                    for k, v in value.items()}
        if isinstance(value, list | tuple):
            return [self.deep(v) for v in value]
        return value


def load_masker(path: Path | str | None = None) -> Masker:
    """The masker from ``path`` or ``$LEGAL_JUDGE_MASK_FILE`` (no file: a masker that does nothing).

    Raises:
        ConfigError: the file is missing, not YAML, or has an invalid regex.
    """
    path = path or mask_file()
    if not path:
        return Masker()
    try:
        data = yaml.safe_load(Path(path).read_text(encoding="utf-8")) or {}
    except (OSError, yaml.YAMLError) as exc:
        raise ConfigError(f"cannot read the mask file {path}: {exc}", code="mask-invalid",
                          fix=f"point {MASK_ENV} at a YAML file with 'patterns:' and 'names:'") from None
    if not isinstance(data, dict) or set(data) - {"patterns", "names"}:
        raise ConfigError(f"mask file {path} must be a mapping with 'patterns' and 'names' only",
                          code="mask-invalid", fix="see `legal_judge.sync.mask` for the format")
    patterns = [str(p) for p in data.get("patterns") or []]
    for p in patterns:
        try:
            re.compile(p)
        except re.error as exc:
            raise ConfigError(f"mask file {path}: invalid regex {p!r}: {exc}", code="mask-invalid",
                              fix="fix or quote the regex (single quotes in YAML)") from None
    return Masker(patterns=tuple(patterns), names=tuple(str(n) for n in data.get("names") or []))
