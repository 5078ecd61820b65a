"""The tags and metadata by which the Langfuse UI filters traces (pure; no langfuse import).

Every trace scored by a simulated judge carries the ``simulated`` tag, so its figures are never
read as a real judge's; an item's trace also carries the system under test and the run's
``--release`` name, as tags (``sut:<model>``, ``release:<name>``) to filter by and as metadata.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from legal_judge.benchmark.summary import scored_by_simulated

__all__ = ["RELEASE_KEY", "SIMULATED_TAG", "run_labels", "simulated_labels"]

#: The run config's key of ``run --release NAME``.
RELEASE_KEY = "release"
#: The tag of every trace scored by a simulated judge.
SIMULATED_TAG = "simulated"


def simulated_labels(simulated: bool | None) -> tuple[list[str], dict[str, str]]:
    """The ``simulated`` tag and metadata of a trace whose judge is simulated (else nothing)."""
    return ([SIMULATED_TAG], {"simulated": "true"}) if simulated else ([], {})


def run_labels(run: Mapping[str, Any],
               item: Mapping[str, Any]) -> tuple[list[str], dict[str, str]]:
    """The tags and metadata of one item's trace.

    Args:
        run: The run row (its ``config`` decoded).
        item: The stored item.

    Returns:
        The tags (``simulated`` when the run's ensemble has a simulated judge, ``sut:<model>``
        for the ensemble's system under test or else the item's, ``release:<name>``) and the
        same facts as metadata (``simulated``, ``system_under_test``, ``release``), only those
        that apply.
    """
    config = run.get("config") or {}
    tags, meta = simulated_labels(scored_by_simulated(config))
    sut = (config.get("ensemble") or {}).get("system_under_test") or item.get("system_under_test")
    if sut:
        tags.append(f"sut:{sut}")
        meta["system_under_test"] = str(sut)
    release = config.get(RELEASE_KEY)
    if release:
        tags.append(f"release:{release}")
        meta["release"] = str(release)
    return tags, meta
