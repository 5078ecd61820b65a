"""Splitting an answer into sentences and stripping its markdown (the audit's perturbations and the
simulated judge read answers the same way)."""

from __future__ import annotations

import re

__all__ = ["plain_prose", "sentences"]

_SENTENCE = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9\"'(])")
_MD_LINE = re.compile(r"^\s*(?:#{1,6} |[-*•] |\d+[.)] )", re.MULTILINE)
_BOLD = re.compile(r"\*\*([^*]+)\*\*")


def sentences(text: str) -> list[str]:
    """Split prose into sentences (a simple rule: end punctuation followed by a capital)."""
    flat = " ".join(line.strip() for line in text.splitlines() if line.strip())
    return [s.strip() for s in _SENTENCE.split(flat) if s.strip()]


def plain_prose(text: str) -> str:
    """The same text without markdown headings, bullets, numbering or bold."""
    lines = [_MD_LINE.sub("", line) for line in text.splitlines()]
    return _BOLD.sub(r"\1", "\n".join(lines))
