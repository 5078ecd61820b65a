"""What every batch backend shares: the backend contract, limits, custom ids and request splitting.

A backend turns judge requests into one provider batch job and back:

* ``encode(custom_id, request)`` renders one request in the provider's wire form (one JSONL line);
* ``submit(lines, metadata=...)`` creates the batch and returns a :class:`BatchHandle` whose ``meta``
  holds what a later process needs to find the batch again (it is stored in the ``batches`` table);
* ``status(handle)`` polls the batch once (``ended`` is True once nothing will change any more);
* ``results(handle)`` returns one :class:`BatchLine` per request the provider reported on, in the
  provider's order (which is not the submission order);
* ``to_response(payload, request)`` turns a successful line's payload into the same
  :class:`~legal_judge.models.CompletionResponse` the online provider returns.

Custom ids are ``j<judge index>-i<item position>-<purpose letter><attempt>``: short and within
every provider's alphabet (Anthropic: ``[A-Za-z0-9_-]{1,64}``), and they map a result back to its
item, judge and retry attempt without any side table. An audit (``audit run --batch``) uses a call
slot (pair task and step, see :mod:`legal_judge.batch.audit`) in place of the item position.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any, Protocol

from legal_judge.errors import ConfigError
from legal_judge.models import CompletionRequest, CompletionResponse

__all__ = [
    "BatchBackend",
    "BatchHandle",
    "BatchLimits",
    "BatchLine",
    "BatchStatus",
    "CallTag",
    "custom_id",
    "line_digest",
    "parse_custom_id",
    "split_lines",
]

_PURPOSE_CODES = {"verdict": "v", "self_debias": "s", "audit-pairwise": "p"}
_PURPOSES = {v: k for k, v in _PURPOSE_CODES.items()}
_CUSTOM_ID = re.compile(r"^j(\d+)-i(\d+)-([a-z])(\d+)$")


@dataclass(frozen=True)
class BatchLimits:
    """A provider's per-batch limits."""

    max_requests: int
    max_bytes: int


@dataclass
class BatchHandle:
    """A submitted batch: the provider's id plus what is needed to find its results later."""

    id: str
    meta: dict[str, Any] = field(default_factory=dict)


@dataclass
class BatchStatus:
    """One poll of a batch. ``meta`` is merged into the stored row (status, counts, file ids)."""

    ended: bool
    provider_status: str
    meta: dict[str, Any] = field(default_factory=dict)


@dataclass
class BatchLine:
    """One request's outcome: ``payload`` when it succeeded, else ``error`` and ``retryable``."""

    custom_id: str
    payload: Any = None
    error: str | None = None
    retryable: bool = False


class BatchBackend(Protocol):
    """A provider batch API (see the module docstring)."""

    name: str
    limits: BatchLimits

    def encode(self, custom_id: str, request: CompletionRequest) -> bytes:
        """The request as one line of the provider's batch input."""
        ...

    async def submit(self, lines: list[bytes], *, metadata: dict[str, str]) -> BatchHandle:
        """Create one batch from encoded lines."""
        ...

    async def status(self, handle: BatchHandle) -> BatchStatus:
        """Poll the batch once."""
        ...

    async def results(self, handle: BatchHandle) -> list[BatchLine]:
        """Every line the provider reported (successes and failures) for an ended batch."""
        ...

    def to_response(self, payload: Any, request: CompletionRequest) -> CompletionResponse:
        """A successful line as the online provider's response."""
        ...

    async def aclose(self) -> None:
        """Release what the backend owns."""
        ...


@dataclass(frozen=True)
class CallTag:
    """Which item, purpose and attempt a provider call belongs to.

    ``position`` overrides the item's position in the custom id (an audit's call slot).
    """

    item_id: str
    purpose: str
    attempt: int
    position: int | None = None


def custom_id(judge_index: int, item_position: int, purpose: str, attempt: int) -> str:
    """The custom id of one judge request (see the module docstring)."""
    code = _PURPOSE_CODES.get(purpose)
    if code is None:
        raise ValueError(f"no custom-id code for purpose {purpose!r}")
    return f"j{judge_index}-i{item_position}-{code}{attempt}"


def line_digest(line: bytes) -> str:
    """Short sha256 of one encoded request line (stored per custom id with every batch)."""
    return hashlib.sha256(line).hexdigest()[:16]


def parse_custom_id(value: str) -> tuple[int, int, str, int]:
    """``(judge_index, item_position, purpose, attempt)`` of a custom id.

    Raises:
        ValueError: not a legal-judge custom id.
    """
    match = _CUSTOM_ID.match(value)
    if match is None or match.group(3) not in _PURPOSES:
        raise ValueError(f"not a legal-judge custom id: {value!r}")
    return int(match.group(1)), int(match.group(2)), _PURPOSES[match.group(3)], int(match.group(4))


def split_lines(lines: list[tuple[str, bytes]], limits: BatchLimits) -> Iterator[list[tuple[str, bytes]]]:
    """Greedy chunks of ``(custom_id, line)`` within the request-count and byte limits.

    Each line counts one extra byte for its newline, so a chunk written as JSONL fits the limit.

    Raises:
        ConfigError: one request alone is larger than a whole batch may be.
    """
    chunk: list[tuple[str, bytes]] = []
    size = 0
    for cid, line in lines:
        n = len(line) + 1
        if n > limits.max_bytes:
            raise ConfigError(
                f"request {cid} is {n:,} bytes, over the provider's batch limit of "
                f"{limits.max_bytes:,} bytes", code="batch-request-too-large",
                fix="lower max_tokens or shorten the answers, or run this judge online",
            )
        if chunk and (len(chunk) >= limits.max_requests or size + n > limits.max_bytes):
            yield chunk
            chunk, size = [], 0
        chunk.append((cid, line))
        size += n
    if chunk:
        yield chunk
