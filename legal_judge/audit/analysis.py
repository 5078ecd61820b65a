"""Per-dimension statistics of an audit, exactly as DESIGN.md "Statistics conventions" says.

Every number comes from :mod:`legal_judge.stats` (scipy underneath): the paired test and effect size
(:func:`paired_test`), the correction across dimensions (:func:`adjust_pvalues`, Holm by default), the
flag rule (:func:`flag`), the noise floor (:func:`noise_floor`), the minimum detectable effect at the
achieved n (:func:`minimum_detectable_effect`) and, for the position dimension, position consistency,
preference fairness and the exact binomial first-position test (:func:`position_consistency`).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any, Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, model_validator

from legal_judge.stats import (
    adjust_pvalues,
    flag,
    minimum_detectable_effect,
    noise_floor,
    paired_test,
    position_consistency,
)

__all__ = ["DimensionStats", "PairRow", "analyse"]

INSUFFICIENT = "insufficient data"


class PairRow(BaseModel):
    """One scored test pair (the ``audit stats`` input row; also what ``audit run`` produces).

    A bias-dimension row names its ``dimension`` (A carries the attribute, B is the baseline); a
    discrimination-probe row names its ``probe`` instead (A is the original answer, B the degraded
    one), the ``rubric`` scored, the ``expected_direction`` of the score from A to B (``drop``) and
    optionally the per-pair rule ``checks`` (check name -> whether the degraded verdict met it)
    and the scale ``step`` (default 1).
    """

    model_config = ConfigDict(extra="forbid")

    dimension: str | None = None
    probe: str | None = None
    pair_id: str
    variant_a_input: str
    variant_a_score: float | None
    variant_b_input: str
    variant_b_score: float | None
    error: str | None = None
    kind: Literal["text", "position", "demographic", "probe"] | None = None
    subgroup: str | None = None
    quality: str | None = None
    order: str | None = None
    repeat_score: float | None = None
    winners: tuple[str, str] | None = None
    rubric: str | None = None
    expected_direction: Literal["drop", "rise"] | None = None
    checks: dict[str, bool | None] | None = None
    step: float | None = None
    base_item_id: str | None = None

    @model_validator(mode="after")
    def _dimension_or_probe(self) -> PairRow:
        if (self.dimension is None) == (self.probe is None):
            raise ValueError("give exactly one of 'dimension' (a bias pair) or 'probe' "
                             "(a discrimination pair)")
        if self.probe is not None and self.expected_direction is None:
            raise ValueError("a probe row needs 'expected_direction' (drop or rise)")
        return self

    @property
    def name(self) -> str:
        """The dimension or probe the row belongs to."""
        return str(self.dimension if self.dimension is not None else self.probe)

    @property
    def complete(self) -> bool:
        """Both scores present and no error."""
        return self.error is None and self.variant_a_score is not None \
            and self.variant_b_score is not None


@dataclass
class DimensionStats:
    """Everything computed for one dimension."""

    dimension: str
    kind: str
    n_pairs: int
    complete: list[PairRow]
    failed: list[PairRow]
    sufficient: bool
    result: Any = None
    p_adjusted: float | None = None
    flagged: bool = False
    noise: dict[str, Any] | None = None
    mde: dict[str, Any] | None = None
    position: dict[str, Any] | None = None
    subgroups: dict[str, Any] = field(default_factory=dict)
    robustness_rate: float | None = None


def _noise(rows: list[PairRow]) -> dict[str, Any] | None:
    repeats = [r for r in rows if r.repeat_score is not None and r.variant_b_score is not None]
    if not repeats:
        return None
    nf = noise_floor([r.variant_b_score for r in repeats], [r.repeat_score for r in repeats])
    diffs = np.array([float(r.variant_b_score or 0.0) - float(r.repeat_score or 0.0)
                      for r in repeats])
    sd = float(diffs.std(ddof=1)) if diffs.size > 1 else None  # one repeat: no spread
    return {**asdict(nf), "consistency_rate": 1.0 - nf.changed_share, "sd_of_repeat_difference": sd,
            "what": "the same variant judged twice (fresh call, different request seed)"}


def _mde(n: int, sd: float | None, *, alpha: float, m: int) -> dict[str, Any] | None:
    if n < 2 or sd is None:
        return None
    d = minimum_detectable_effect(n, alpha=alpha, power=0.8)
    worst = minimum_detectable_effect(n, alpha=alpha / max(1, m), power=0.8)
    return {"n": n, "power": 0.8, "alpha": alpha, "d_z": d, "score_units": d * sd,
            "d_z_at_holm_first_step": worst,
            "note": "smallest d_z a two-sided paired t-test on n pairs detects with 80% power"}


def _position(rows: list[PairRow]) -> dict[str, Any] | None:
    winners = [r.winners for r in rows if r.winners is not None]
    if not winners:
        return None
    res = position_consistency([w[0] for w in winners], [w[1] for w in winners])
    out = asdict(res)
    out["first_position"]["what"] = "first-slot wins among position-driven flips (exact binomial, " \
                                    "Clopper-Pearson 95% CI)"
    return out


def _subgroups(rows: list[PairRow], *, method: str, min_pairs: int) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for group in sorted({r.subgroup for r in rows if r.subgroup}):
        sub = [r for r in rows if r.subgroup == group]
        if len(sub) < min_pairs:
            out[group] = {"n": len(sub), "status": INSUFFICIENT}
            continue
        res = paired_test([r.variant_a_score for r in sub], [r.variant_b_score for r in sub],
                          method=method)  # type: ignore[arg-type]
        out[group] = {"n": res.n, "mean_difference": res.mean_difference, "p_value": res.p_value,
                      "effect_size": res.effect_size, "test_used": res.test_used}
    return out


def _one(name: str, rows: list[PairRow], *, method: str, min_pairs: int) -> DimensionStats:
    complete = [r for r in rows if r.complete]
    failed = [r for r in rows if not r.complete]
    kind = next((r.kind for r in rows if r.kind), "text")
    st = DimensionStats(name, kind, len(rows), complete, failed, len(complete) >= min_pairs)
    st.noise = _noise(rows)
    if not st.sufficient:
        return st
    a = [r.variant_a_score for r in complete]
    b = [r.variant_b_score for r in complete]
    st.result = paired_test(a, b, method=method)  # type: ignore[arg-type]
    st.robustness_rate = float(np.mean([x == y for x, y in zip(a, b, strict=True)]))
    st.position = _position(complete) if kind == "position" else None
    if kind == "demographic":
        st.subgroups = _subgroups(complete, method=method, min_pairs=min_pairs)
    return st


def analyse(rows: list[PairRow], *, dimensions: list[str] | None = None, method: str = "auto",
            correction: str = "holm", significance: float = 0.05, min_effect: float = 0.2,
            min_complete_pairs: int = 10) -> list[DimensionStats]:
    """Statistics for every dimension, the correction across them and the flags.

    Args:
        rows: Scored pairs of all dimensions (failed pairs included: they are counted, not tested).
        dimensions: Dimension order (default: order of first appearance).
        method: ``auto``, ``t-test`` or ``wilcoxon``.
        correction: ``holm``, ``bh`` or ``none`` across the dimensions with enough data.
        significance: Threshold of the adjusted p-value.
        min_effect: Minimum |effect size| to flag.
        min_complete_pairs: Fewer complete pairs: "insufficient data", no statistics.
    """
    rows = [r for r in rows if r.dimension is not None]
    names = dimensions or list(dict.fromkeys(str(r.dimension) for r in rows))
    by_dim: dict[str, list[PairRow]] = {n: [] for n in names}
    for r in rows:
        by_dim.setdefault(str(r.dimension), []).append(r)
    stats = [_one(n, rs, method=method, min_pairs=min_complete_pairs) for n, rs in by_dim.items()]
    raw = [s.result.p_value if s.sufficient else np.nan for s in stats]
    adjusted = adjust_pvalues(raw, correction) if stats else np.array([])  # type: ignore[arg-type]
    m = sum(1 for s in stats if s.sufficient)
    for s, p_adj in zip(stats, adjusted, strict=True):
        if not s.sufficient:
            continue
        # A single pair has no p-value (None): its adjusted p stays undefined, not NaN.
        s.p_adjusted = None if s.result.p_value is None else float(p_adj)
        s.flagged = flag(s.p_adjusted, s.result.effect_size, significance=significance,
                         min_effect=min_effect)
        s.mde = _mde(s.result.n, s.result.sd, alpha=significance, m=m)
    return stats
