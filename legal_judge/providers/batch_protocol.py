"""What a provider with a batch API exposes to :mod:`legal_judge.batch`.

A batch request must be the very request the online path would send, and a batch result must
become the very response the online path would return, so a batch verdict is parsed (and cached)
exactly like an online one. The adapters that have a batch API (``openai:``, ``anthropic:``)
implement this protocol; the batch backends use nothing else of them.
"""

from __future__ import annotations

from typing import Any, Protocol, runtime_checkable

from legal_judge.errors import ProviderError
from legal_judge.models import CompletionRequest, CompletionResponse

__all__ = ["BatchProtocol"]


@runtime_checkable
class BatchProtocol(Protocol):
    """The batch side of a provider: its SDK client, request bodies, responses and errors."""

    name: str

    @property
    def sdk_client(self) -> Any:
        """The provider's own SDK client (key, base URL, transport), shared with batch calls."""
        ...

    def batch_body(self, request: CompletionRequest) -> dict[str, Any]:
        """The request body the online call would send, in the provider's wire form."""
        ...

    def batch_response(self, payload: Any, request: CompletionRequest) -> CompletionResponse:
        """A successful batch result as the online call's response (latency 0: not measured).

        Raises:
            ProviderError: the payload holds no usable answer.
            ValueError: the payload is not the provider's response shape.
        """
        ...

    def translate_error(self, exc: Any) -> ProviderError:
        """An SDK exception as the :class:`~legal_judge.errors.ProviderError` online calls raise."""
        ...
