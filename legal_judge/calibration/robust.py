"""Prevalence-robust agreement for ``calibrate compare``: Gwet's AC1/AC2 and PABAK beside kappa.

Kappa's chance term comes from the raters' own marginals, so when nearly every answer passes (or
every score is a 4) kappa falls towards zero although judge and lawyers almost always agree: the
"kappa paradox". AC1 (pass/fail, nominal), AC2 (rubric scores, quadratic weights: the weights of
the reported weighted kappa) and PABAK (pass/fail) do not collapse that way. They are reported,
with their CIs, beside kappa and raw agreement; the verdict's rules are unchanged (kappa stays the
rule), and the kappa reason says in one sentence when the paradox is the likely cause.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from typing import Any

from legal_judge.stats import RobustAgreement, StatisticsError, gwet_ac, pabak

__all__ = ["PARADOX_MIN_AGREEMENT", "ordinal_fields", "paradox_note", "pass_fail_fields"]

#: Raw agreement from which a low kappa beside a high AC is called the kappa paradox.
PARADOX_MIN_AGREEMENT = 0.8


def _fields(prefix: str, result: RobustAgreement | None) -> dict[str, Any]:
    if result is None:
        return {prefix: None, f"{prefix}_ci95": None}
    return {prefix: result.value, f"{prefix}_ci95": result.ci}


def _safe(fn: Any, *args: Any, **kwargs: Any) -> RobustAgreement | None:
    try:
        return fn(*args, **kwargs)
    except StatisticsError:
        return None  # fewer than two complete pairs: the coefficient is not reported


def pass_fail_fields(judge: Sequence[bool], lawyers: Sequence[bool]) -> dict[str, Any]:
    """``ac1``, ``ac1_ci95``, ``pabak``, ``pabak_ci95`` of a pass/fail comparison (None when
    fewer than two items)."""
    labels: list[Hashable] = [False, True]
    return {**_fields("ac1", _safe(gwet_ac, judge, lawyers, labels=labels)),
            **_fields("pabak", _safe(pabak, judge, lawyers, labels=labels))}


def ordinal_fields(judge: Sequence[Hashable], lawyers: Sequence[Hashable],
                   labels: Sequence[Hashable]) -> dict[str, Any]:
    """``ac2`` and ``ac2_ci95`` (quadratic weights over the full scale ``labels``)."""
    return _fields("ac2", _safe(gwet_ac, judge, lawyers, weights="quadratic", labels=labels))


def paradox_note(name: str, robust: float | None, raw: float | None,
                 min_kappa: float) -> str | None:
    """One sentence when kappa is low only because one category dominates, else None."""
    if robust is None or raw is None or raw < PARADOX_MIN_AGREEMENT or robust < min_kappa:
        return None
    return (f"raw agreement is high ({raw:.0%}) but one category dominates, which drags kappa "
            f"down (the kappa paradox); {name} {robust:.2f}, which does not collapse that way, "
            "says the agreement is real")
