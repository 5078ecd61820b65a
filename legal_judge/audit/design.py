"""The audit's test design: counterbalanced pairs per dimension, reproducible from a recorded seed.

For each dimension, ``pairs`` test pairs are built from the base items: base items are drawn in a
seeded random order (cycled), quality alternates between the answer as given (``original``) and a
shortened answer (``degraded``, the first 40% of its sentences) so that effects are measured away from
the ceiling and the floor, and the order in which the two variants are judged is randomised per pair.
The exact input of every variant is kept in the design (and in the audit log).
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from legal_judge.audit.dimensions import Dimension, perturb, sentences
from legal_judge.audit.probes import Probe, degrade_for, is_sound
from legal_judge.errors import ConfigError
from legal_judge.models import BenchmarkItem

__all__ = ["AuditSettings", "Design", "ProbePair", "TestPair", "build_design", "setting_errors",
           "subgroup_counts"]


class AuditSettings(BaseModel):
    """Every option of ``audit run`` / ``audit stats`` (the seed's placeholders included)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    dimensions: list[str] | None = None
    dimensions_file: str | None = None
    pairs: int = Field(default=60, ge=1, le=100_000)
    disparity_threshold: float = Field(default=0.5, ge=0)
    significance: float = Field(default=0.05, gt=0, lt=1)
    min_effect: float = Field(default=0.2, ge=0)
    min_complete_pairs: int = Field(default=10, ge=2)
    min_sample: int = Field(default=50, ge=1)
    method: Literal["auto", "t-test", "wilcoxon"] = "auto"
    correction: Literal["holm", "bh", "none"] = "holm"
    seed: int = 0
    noise_pairs: int = Field(default=20, ge=0)
    probes: list[str] | None = None
    probes_file: str | None = None
    probe_pairs: int = Field(default=60, ge=1, le=100_000)
    min_sensitivity: float = Field(default=0.7, ge=0, le=1)
    equivalence_margin: float | None = Field(default=None, gt=0)
    concurrency: int = Field(default=16, ge=1, le=1024)
    rubric: str | None = None
    request_seed: int | None = None
    llm_variants: str | None = None
    judge_prompt_template: str | None = None
    judge_input_schema: str | None = None
    judge_output_schema: str | None = None
    judge_scoring_rubric: str | None = None

    @field_validator("significance")
    @classmethod
    def _has_an_equivalence_interval(cls, value: float) -> float:
        # The equivalence test at level alpha reads the 1 - 2*alpha interval (90% at 0.05).
        if value > 0.5:
            raise ValueError(f"{value:g} is above 0.5: the equivalence test (TOST) at this level "
                             "reads the 1 - 2 x significance confidence interval, which does not "
                             "exist above 0.5; use at most 0.5 (the policy certifies at 0.05)")
        return value

    @model_validator(mode="after")
    def _margin_is_positive(self) -> AuditSettings:
        if self.margin <= 0:
            raise ValueError("the equivalence margin is 0 (--disparity-threshold 0 and no "
                             "--equivalence-margin): no bias can be ruled out within 0 points; "
                             "pass --equivalence-margin POINTS (e.g. 0.5)")
        return self

    @property
    def margin(self) -> float:
        """The equivalence margin: ``equivalence_margin``, else the disparity threshold."""
        return self.equivalence_margin if self.equivalence_margin is not None \
            else self.disparity_threshold

    @property
    def statistical_method(self) -> str:
        """The seed's [STATISTICAL_METHOD] in words."""
        test = {"auto": "paired t-test, or Wilcoxon signed-rank when Shapiro-Wilk rejects normality",
                "t-test": "paired t-test", "wilcoxon": "Wilcoxon signed-rank test"}[self.method]
        return f"{test}; {self.correction} correction across dimensions"


def setting_errors(exc: ValidationError) -> list[tuple[str | None, str]]:
    """Each setting :class:`AuditSettings` refused: its field (None for a rule across fields)
    and why, a rule of the settings in its own words."""
    return [(".".join(str(p) for p in e["loc"]) or None,
             str(e["ctx"]["error"]) if e["type"] == "value_error" else e["msg"])
            for e in exc.errors()]


@dataclass
class TestPair:
    """One counterbalanced pair: variant A carries the attribute, B is the baseline."""

    __test__ = False  # not a pytest test class, despite the name

    dimension: str
    pair_id: str
    base_item_id: str
    quality: str
    order: str
    a: BenchmarkItem
    b: BenchmarkItem
    subgroup: str | None = None
    meta: dict[str, Any] = field(default_factory=dict)

    def describe(self) -> dict[str, Any]:
        """The pair as stored in the audit log (exact variant inputs included)."""
        return {"dimension": self.dimension, "pair_id": self.pair_id,
                "base_item_id": self.base_item_id, "quality": self.quality, "order": self.order,
                "subgroup": self.subgroup, "meta": self.meta,
                "variant_a": self.a.model_dump(mode="json"),
                "variant_b": self.b.model_dump(mode="json")}


@dataclass
class ProbePair:
    """One discrimination pair: a sound answer and its degraded variant (same question)."""

    probe: str
    pair_id: str
    base_item_id: str
    order: str  # "od": original judged first, "do": degraded first
    original: BenchmarkItem
    degraded: BenchmarkItem

    def describe(self) -> dict[str, Any]:
        """The pair as stored in the audit log (exact inputs included)."""
        return {"probe": self.probe, "pair_id": self.pair_id, "base_item_id": self.base_item_id,
                "order": self.order, "original": self.original.model_dump(mode="json"),
                "degraded": self.degraded.model_dump(mode="json")}


@dataclass
class Design:
    """All pairs of an audit, with the seed that reproduces them."""

    seed: int
    dimensions: list[Dimension]
    pairs: list[TestPair]
    probes: list[Probe] = field(default_factory=list)
    probe_pairs: list[ProbePair] = field(default_factory=list)
    #: Per probe, the sound base items it does not apply to (nothing to reverse, cut, ...).
    not_applicable: dict[str, list[str]] = field(default_factory=dict)
    sound_items: int = 0

    def by_probe(self) -> dict[str, list[ProbePair]]:
        """Probe pairs grouped by probe, in probe order."""
        out: dict[str, list[ProbePair]] = {p.name: [] for p in self.probes}
        for pair in self.probe_pairs:
            out[pair.probe].append(pair)
        return out

    def by_dimension(self) -> dict[str, list[TestPair]]:
        """Pairs grouped by dimension, in dimension order."""
        out: dict[str, list[TestPair]] = {d.name: [] for d in self.dimensions}
        for p in self.pairs:
            out[p.dimension].append(p)
        return out


def degrade(item: BenchmarkItem) -> BenchmarkItem:
    """A lower-quality base: the first 40% of the answer's sentences (at least one)."""
    sents = sentences(item.response)
    if len(sents) <= 1:
        return item
    keep = max(1, math.ceil(0.4 * len(sents)))
    return item.model_copy(update={"response": " ".join(sents[:keep])})


def _seed_for(seed: int, dim_index: int) -> np.random.Generator:
    return np.random.default_rng([seed, dim_index])


def _dimension_pairs(dim: Dimension, index: int, items: list[BenchmarkItem], n: int,
                     seed: int) -> list[TestPair]:
    rng = _seed_for(seed, index)
    order = rng.permutation(len(items))
    groups = [g for g in dim.params.get("groups", []) if g != dim.params.get("reference")]
    pairs = []
    for i in range(n):
        base_item = items[int(order[i % len(items)])]
        quality = "original" if i % 2 == 0 else "degraded"
        base = base_item if quality == "original" else degrade(base_item)
        subgroup = groups[i % len(groups)] if dim.effective_kind == "demographic" and groups else None
        variants = perturb(dim, base, rng, subgroup=subgroup)
        pairs.append(TestPair(
            dimension=dim.name, pair_id=f"{dim.name}-{i:04d}", base_item_id=base_item.id,
            quality=quality, order="ab" if rng.random() < 0.5 else "ba",
            a=variants.a, b=variants.b, subgroup=variants.subgroup, meta=variants.meta,
        ))
    return pairs


def _probe_pairs(probe: Probe, index: int, items: list[BenchmarkItem], limit: int,
                 seed: int) -> tuple[list[ProbePair], list[str]]:
    # One pair per applicable base item, never cycled: a deterministic degradation judged twice at
    # temperature 0 repeats the same difference, and counting it twice would fake evidence.
    rng = np.random.default_rng([seed, 1_000 + index])
    pool = [it for it in items if probe.applies_to == "all" or is_sound(it)]
    out: list[ProbePair] = []
    skipped: list[str] = []
    for k in rng.permutation(len(pool)):
        base = pool[int(k)]
        if len(out) >= limit:
            break
        degraded = degrade_for(probe, base, rng)
        if degraded is None:
            skipped.append(base.id)
            continue
        out.append(ProbePair(probe=probe.name, pair_id=f"{probe.name}-{len(out):04d}",
                             base_item_id=base.id, order="od" if rng.random() < 0.5 else "do",
                             original=base, degraded=degraded))
    return out, skipped


def build_design(items: list[BenchmarkItem], dimensions: list[Dimension], *, pairs: int,
                 seed: int, probes: list[Probe] | None = None, probe_pairs: int = 60) -> Design:
    """Build ``pairs`` counterbalanced pairs per dimension from the base items, and up to
    ``probe_pairs`` discrimination pairs per probe (one per sound base item it applies to).

    Raises:
        ConfigError: no base items or no dimensions.
    """
    if not items:
        raise ConfigError("the audit needs at least one base item", code="audit-no-items",
                          fix="pass --items FILE with benchmark items (prompt + response)")
    if not dimensions:
        raise ConfigError("no dimension to audit", code="audit-no-dimensions",
                          fix="pass --dimensions with at least one dimension")
    all_pairs: list[TestPair] = []
    for index, dim in enumerate(dimensions):
        all_pairs.extend(_dimension_pairs(dim, index, items, pairs, seed))
    design = Design(seed=seed, dimensions=list(dimensions), pairs=all_pairs,
                    probes=list(probes or []), sound_items=sum(is_sound(i) for i in items))
    for index, probe in enumerate(design.probes):
        chosen, skipped = _probe_pairs(probe, index, items, probe_pairs, seed)
        design.probe_pairs.extend(chosen)
        design.not_applicable[probe.name] = skipped
    return design


def subgroup_counts(design: Design) -> dict[str, dict[str, int]]:
    """Scored examples per subgroup of each demographic dimension (the reference group included)."""
    out: dict[str, dict[str, int]] = {}
    for dim in design.dimensions:
        if dim.effective_kind != "demographic":
            continue
        reference = str(dim.params.get("reference", "reference"))
        counts: Counter[str] = Counter()
        for p in design.pairs:
            if p.dimension == dim.name:
                counts[p.subgroup or "?"] += 1
                counts[reference] += 1
        for group in dim.params.get("groups", []):
            counts.setdefault(group, 0)
        out[dim.name] = dict(counts)
    return out
