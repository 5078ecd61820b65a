"""OpenAI and every OpenAI-compatible endpoint, through the official ``openai`` SDK.

========================  ================================================  ==========================
prefix                    base URL                                          key variable
========================  ================================================  ==========================
``openai``                https://api.openai.com/v1                         OPENAI_API_KEY
``gemini``                https://generativelanguage.googleapis.com/v1beta/openai/  GEMINI_API_KEY
``mistral``               https://api.mistral.ai/v1                         MISTRAL_API_KEY
``together``              https://api.together.xyz/v1                       TOGETHER_API_KEY
``groq``                  https://api.groq.com/openai/v1                    GROQ_API_KEY
``openai-compatible``     the spec's ``@url`` (required)                    OPENAI_COMPATIBLE_API_KEY,
                                                                            optional
========================  ================================================  ==========================

``openai-compatible`` (Ollama, vLLM, llama.cpp servers) never inherits ``OPENAI_API_KEY``: a
local server must not receive the OpenAI key. ``ProviderOptions.base_url`` / ``api_key_env``
override the table. The base URL is always passed explicitly, so ``OPENAI_BASE_URL`` in the
environment does not silently redirect a judge.

Structured output is negotiated per endpoint (see DESIGN.md): ``json_schema`` (strict off),
then ``json_object`` with the schema attached (llama-cpp-python's server constrains decoding with
it), then plain ``json_object``, then no ``response_format``. A step is abandoned when the server
rejects the format (400/422/500 whose message mentions it); what an endpoint accepts is remembered
per (base URL, model) for the life of the process and reported in ``structured_mode``.

A call with a schema asks for token log-probabilities (``providers.logprobs``).

On ``openai:`` o-series and gpt-5 reasoning models, which only accept the default temperature,
``temperature`` is not sent; every other model gets the request's temperature.

A call goes through the SDK's ``post("/chat/completions", body=...)`` with the body this module
builds, and reads the JSON reply itself: the SDK's auth, headers, timeouts and error mapping stay,
but not its typed-parameter walk (``chat.completions.create`` transforms every message against a
union of six TypedDicts and every node of the verdict schema) nor its model construction of the
reply, which together cost more CPU per call than everything else a judged call does. The body on
the wire is the one ``create`` sends (a contract test compares them).
"""

from __future__ import annotations

import json
import logging
import re
import time
from dataclasses import dataclass
from typing import Any

import httpx
import openai
from openai.types.chat import ChatCompletion

from legal_judge.errors import (
    BadRequestError,
    ConfigError,
    MissingKeyError,
    ProviderError,
    ProviderUnavailable,
)
from legal_judge.models import CompletionRequest, CompletionResponse, Usage
from legal_judge.providers import base, sdk
from legal_judge.providers import logprobs as token_logprobs
from legal_judge.providers.families import family_of, normalize_model_name
from legal_judge.providers.registry import register_provider
from legal_judge.providers.retry import RetryPolicy

__all__ = [
    "ENDPOINTS",
    "STRUCTURED_MODES",
    "Endpoint",
    "OpenAIProvider",
    "forget_negotiated_modes",
    "negotiated_mode",
]

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class Endpoint:
    """Where an OpenAI-compatible service lives and which variable holds its key."""

    base_url: str | None
    key_env: str
    key_required: bool = True


ENDPOINTS: dict[str, Endpoint] = {
    "openai": Endpoint("https://api.openai.com/v1", "OPENAI_API_KEY"),
    "gemini": Endpoint(
        "https://generativelanguage.googleapis.com/v1beta/openai/", "GEMINI_API_KEY"
    ),
    "mistral": Endpoint("https://api.mistral.ai/v1", "MISTRAL_API_KEY"),
    "together": Endpoint("https://api.together.xyz/v1", "TOGETHER_API_KEY"),
    "groq": Endpoint("https://api.groq.com/openai/v1", "GROQ_API_KEY"),
    "openai-compatible": Endpoint(None, "OPENAI_COMPATIBLE_API_KEY", key_required=False),
}

# Sent when a local server needs no key; the SDK insists on a non-empty one.
NO_KEY = "not-needed"

STRUCTURED_MODES: tuple[str, ...] = ("json_schema", "json_object+schema", "json_object", "none")
_NEGOTIATED: dict[tuple[str, str], str] = {}
_FORMAT_REJECTION = ("response_format", "response format", "json_schema", "json_object")
_REASONING_MODEL = re.compile(r"^(?:o[1-9]|gpt-5)")


def negotiated_mode(base_url: str, model: str) -> str | None:
    """The structured-output mode remembered for an endpoint and model, if any."""
    return _NEGOTIATED.get((base_url, model))


def forget_negotiated_modes() -> None:
    """Forget every negotiated mode (tests, or after reconfiguring a server)."""
    _NEGOTIATED.clear()
    token_logprobs.forget_refusals()


def _response_format(mode: str, request: CompletionRequest) -> dict[str, Any] | None:
    schema = request.json_schema
    if mode == "json_schema":
        return {
            "type": "json_schema",
            "json_schema": {"name": request.schema_name, "schema": schema, "strict": False},
        }
    if mode == "json_object+schema":
        return {"type": "json_object", "schema": schema}
    if mode == "json_object":
        return {"type": "json_object"}
    return None


def _rejects_format(error: ProviderError) -> bool:
    if not isinstance(error, BadRequestError | ProviderUnavailable):
        return False
    if error.status not in (400, 422, 500):
        return False
    text = error.message.lower()
    return any(marker in text for marker in _FORMAT_REJECTION)


def _status_message(exc: openai.APIStatusError) -> str:
    body = exc.body
    if isinstance(body, dict):
        inner = body.get("error", body)
        if isinstance(inner, dict) and isinstance(inner.get("message"), str):
            return str(inner["message"])
        if isinstance(inner, str):
            return inner
        if isinstance(body.get("detail"), str):
            return str(body["detail"])
    return exc.message


def _not_openai(client: openai.AsyncOpenAI) -> None:
    # The SDK reads OPENAI_ORG_ID / OPENAI_PROJECT_ID; they are OpenAI's business only.
    client.organization = None
    client.project = None


class OpenAIProvider:
    """A judge served by an OpenAI-compatible chat-completions endpoint."""

    def __init__(
        self,
        spec: base.ProviderSpec,
        options: base.ProviderOptions | None = None,
        *,
        http_client: httpx.AsyncClient | None = None,
        retry: RetryPolicy | None = None,
    ) -> None:
        options = options or base.ProviderOptions()
        endpoint = ENDPOINTS.get(spec.prefix, ENDPOINTS["openai-compatible"])
        self.spec = spec
        self.name = f"{spec.prefix}:{spec.model}"
        self.family = options.family or family_of(spec.model)
        self.base_url = _resolve_base_url(spec, options, endpoint)
        self.key_env = options.api_key_env or endpoint.key_env
        #: The URL named in a connection failure and by `doctor --ping`.
        self.endpoint = self.base_url
        self.timeout_s = options.timeout_s
        self.logprobs = options.logprobs
        required = endpoint.key_required or options.api_key_env is not None
        api_key = self._read_key(required)
        self.gate = base.CallGate(options, retry=retry)
        self._secret = api_key if api_key != NO_KEY else None
        self._owns_client = http_client is None
        # The URL is checked now; the client is built on the first call.
        httpx.URL(self.base_url)
        # The SDK's http_client is typed as httpx2 only, but it accepts httpx.AsyncClient at
        # runtime (tested).
        self._sdk = sdk.LazySDK(openai.AsyncOpenAI, api_key=api_key, base_url=self.base_url,
                                 timeout_s=self.timeout_s, http_client=http_client,
                                 prepare=None if spec.prefix == "openai" else _not_openai)

    def __repr__(self) -> str:
        return f"OpenAIProvider({self.spec.raw!r}, family={self.family!r})"

    def _read_key(self, required: bool) -> str:
        if required:
            return base.read_key(self.key_env, provider=self.name)
        try:
            return base.read_key(self.key_env, provider=self.name)
        except MissingKeyError:
            return NO_KEY

    async def complete(self, request: CompletionRequest) -> CompletionResponse:
        """Run one chat completion with negotiation, limits and transport retries."""
        start = time.perf_counter()
        (completion, mode), retries = await self.gate.run(lambda: self._negotiate(request))
        return self._to_response(completion, request, mode, retries, base.elapsed_ms(start))

    async def aclose(self) -> None:
        """Close the SDK client unless the caller supplied the HTTP client."""
        if self._owns_client:
            await self._sdk.close()

    # The batch protocol (legal_judge.providers.batch_protocol): api.openai.com always accepts
    # ``json_schema``, so a batch request uses it without negotiation.

    @property
    def sdk_client(self) -> openai.AsyncOpenAI:
        """The SDK client online calls use (batch jobs share its key, base URL and transport)."""
        return self._sdk.client

    def batch_body(self, request: CompletionRequest) -> dict[str, Any]:
        """The chat-completions body of ``request``, structured output as ``json_schema``."""
        return self._request_kwargs(request, _batch_mode(request))

    def batch_response(self, payload: Any, request: CompletionRequest) -> CompletionResponse:
        """A chat completion body from a batch output file as the online response."""
        ChatCompletion.model_validate(payload)  # a batch line is checked in full, as before
        return self._to_response(payload, request, _batch_mode(request), 0, 0.0)

    def translate_error(self, exc: openai.APIError) -> ProviderError:
        """An SDK error as the ProviderError an online call raises (key redacted)."""
        return sdk.error_for_sdk(exc, openai, provider=self.name, timeout_s=self.timeout_s,
                                  secret=self._secret, key_env=self.key_env,
                                  status_message=_status_message, endpoint=self.endpoint)

    async def _negotiate(self, request: CompletionRequest) -> tuple[dict[str, Any], str | None]:
        if request.json_schema is None:
            return await self._call(request, None), None
        key = (self.base_url, request.model)
        first = STRUCTURED_MODES.index(_NEGOTIATED.get(key, STRUCTURED_MODES[0]))
        modes = STRUCTURED_MODES[first:]
        for index, mode in enumerate(modes):
            try:
                completion = await self._call(request, mode)
            except ProviderError as exc:
                if index + 1 == len(modes) or not _rejects_format(exc):
                    raise
                # Remember the rejection at once, so a transport retry does not ask again.
                _NEGOTIATED[key] = modes[index + 1]
                logger.info("%s rejected %s; falling back to %s", self.name, mode, modes[index + 1])
                continue
            _NEGOTIATED[key] = mode
            return completion, mode
        raise AssertionError("unreachable: the last mode either returns or raises")

    async def _call(self, request: CompletionRequest, mode: str | None) -> dict[str, Any]:
        try:
            return await self._post(self._request_kwargs(request, mode))
        except ProviderError as exc:
            if not token_logprobs.note_refusal(exc, (self.base_url, request.model)):
                raise
            return await self._post(self._request_kwargs(request, mode))  # without logprobs

    async def _post(self, body: dict[str, Any]) -> dict[str, Any]:
        try:
            text = await self._sdk.client.post("/chat/completions", body=body, cast_to=str)
            completion = json.loads(text)
        except openai.APIError as exc:
            raise self.translate_error(exc) from exc
        except ValueError as exc:  # a body cut short, or a gateway's HTML page: not JSON
            raise ProviderUnavailable(f"malformed response body ({type(exc).__name__})",
                                      provider=self.name) from None
        except Exception as exc:
            sdk.raise_transport_failure(exc, provider=self.name, timeout_s=self.timeout_s,
                                         endpoint=self.endpoint)
            raise
        if not _well_formed(completion):
            # A gateway's HTML error page with status 200, or JSON that is no chat completion:
            # retried like a 5xx instead of crashing the run.
            raise ProviderUnavailable("malformed response body (not a chat completion)",
                                      provider=self.name)
        return completion

    def _request_kwargs(self, request: CompletionRequest, mode: str | None) -> dict[str, Any]:
        kwargs: dict[str, Any] = {
            "model": request.model,
            "messages": [{"role": m.role, "content": m.content} for m in request.messages],
        }
        reasoning = self.spec.prefix == "openai" and bool(
            _REASONING_MODEL.match(normalize_model_name(request.model))
        )
        if not reasoning:
            kwargs["temperature"] = request.temperature
        # OpenAI itself deprecated max_tokens; compatible servers often only know max_tokens.
        tokens_param = "max_completion_tokens" if self.spec.prefix == "openai" else "max_tokens"
        kwargs[tokens_param] = request.max_tokens
        if request.seed is not None:
            kwargs["seed"] = request.seed
        response_format = _response_format(mode, request) if mode else None
        if response_format is not None:
            kwargs["response_format"] = response_format
        if request.json_schema is not None and not reasoning and self.logprobs:
            kwargs.update(token_logprobs.logprob_params((self.base_url, request.model)))
        return kwargs

    def _to_response(
        self,
        completion: dict[str, Any],
        request: CompletionRequest,
        mode: str | None,
        retries: int,
        latency_ms: float,
    ) -> CompletionResponse:
        """A chat-completion body (checked by :func:`_well_formed`) as our response."""
        if not completion["choices"]:
            raise ProviderError("the endpoint returned no choices", provider=self.name)
        choice = completion["choices"][0]
        message = choice["message"]
        usage = completion.get("usage")
        usage = usage if isinstance(usage, dict) else {}
        model = completion.get("model")
        text = message.get("content") or ""
        return CompletionResponse(
            text=text, digit_logprobs=token_logprobs.digit_logprobs(choice, text),
            model=model if isinstance(model, str) and model else request.model,
            usage=Usage(input_tokens=_count(usage.get("prompt_tokens")),
                        output_tokens=_count(usage.get("completion_tokens"))),
            finish_reason=base.normalize_finish_reason(_text(choice.get("finish_reason"))),
            refusal=_text(message.get("refusal")) or None,
            latency_ms=latency_ms,
            retries=retries,
            structured_mode=mode,
        )


def _batch_mode(request: CompletionRequest) -> str | None:
    return "json_schema" if request.json_schema is not None else None


def _well_formed(completion: Any) -> bool:
    if not isinstance(completion, dict) or not isinstance(completion.get("choices"), list):
        return False
    if not completion["choices"]:
        return True  # reported as "no choices" with its own message
    choice = completion["choices"][0]
    message = choice.get("message") if isinstance(choice, dict) else None
    return isinstance(message, dict) and isinstance(message.get("content"), str | None)


def _count(value: Any) -> int | None:
    """A token count as reported, or None for a missing or malformed one."""
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def _resolve_base_url(spec: base.ProviderSpec, options: base.ProviderOptions,
                      endpoint: Endpoint) -> str:
    url = options.base_url or spec.base_url or endpoint.base_url
    if not url:
        raise ConfigError(
            f"judge spec '{spec.raw}' names no server URL",
            code="provider-base-url-missing",
            fix=f"append the server's URL: {spec.prefix}:{spec.model}@http://localhost:8000/v1",
        )
    return url


def _factory(
    spec: base.ProviderSpec, options: base.ProviderOptions, http_client: httpx.AsyncClient | None
) -> OpenAIProvider:
    return OpenAIProvider(spec, options, http_client=http_client)


for _prefix in ENDPOINTS:
    register_provider(_prefix, _factory)
