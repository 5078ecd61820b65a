"""Model families: which vendor and lineage a model name belongs to.

The ensemble's same-family policy needs to know when a judge and the system under test share a
lineage (a judge tends to prefer text written by its own family). Families are decided from the
model name with ordered regex rules; the first rule that matches wins, so more specific lineages
come first (``deepseek-r1-distill-llama-70b`` is a DeepSeek model, not a Llama one). Config can
override any model, exactly or with a glob pattern.

Names are normalised before matching: lower-cased, OpenAI fine-tune prefixes (``ft:``) and
vendor/path prefixes (``meta-llama/``, ``models/``, ``/path/to/``) dropped, Ollama-style tags
(``:70b``) and a ``.gguf`` suffix removed.
"""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Mapping

__all__ = ["FAMILY_RULES", "UNKNOWN_FAMILY", "family_of", "normalize_model_name"]

UNKNOWN_FAMILY = "unknown"

# A token must start the name or follow a separator, so "dolphin" never reads as "phi".
_B = r"(?:^|[^a-z0-9])"

FAMILY_RULES: tuple[tuple[re.Pattern[str], str], ...] = tuple(
    (re.compile(pattern), family)
    for pattern, family in (
        (r"^(?:gpt-|gpt\d|o[1-9](?:$|[-_.])|chatgpt|text-davinci|davinci|babbage)", "openai"),
        (rf"{_B}claude", "anthropic"),
        (rf"{_B}deepseek", "deepseek"),
        (rf"{_B}(?:gemini|gemma|palm|bison)", "google"),
        (r"llama", "meta"),  # also meta-llama, codellama, tinyllama
        (rf"{_B}(?:mistral|mixtral|codestral|ministral|magistral|pixtral|devstral)", "mistral"),
        (rf"{_B}(?:command|c4ai|aya)", "cohere"),
        (rf"{_B}(?:qwen|qwq)", "alibaba"),
        (rf"{_B}grok", "xai"),
        (rf"{_B}phi", "microsoft"),
        (rf"{_B}smollm", "huggingface"),
    )
)


def normalize_model_name(model: str) -> str:
    """Reduce a model identifier to the bare model name used for family and price look-ups.

    Args:
        model: a model id as a provider or a spec spells it, e.g. ``meta-llama/Llama-3.1-70B``,
            ``llama3.1:70b``, ``ft:gpt-4o-mini:org::id`` or ``/models/SmolLM2-135M.Q4_1.gguf``.

    Returns:
        The lower-cased bare name, e.g. ``llama-3.1-70b``, ``llama3.1``, ``gpt-4o-mini``,
        ``smollm2-135m.q4_1``.
    """
    name = model.strip().lower()
    if name.startswith("ft:"):
        name = name[3:]
    name = name.rsplit("/", 1)[-1]
    name = name.split(":", 1)[0]
    return name.removesuffix(".gguf")


def family_of(model: str, *, overrides: Mapping[str, str] | None = None) -> str:
    """Return the family (vendor and lineage) of a model.

    Args:
        model: the model id, in any of the spellings :func:`normalize_model_name` accepts.
        overrides: model name or glob pattern -> family, from config; checked first, against the
            raw id and the normalised name, case-insensitively.

    Returns:
        One of ``openai``, ``anthropic``, ``google``, ``meta``, ``mistral``, ``cohere``,
        ``alibaba``, ``deepseek``, ``xai``, ``microsoft``, ``huggingface``, an override value,
        or ``"unknown"``.
    """
    normalized = normalize_model_name(model)
    if overrides:
        candidates = (model.strip().lower(), normalized)
        for pattern, family in overrides.items():
            if any(fnmatch.fnmatchcase(c, pattern.lower()) for c in candidates):
                return family
    for rule, family in FAMILY_RULES:
        if rule.search(normalized):
            return family
    return UNKNOWN_FAMILY
