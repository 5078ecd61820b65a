"""Metrics of pairwise (A vs B) judges: position consistency, preference fairness, stability.

Definitions follow Shi et al., "Judging the Judges" (arXiv 2406.07791), as summarised in
``ref/research-anchors.md`` section 2.2.

Verdict convention: every verdict names the winner by *identity*, ``"A"``, ``"B"`` or ``"tie"``,
where ``A`` is the answer shown first in the original order. The caller maps the swapped-order
verdict back to identities, so a judge that always picks the first slot yields ``"A"`` for the
original order and ``"B"`` for the swapped one (primacy); always picking the second slot yields
``"B"`` then ``"A"`` (recency).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Hashable, Sequence
from dataclasses import dataclass

from legal_judge.stats._common import StatisticsError
from legal_judge.stats.proportions import BinomialResult, binomial_first_position

__all__ = [
    "PositionResult",
    "position_consistency",
    "preference_fairness",
    "repetition_stability",
]

_VERDICTS = ("A", "B", "tie")


@dataclass(frozen=True, slots=True)
class PositionResult:
    """Position metrics over ``n`` swapped pairs.

    ``n_other_inconsistent`` counts flips that involve a tie (neither primacy nor recency).
    ``first_position`` tests the first-slot rate among the primacy/recency pairs.
    """

    n: int
    n_consistent: int
    position_consistency: float
    conflict_rate: float
    n_primacy: int
    n_recency: int
    n_other_inconsistent: int
    preference_fairness: float
    first_position: BinomialResult


def _checked(verdicts_ab: Sequence[str], verdicts_ba: Sequence[str]) -> list[tuple[str, str]]:
    if len(verdicts_ab) != len(verdicts_ba):
        raise StatisticsError(
            f"verdict lists differ in length ({len(verdicts_ab)} vs {len(verdicts_ba)})",
            fix="pass the original-order and swapped-order verdict of each pair at the same index",
        )
    if not verdicts_ab:
        raise StatisticsError("no swapped pairs", fix="judge at least one pair in both orders")
    bad = sorted({v for v in (*verdicts_ab, *verdicts_ba) if v not in _VERDICTS})
    if bad:
        raise StatisticsError(
            f"unknown verdict value(s): {', '.join(map(repr, bad))}",
            fix="map verdicts to 'A', 'B' or 'tie' by answer identity (A = first in original order)",
        )
    return list(zip(verdicts_ab, verdicts_ba, strict=True))


def _counts(pairs: list[tuple[str, str]]) -> tuple[int, int, int]:
    consistent = sum(1 for ab, ba in pairs if ab == ba)
    primacy = sum(1 for ab, ba in pairs if ab == "A" and ba == "B")
    recency = sum(1 for ab, ba in pairs if ab == "B" and ba == "A")
    return consistent, primacy, recency


def _pf(primacy: int, recency: int) -> float:
    # Shi et al. min-max normalise (n_recency - n_primacy) over its achievable range
    # [-n_flips, +n_flips]; that reduces to this ratio. No position-driven flip is fair: 0.
    flips = primacy + recency
    return 0.0 if flips == 0 else (recency - primacy) / flips


def preference_fairness(verdicts_ab: Sequence[str], verdicts_ba: Sequence[str]) -> float:
    """Preference fairness PF in [-1, 1]: 0 fair, < 0 favours the first slot, > 0 the second.

    Args:
        verdicts_ab: Winner by identity with the original order.
        verdicts_ba: Winner by identity with the swapped order.

    Returns:
        ``(n_recency - n_primacy) / (n_recency + n_primacy)``, 0.0 when there is no such flip.
    """
    _, primacy, recency = _counts(_checked(verdicts_ab, verdicts_ba))
    return _pf(primacy, recency)


def position_consistency(verdicts_ab: Sequence[str], verdicts_ba: Sequence[str]) -> PositionResult:
    """Position consistency (share of pairs whose winner survives the swap) and related figures.

    Args:
        verdicts_ab: Winner by identity (``"A"``, ``"B"``, ``"tie"``) with the original order.
        verdicts_ba: Winner by identity with the swapped order.

    Returns:
        A :class:`PositionResult` with PC, conflict rate ``1 - PC``, PF and the exact binomial test
        of the first-position rate among position-driven flips.
    """
    pairs = _checked(verdicts_ab, verdicts_ba)
    consistent, primacy, recency = _counts(pairs)
    n = len(pairs)
    pc = consistent / n
    return PositionResult(
        n=n,
        n_consistent=consistent,
        position_consistency=pc,
        conflict_rate=1.0 - pc,
        n_primacy=primacy,
        n_recency=recency,
        n_other_inconsistent=n - consistent - primacy - recency,
        preference_fairness=_pf(primacy, recency),
        first_position=binomial_first_position(primacy, primacy + recency),
    )


def repetition_stability(repeats: Sequence[Sequence[Hashable]]) -> float:
    """Repetition stability RS: mean share of the modal verdict over k identical re-queries.

    Args:
        repeats: One inner sequence per item holding its k verdicts (k >= 1; k may differ).

    Returns:
        RS in [1/k, 1]; 1.0 means every re-query repeated the same verdict.
    """
    if not repeats:
        raise StatisticsError("no repeated verdicts", fix="re-query at least one item k times")
    shares = []
    for i, verdicts in enumerate(repeats):
        if not verdicts:
            raise StatisticsError(
                f"item {i} has no verdicts", fix="drop items that were never judged"
            )
        shares.append(Counter(verdicts).most_common(1)[0][1] / len(verdicts))
    return sum(shares) / len(shares)
