"""Anthropic, through the official ``anthropic`` SDK (key: ``ANTHROPIC_API_KEY``).

* System messages go to the ``system`` parameter (joined by blank lines); the rest are sent in
  order.
* Structured output is forced tool use: one tool named ``request.schema_name`` whose
  ``input_schema`` is the schema, ``tool_choice={"type": "tool", "name": ...}``; the tool input
  comes back as JSON text with ``structured_mode="tool_use"``.
* ``stop_reason="refusal"`` fills ``CompletionResponse.refusal``; ``max_tokens`` maps to
  ``finish_reason="length"``.
* The SDK no longer exposes ``temperature``; it is sent in the request body, and when the API
  rejects it for a model the provider stops sending it for that model (logged once).
* This SDK only accepts ``httpx2`` clients. An ``httpx.AsyncClient`` given by the caller (tests
  over ``httpx.MockTransport``, a shared client in the runner) is bridged by
  :class:`LegacyHttpxTransport`.
"""

from __future__ import annotations

import json
import logging
import time
from typing import Any

import anthropic
import httpx
import httpx2
from anthropic.types import Message

from legal_judge.errors import BadRequestError, ProviderError
from legal_judge.models import CompletionRequest, CompletionResponse, Usage
from legal_judge.providers import base, sdk
from legal_judge.providers.families import family_of
from legal_judge.providers.registry import register_provider
from legal_judge.providers.retry import RetryPolicy

__all__ = ["KEY_ENV", "AnthropicProvider", "LegacyHttpxTransport"]

logger = logging.getLogger(__name__)

KEY_ENV = "ANTHROPIC_API_KEY"
_NO_TEMPERATURE: set[str] = set()
# Hop-by-hop and encoding headers describe the legacy response's wire form, not its decoded body.
_DROP_HEADERS = frozenset({"content-encoding", "content-length", "transfer-encoding"})


class LegacyHttpxTransport(httpx2.AsyncBaseTransport):
    """Sends ``httpx2`` requests through an ``httpx.AsyncClient`` (whose owner closes it)."""

    def __init__(self, client: httpx.AsyncClient) -> None:
        self._client = client

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        """Forward one request and convert the response back to ``httpx2``."""
        body = await request.aread()
        legacy = self._client.build_request(
            request.method,
            str(request.url),
            headers=list(request.headers.multi_items()),
            content=body,
            extensions={k: v for k, v in request.extensions.items() if k == "timeout"},
        )
        try:
            response = await self._client.send(legacy)
            content = await response.aread()
            await response.aclose()
        except httpx.TimeoutException as exc:
            raise httpx2.ReadTimeout(str(exc), request=request) from exc
        except httpx.TransportError as exc:
            raise httpx2.ConnectError(str(exc), request=request) from exc
        headers = [(k, v) for k, v in response.headers.multi_items() if k not in _DROP_HEADERS]
        return httpx2.Response(
            response.status_code, headers=headers, content=content, request=request
        )


class AnthropicProvider:
    """A judge served by Anthropic's Messages API."""

    def __init__(
        self,
        spec: base.ProviderSpec,
        options: base.ProviderOptions | None = None,
        *,
        http_client: httpx.AsyncClient | httpx2.AsyncClient | None = None,
        retry: RetryPolicy | None = None,
    ) -> None:
        options = options or base.ProviderOptions()
        self.spec = spec
        self.name = f"{spec.prefix}:{spec.model}"
        self.family = options.family or family_of(spec.model)
        self.key_env = options.api_key_env or KEY_ENV
        self.base_url = options.base_url or spec.base_url
        #: The URL named in a connection failure and by `doctor --ping`.
        self.endpoint = self.base_url or "https://api.anthropic.com"
        self.timeout_s = options.timeout_s
        api_key = base.read_key(self.key_env, provider=self.name)
        self.gate = base.CallGate(options, retry=retry)
        self._secret = api_key
        self._owns_client = http_client is None
        # A bridge wraps the caller's client; closing the bridge does not close that client.
        self._bridge: httpx2.AsyncClient | None = None
        sdk_http: httpx2.AsyncClient | None = None
        if isinstance(http_client, httpx2.AsyncClient):
            sdk_http = http_client
        elif http_client is not None:
            transport = LegacyHttpxTransport(http_client)
            self._bridge = sdk_http = httpx2.AsyncClient(transport=transport, timeout=None)
        # The URL is checked now, as the SDK client would have, so a bad one is still reported
        # before the run starts.
        if self.base_url is not None:
            httpx2.URL(self.base_url)
        self._sdk = sdk.LazySDK(anthropic.AsyncAnthropic, api_key=api_key,
                                 base_url=self.base_url, timeout_s=self.timeout_s,
                                 http_client=sdk_http)

    def __repr__(self) -> str:
        return f"AnthropicProvider({self.spec.raw!r}, family={self.family!r})"

    async def complete(self, request: CompletionRequest) -> CompletionResponse:
        """Run one Messages API call with limits and transport retries."""
        start = time.perf_counter()
        message, retries = await self.gate.run(lambda: self._call(request))
        return self._to_response(message, request, retries, base.elapsed_ms(start))

    async def aclose(self) -> None:
        """Close the SDK client (or only the bridge, when the caller owns the HTTP client)."""
        if self._owns_client:
            await self._sdk.close()
        elif self._bridge is not None:
            await self._bridge.aclose()

    async def _call(self, request: CompletionRequest) -> Message:
        send_temperature = request.model not in _NO_TEMPERATURE
        try:
            return await self._create(request, send_temperature=send_temperature)
        except ProviderError as exc:
            if not (send_temperature and _rejects_temperature(exc)):
                raise
        _NO_TEMPERATURE.add(request.model)
        logger.warning("%s does not accept 'temperature'; sending requests without it", self.name)
        return await self._create(request, send_temperature=False)

    async def _create(self, request: CompletionRequest, *, send_temperature: bool) -> Message:
        kwargs = _request_kwargs(request)
        if send_temperature:
            kwargs["extra_body"] = {"temperature": request.temperature}
        try:
            return await self._sdk.client.messages.create(**kwargs)
        except anthropic.APIError as exc:
            raise self.translate_error(exc) from exc
        except Exception as exc:
            sdk.raise_transport_failure(exc, provider=self.name, timeout_s=self.timeout_s,
                                         endpoint=self.endpoint)
            raise

    # The batch protocol (legal_judge.providers.batch_protocol).

    @property
    def sdk_client(self) -> anthropic.AsyncAnthropic:
        """The SDK client online calls use (batch jobs share its key, base URL and transport)."""
        return self._sdk.client

    def batch_body(self, request: CompletionRequest) -> dict[str, Any]:
        """The Messages params of ``request``, with ``temperature`` unless the model refused it."""
        params = _request_kwargs(request)
        if request.model not in _NO_TEMPERATURE:
            params["temperature"] = request.temperature
        return params

    def batch_response(self, payload: Any, request: CompletionRequest) -> CompletionResponse:
        """A succeeded batch result's message as the online response."""
        message = payload if isinstance(payload, Message) else Message.model_validate(payload)
        return self._to_response(message, request, 0, 0.0)

    def translate_error(self, exc: anthropic.APIError) -> ProviderError:
        """An SDK error as the ProviderError an online call raises (key redacted)."""
        return sdk.error_for_sdk(exc, anthropic, provider=self.name, timeout_s=self.timeout_s,
                                  secret=self._secret, key_env=self.key_env,
                                  status_message=lambda e: e.api_message or e.message,
                                  endpoint=self.endpoint)

    def _to_response(
        self, message: Message, request: CompletionRequest, retries: int, latency_ms: float
    ) -> CompletionResponse:
        text_parts = [block.text for block in message.content if block.type == "text"]
        tool_input = next(
            (
                block.input
                for block in message.content
                if block.type == "tool_use" and block.name == request.schema_name
            ),
            None,
        )
        text = json.dumps(tool_input) if tool_input is not None else "".join(text_parts)
        refusal = None
        if message.stop_reason == "refusal":
            refusal = "".join(text_parts) or "the model declined to answer (stop_reason=refusal)"
        usage = message.usage
        return CompletionResponse(
            text=text,
            model=message.model or request.model,
            usage=Usage(input_tokens=_input_tokens(usage), output_tokens=usage.output_tokens),
            finish_reason=base.normalize_finish_reason(message.stop_reason),
            refusal=refusal,
            latency_ms=latency_ms,
            retries=retries,
            structured_mode="tool_use" if request.json_schema is not None else None,
        )


def _request_kwargs(request: CompletionRequest) -> dict[str, Any]:
    system = "\n\n".join(m.content for m in request.messages if m.role == "system")
    kwargs: dict[str, Any] = {
        "model": request.model,
        "max_tokens": request.max_tokens,
        "messages": [
            {"role": m.role, "content": m.content} for m in request.messages if m.role != "system"
        ],
    }
    if system:
        kwargs["system"] = system
    if request.json_schema is not None:
        kwargs["tools"] = [
            {
                "name": request.schema_name,
                "description": "Record the verdict. Call this tool exactly once.",
                "input_schema": request.json_schema,
            }
        ]
        kwargs["tool_choice"] = {"type": "tool", "name": request.schema_name}
    return kwargs


def _rejects_temperature(error: ProviderError) -> bool:
    return isinstance(error, BadRequestError) and "temperature" in error.message.lower()


def _input_tokens(usage: Any) -> int | None:
    # Prompt-cache reads and writes are input tokens too (billed at other rates we do not model).
    parts = [
        usage.input_tokens,
        getattr(usage, "cache_creation_input_tokens", None),
        getattr(usage, "cache_read_input_tokens", None),
    ]
    known = [p for p in parts if p is not None]
    return sum(known) if known else None


def _factory(
    spec: base.ProviderSpec, options: base.ProviderOptions, http_client: httpx.AsyncClient | None
) -> AnthropicProvider:
    return AnthropicProvider(spec, options, http_client=http_client)


register_provider("anthropic", _factory)
