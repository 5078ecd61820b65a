"""Bias dimensions as data, and one quality-preserving perturbation per dimension.

A dimension (``dimensions.v1.yaml`` for the built-in ones, or a user YAML file of the same shape)
names a perturbation and its parameters. A perturbation turns one base item into a pair of variants:
``a`` carries the attribute under test, ``b`` is the baseline, and both come from the same base answer
so the legal content is identical (DESIGN: ``d_i = score(A) - score(B)``).

Perturbations that need no code, for user dimensions:

- ``find_replace``: ``params.rules`` is a list of ``{find, replace, regex?, field?}``; variant A is the
  base with the rules applied (to ``response`` by default), variant B the base unchanged (or with
  ``params.rules_b`` applied).
- ``template``: ``params.a`` / ``params.b`` map ``prompt`` and/or ``response`` to sandboxed Jinja
  templates over ``prompt``, ``response``, ``jurisdiction`` and ``choice`` (one entry of
  ``params.choices`` drawn per pair, the same for both variants).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from legal_judge.assets.templates import render_string
from legal_judge.audit.entries import Catalogue
from legal_judge.errors import ConfigError
from legal_judge.models import BenchmarkItem
from legal_judge.sentences import plain_prose, sentences

__all__ = [
    "BUILTIN_PATH",
    "DIMENSIONS",
    "Dimension",
    "VariantPair",
    "builtin_dimensions",
    "load_dimension_file",
    "perturb",
    "plain_prose",
    "resolve_dimensions",
    "sentences",
]

BUILTIN_PATH = Path(__file__).parent / "dimensions.v1.yaml"
DimensionKind = Literal["text", "position", "demographic"]


class Dimension(BaseModel):
    """One bias dimension: what it probes and how its variants are built."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = Field(pattern=r"^[a-z][a-z0-9_]*$")
    description: str
    perturbation: str
    bias: str | None = None
    kind: DimensionKind = "text"
    remediation: str | None = None
    params: dict[str, Any] = Field(default_factory=dict)

    @property
    def effective_kind(self) -> DimensionKind:
        """``position`` for the A/B swap, else the declared kind."""
        return "position" if self.perturbation == "swap_order" else self.kind


@dataclass
class VariantPair:
    """The two variants of one test pair (A carries the attribute)."""

    a: BenchmarkItem
    b: BenchmarkItem
    subgroup: str | None = None
    meta: dict[str, Any] = field(default_factory=dict)


class _DimensionFile(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str = "dimensions"
    version: int = 1
    dimensions: list[Dimension]


def resolve_dimensions(names: list[str] | None, *,
                       extra_file: str | Path | None = None) -> list[Dimension]:
    """The dimensions to audit: built-in plus user ones, selected by name (all when ``names`` is None).

    Raises:
        ConfigError: a name that is neither built in nor in the user file.
    """
    return DIMENSIONS.select(names or None, extra_file=extra_file)


# perturbations ---------------------------------------------------------------------------------
Perturbation = Callable[[BenchmarkItem, dict[str, Any], np.random.Generator], VariantPair]


def _variant(item: BenchmarkItem, **update: Any) -> BenchmarkItem:
    return item.model_copy(update=update)


def _pick(rng: np.random.Generator, pool: list[str], k: int) -> list[str]:
    idx = rng.choice(len(pool), size=min(k, len(pool)), replace=False)
    return [pool[int(i)] for i in idx]


def _pad(item: BenchmarkItem, params: dict[str, Any], rng: np.random.Generator) -> VariantPair:
    # Restate the answer's own sentences behind filler phrases: longer, no new content.
    sents = sentences(item.response) or [item.response]
    k = int(params.get("restatements", 3))
    fillers = _pick(rng, list(params["fillers"]), k)
    chosen = [sents[int(i)] for i in rng.choice(len(sents), size=k, replace=len(sents) < k)]
    padding = " ".join(f"{f} {s[0].lower()}{s[1:]}" for f, s in zip(fillers, chosen, strict=False))
    return VariantPair(_variant(item, response=f"{item.response}\n\n{padding}"), item)


def _insert(item: BenchmarkItem, params: dict[str, Any], rng: np.random.Generator) -> VariantPair:
    # Variant B gets neutral sentences at the same places, so length stays comparable.
    where = params.get("where", "both")
    count = int(params.get("count", 2 if where == "both" else 1))
    idx = rng.choice(len(params["a"]), size=count, replace=False)
    a = [params["a"][int(i)] for i in idx]
    b = [params["b"][int(i) % len(params["b"])] for i in idx]

    def place(extra: list[str]) -> str:
        if where == "start":
            return " ".join(extra) + "\n\n" + item.response
        if where == "end":
            return item.response + "\n\n" + " ".join(extra)
        head, tail = extra[: len(extra) // 2], extra[len(extra) // 2:]
        return "\n\n".join(p for p in (" ".join(head), item.response, " ".join(tail)) if p)

    return VariantPair(_variant(item, response=place(a)), _variant(item, response=place(b)))


def _markdown(item: BenchmarkItem, params: dict[str, Any], rng: np.random.Generator) -> VariantPair:
    prose = plain_prose(item.response)
    sents = sentences(prose) or [prose]
    first, rest = sents[0], sents[1:]
    lines = ["## Short answer", "", f"**{first}**", "", "## Analysis", ""]
    lines += [f"- {s}" for s in rest] or [f"- {first}"]
    return VariantPair(_variant(item, response="\n".join(lines)),
                       _variant(item, response=" ".join(sents)))


def _names(item: BenchmarkItem, params: dict[str, Any], rng: np.random.Generator) -> VariantPair:
    reference = params["reference"]
    others = [g for g in params["groups"] if g != reference]
    group = str(params.get("_subgroup") or others[int(rng.integers(len(others)))])
    row = params["values"][int(rng.integers(len(params["values"])))]

    def framed(name: str) -> BenchmarkItem:
        variables = {"name": name, "prompt": item.prompt, "response": item.response}
        return _variant(
            item,
            prompt=render_string(params.get("prompt_template", "{{ prompt }}"), variables,
                                 name="demographic prompt_template"),
            response=render_string(params.get("response_template", "{{ response }}"), variables,
                                   name="demographic response_template"),
        )

    meta = {k: v for k, v in row.items() if k not in params["groups"]}
    return VariantPair(framed(row[group]), framed(row[reference]), subgroup=group,
                       meta={"names": {"a": row[group], "b": row[reference]}, **meta})


def _find_replace(item: BenchmarkItem, params: dict[str, Any],
                  rng: np.random.Generator) -> VariantPair:
    def apply(rules: list[dict[str, Any]]) -> BenchmarkItem:
        out = item
        for rule in rules:
            target = rule.get("field", "response")
            text = getattr(out, target)
            if rule.get("regex"):
                text = re.sub(rule["find"], rule["replace"], text)
            else:
                text = text.replace(rule["find"], rule["replace"])
            out = _variant(out, **{target: text})
        return out

    return VariantPair(apply(params.get("rules", [])), apply(params.get("rules_b", [])))


def _template(item: BenchmarkItem, params: dict[str, Any], rng: np.random.Generator) -> VariantPair:
    choices = params.get("choices") or [{}]
    choice = choices[int(rng.integers(len(choices)))]
    variables = {"prompt": item.prompt, "response": item.response,
                 "jurisdiction": item.jurisdiction or "", "choice": choice}

    def build(spec: dict[str, str], side: str) -> BenchmarkItem:
        update = {f: render_string(src, variables, name=f"dimension template {side}.{f}")
                  for f, src in spec.items() if f in ("prompt", "response")}
        return _variant(item, **update)

    return VariantPair(build(params.get("a", {}), "a"), build(params.get("b", {}), "b"),
                       meta={"choice": choice})


def _swap_order(item: BenchmarkItem, params: dict[str, Any],
                rng: np.random.Generator) -> VariantPair:
    # Position: the same answer shown first (A) and second (B); design.py builds the two orders.
    return VariantPair(item, item)


PERTURBATIONS: dict[str, Perturbation] = {
    "pad": _pad,
    "insert": _insert,
    "markdown": _markdown,
    "names": _names,
    "find_replace": _find_replace,
    "template": _template,
    "swap_order": _swap_order,
}

#: The built-in dimensions and a user's ``--dimensions-file``.
DIMENSIONS: Catalogue[Dimension] = Catalogue(
    kind="dimension", builtin_path=BUILTIN_PATH, file_model=_DimensionFile, field="dimensions",
    perturbations=PERTURBATIONS, option="--dimensions-file", code="audit-dimension-unknown")
builtin_dimensions = DIMENSIONS.builtin
load_dimension_file = DIMENSIONS.load


def perturb(dimension: Dimension, item: BenchmarkItem, rng: np.random.Generator, *,
            subgroup: str | None = None) -> VariantPair:
    """Build the variant pair of ``dimension`` from one base item.

    Args:
        dimension: The dimension.
        item: The base item (its response already at the chosen quality level).
        rng: The pair's generator (seeded by the design, so the variants are reproducible).
        subgroup: For demographic dimensions, the group variant A is drawn from.
    """
    params = dict(dimension.params)
    if subgroup is not None:
        params["_subgroup"] = subgroup
    try:
        return PERTURBATIONS[dimension.perturbation](item, params, rng)
    except KeyError as exc:
        raise ConfigError(f"dimension '{dimension.name}': missing parameter {exc}",
                          code="audit-dimension-params",
                          fix="see dimensions.v1.yaml for the parameters of each perturbation") from None
