"""Proportional allocation of a sample across strata (largest remainder)."""

from __future__ import annotations

import math

__all__ = ["proportional_allocation"]


def proportional_allocation(sizes: dict[str, int], m: int) -> dict[str, int]:
    """Split ``m`` draws across strata in proportion to their sizes (Hamilton's method).

    Each stratum gets the floor of its quota, then the largest remainders (ties by stratum name)
    get one more until ``min(m, total)`` draws are placed; no stratum gets more than its size.

    Args:
        sizes: Stratum name -> number of units in it.
        m: Draws to place.

    Returns:
        Stratum name -> draws, in the order of ``sizes``.
    """
    total = sum(sizes.values())
    if total == 0 or m <= 0:
        return dict.fromkeys(sizes, 0)
    quotas = {k: m * v / total for k, v in sizes.items()}
    alloc = {k: min(sizes[k], math.floor(q)) for k, q in quotas.items()}
    order = sorted(sizes, key=lambda k: (-(quotas[k] - math.floor(quotas[k])), k))
    target = min(m, total)
    while sum(alloc.values()) < target:
        for k in order:
            if sum(alloc.values()) >= target:
                break
            if alloc[k] < sizes[k]:
                alloc[k] += 1
    return alloc
