"""Selective evaluation: the confidence threshold above which the judges may decide alone.

Fixed-sequence testing (Bauer 1991) as "Trust or Escalate" (Jung et al., ICLR 2025) uses it: on
labelled items, walk a descending grid of confidence thresholds; at each, test
``H0: disagreement rate among the kept items > 1 - target`` with the exact binomial test (the
one-sided Clopper-Pearson bound at level ``1 - confidence``), and stop at the first threshold
that cannot be rejected. The last rejected threshold keeps items on which agreement with the
lawyers is at least ``target`` with probability at least ``confidence``: the tests are taken in a
fixed order, each at the full level, and the walk stops at the first acceptance, so no
multiplicity correction is needed. The guarantee assumes the labelled items are exchangeable with
the items the threshold is applied to (a random sample of the same run).

The walk starts at the most confident threshold that keeps enough labelled items for zero
disagreements to reject H0 (``target^n < 1 - confidence``: 29 items for 0.90 at 95%); starting
higher would stop the walk at once, since no test there can reject.

**Weighted labels** (a stratified sample labelled at unequal rates, each label weighing
``w = N_h / n_h``, its stratum's run items per labelled item): there is no exact weighted
Clopper-Pearson bound, so each test uses Kish's effective sample size. Among the kept labelled
items, the weighted disagreement rate ``p = sum(w * disagree) / sum(w)`` and
``n_eff = (sum w)^2 / sum(w^2)``; the exact binomial test then runs on ``floor(n_eff)`` items with
``ceil(p * floor(n_eff))`` disagreements (both rounded the conservative way). Equal weights give
back the unweighted test exactly. The guarantee is then approximate (the design effect is
estimated), and the escalation says so.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt
from scipy import stats

from legal_judge.stats._common import StatisticsError

__all__ = ["SequenceStep", "ThresholdResult", "fixed_sequence_threshold", "labels_needed",
           "min_items_zero_failures"]

#: The largest label count :func:`labels_needed` searches.
MAX_LABELS = 100_000


@dataclass(frozen=True, slots=True)
class SequenceStep:
    """One test of the walk: the threshold, the labelled items it keeps, their disagreements,
    the exact one-sided p-value of H0 and whether H0 was rejected there."""

    threshold: float
    n_kept: int
    disagreements: int
    p_value: float
    rejected: bool


@dataclass(frozen=True, slots=True)
class ThresholdResult:
    """The outcome of the fixed-sequence walk.

    ``guaranteed`` is True when some threshold was rejected; then ``threshold`` is the lowest such
    (keep an item when its confidence is >= it), ``coverage`` the share of the run's items it
    keeps, ``observed_agreement`` and ``agreement_ci`` (two-sided exact, at ``confidence``) the
    agreement on the kept labelled items, and ``agreement_lower`` its one-sided exact lower bound
    (>= ``target``). When nothing is guaranteed, ``threshold`` is None, ``best_achievable`` the
    highest one-sided lower bound any single threshold reached (descriptive, not a guarantee),
    and ``labels_needed`` the labelled items the most promising threshold would need at its
    observed disagreement rate (None when no threshold's observed agreement exceeds the target:
    more labels of the same kind cannot help).
    """

    target: float
    confidence: float
    n_labelled: int
    n_items: int
    min_start: int
    guaranteed: bool
    threshold: float | None
    coverage: float
    n_kept_items: int
    n_kept_labelled: int
    disagreements: int
    observed_agreement: float | None
    agreement_ci: tuple[float, float] | None
    agreement_lower: float | None
    best_achievable: float | None = None
    best_threshold: float | None = None
    labels_needed: int | None = None
    steps: list[SequenceStep] = field(default_factory=list)

    @property
    def more_labels(self) -> int | None:
        """How many labels beyond the present ones :attr:`labels_needed` asks for."""
        return None if self.labels_needed is None else max(0, self.labels_needed - self.n_labelled)


def _check_levels(target: float, confidence: float) -> None:
    if not 0.0 < target < 1.0 or not 0.0 < confidence < 1.0:
        raise StatisticsError(f"target {target} and confidence {confidence} must lie in (0, 1)",
                              fix="e.g. --target 0.90 --confidence 0.95")


def min_items_zero_failures(target: float, confidence: float) -> int:
    """The fewest kept items for which zero disagreements reject H0: ``target^n <= 1-confidence``.

    Args:
        target: The agreement level to guarantee (0.90).
        confidence: The probability of the guarantee (0.95).

    Returns:
        The smallest such ``n`` (29 for 0.90 at 95%; 59 for 0.95 at 95%).
    """
    _check_levels(target, confidence)
    n = math.ceil(math.log(1.0 - confidence) / math.log(target))
    # Floating point can land a hair either side of an exact power; settle it with the test.
    while n > 1 and _p_value(0, n - 1, target) <= 1.0 - confidence:
        n -= 1
    while _p_value(0, n, target) > 1.0 - confidence:
        n += 1
    return n


def _p_value(disagreements: int, n: int, target: float) -> float:
    """P(X <= k) for X ~ Binomial(n, 1 - target): the exact p-value of H0 at its boundary."""
    return float(stats.binom.cdf(disagreements, n, 1.0 - target))


def _lower_bound(agreements: int, n: int, confidence: float) -> float:
    """One-sided exact (Clopper-Pearson) lower bound of an agreement rate."""
    if agreements == 0:
        return 0.0
    return float(stats.beta.ppf(1.0 - confidence, agreements, n - agreements + 1))


def _two_sided(agreements: int, n: int, confidence: float) -> tuple[float, float]:
    ci = stats.binomtest(agreements, n).proportion_ci(confidence_level=confidence, method="exact")
    return float(ci.low), float(ci.high)


def labels_needed(disagreement_rate: float, kept_share: float, target: float,
                  confidence: float) -> int | None:
    """Labelled items needed for a threshold to be rejected, at an expected disagreement rate.

    With ``N`` labels the threshold keeps about ``kept_share·N`` of them, of which about
    ``disagreement_rate`` disagree (rounded to whole items); the answer is the smallest ``N``
    whose expected counts reject H0 (a planning figure: the realised counts vary).

    Returns:
        ``N``, or None when ``disagreement_rate >= 1 - target`` (no amount of labels helps) or
        more than :data:`MAX_LABELS` would be needed.
    """
    _check_levels(target, confidence)
    if disagreement_rate >= 1.0 - target or kept_share <= 0.0:
        return None
    # The smallest N, searched in growing blocks in order (the first hit of a block is the first
    # overall): most answers are in the hundreds, and one binomial CDF over all MAX_LABELS
    # candidates costs tens of milliseconds per call (a threshold walk makes one per threshold).
    start = 1
    for stop in (1_000, 10_000, MAX_LABELS):
        total = np.arange(start, stop + 1)
        kept = np.floor(kept_share * total + 1e-9).astype(np.int64)
        k = np.round(disagreement_rate * kept).astype(np.int64)
        ok = (kept > 0) & (stats.binom.cdf(k, np.maximum(kept, 1), 1.0 - target)
                           <= 1.0 - confidence)
        hits = np.flatnonzero(ok)
        if hits.size:
            return int(total[hits[0]])
        start = stop + 1
    return None


def fixed_sequence_threshold(
    labelled_confidence: Sequence[float] | npt.NDArray[np.float64],
    agrees: Sequence[bool] | npt.NDArray[np.bool_],
    run_confidence: Sequence[float] | npt.NDArray[np.float64],
    *,
    target: float = 0.90,
    confidence: float = 0.95,
    weights: Sequence[float] | npt.NDArray[np.float64] | None = None,
) -> ThresholdResult:
    """Choose the escalation threshold by fixed-sequence testing with exact binomial bounds.

    Args:
        labelled_confidence: The confidence of each lawyer-labelled item.
        agrees: Whether the judges agree with the lawyers on that item, same order.
        run_confidence: The confidence of every item the threshold will be applied to (the
            run's items), for the coverage.
        target: The agreement to guarantee on the kept items (0.90).
        confidence: The probability of the guarantee (0.95; each test runs at 1 - confidence).
        weights: Each labelled item's sampling weight (a stratified sample at unequal rates);
            None: a simple random or self-weighting sample. Weighted counts are Kish effective
            counts (module docstring): ``n_kept`` and ``disagreements`` are then effective.

    Returns:
        A :class:`ThresholdResult`; its ``steps`` list every test the walk made.

    Raises:
        StatisticsError: levels outside (0, 1), lengths that differ, a NaN confidence, or a
        weight that is not positive.
    """
    _check_levels(target, confidence)
    conf = np.asarray(labelled_confidence, dtype=np.float64)
    good = np.asarray(agrees, dtype=bool)
    run = np.asarray(run_confidence, dtype=np.float64)
    if conf.shape != good.shape:
        raise StatisticsError(f"{conf.size} confidences for {good.size} agreements",
                              fix="pass one confidence per labelled item")
    if np.isnan(conf).any() or np.isnan(run).any():
        raise StatisticsError("a confidence is NaN", fix="compute a confidence for every item")
    start_n = min_items_zero_failures(target, confidence)
    grid = np.unique(conf)[::-1]  # descending: the most confident threshold first
    n_kept, k_kept = _kept_counts(conf, good, grid, weights)
    steps: list[SequenceStep] = []
    chosen: int | None = None
    for i in np.flatnonzero(n_kept >= start_n):
        p = _p_value(int(k_kept[i]), int(n_kept[i]), target)
        rejected = p <= 1.0 - confidence
        steps.append(SequenceStep(float(grid[i]), int(n_kept[i]), int(k_kept[i]), p, rejected))
        if not rejected:
            break
        chosen = int(i)
    base = {"target": target, "confidence": confidence, "n_labelled": int(conf.size),
            "n_items": int(run.size), "min_start": start_n, "steps": steps}
    if chosen is not None:
        t, n, k = float(grid[chosen]), int(n_kept[chosen]), int(k_kept[chosen])
        kept_items = int((run >= t).sum())
        return ThresholdResult(
            **base, guaranteed=True, threshold=t,  # type: ignore[arg-type]
            coverage=kept_items / run.size if run.size else 0.0, n_kept_items=kept_items,
            n_kept_labelled=n, disagreements=k, observed_agreement=(n - k) / n,
            agreement_ci=_two_sided(n - k, n, confidence),
            agreement_lower=_lower_bound(n - k, n, confidence))
    return _not_guaranteed(base, grid, n_kept, k_kept, target, confidence)


def _kept_counts(conf: npt.NDArray[np.float64], good: npt.NDArray[np.bool_],
                 grid: npt.NDArray[np.float64],
                 weights: Sequence[float] | npt.NDArray[np.float64] | None,
                 ) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]]:
    """Kept labelled items and their disagreements at each threshold: plain counts, or with
    ``weights`` Kish effective counts rounded the conservative way (module docstring)."""
    if weights is None:
        return (np.array([(conf >= t).sum() for t in grid], dtype=np.int64),
                np.array([(~good[conf >= t]).sum() for t in grid], dtype=np.int64))
    w = np.asarray(weights, dtype=np.float64)
    if w.shape != conf.shape or not np.all(np.isfinite(w)) or np.any(w <= 0):
        raise StatisticsError(f"{w.size} weights for {conf.size} labelled items, or a weight "
                              "that is not a positive number",
                              fix="pass one positive sampling weight per labelled item")
    n_out, k_out = [], []
    for t in grid:
        kept = conf >= t
        wk = w[kept]
        n_eff = int(np.floor(wk.sum() ** 2 / (wk ** 2).sum() + 1e-9))
        rate = float(wk[~good[kept]].sum() / wk.sum())
        n_out.append(n_eff)
        k_out.append(min(n_eff, int(np.ceil(rate * n_eff - 1e-9))))
    return np.array(n_out, dtype=np.int64), np.array(k_out, dtype=np.int64)


def _not_guaranteed(base: dict[str, object], grid: np.ndarray, n_kept: np.ndarray,
                    k_kept: np.ndarray, target: float, confidence: float) -> ThresholdResult:
    """No threshold rejected: the best single bound, and the labels the best threshold needs."""
    best, best_t = None, None
    needed: int | None = None
    n_total = int(base["n_labelled"])  # type: ignore[call-overload]
    for t, n, k in zip(grid, n_kept, k_kept, strict=True):
        lower = _lower_bound(int(n - k), int(n), confidence)
        if best is None or lower > best:
            best, best_t = lower, float(t)
        want = labels_needed(float(k) / float(n), float(n) / n_total, target, confidence)
        if want is not None and (needed is None or want < needed):
            needed = want
    return ThresholdResult(
        **base, guaranteed=False, threshold=None, coverage=0.0,  # type: ignore[arg-type]
        n_kept_items=0, n_kept_labelled=0, disagreements=0, observed_agreement=None,
        agreement_ci=None, agreement_lower=None, best_achievable=best, best_threshold=best_t,
        labels_needed=needed)
