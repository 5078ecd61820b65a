"""The recalibration verdict: ``recalibrate`` with every reason that fired, ``ok``, or ``insufficient``.

A lawyer reads "no" as "the judge is fine", so the verdict is never a bare yes/no. Per rubric and
judge (and for the ensemble), with at least ``min_labels`` labelled items:

* ``divergence``: |mean signed divergence| above ``divergence`` points (the seed's 0.5 rule);
* ``kappa``: quadratic-weighted kappa below ``min_kappa`` (the message says whether even the upper
  bound of its 95% CI is below it); raw agreement is reported beside it, since raw agreement
  overstates chance-corrected agreement;
* ``loa``: Bland-Altman 95% limits of agreement outside ±``max_loa`` points;
* ``false_pass`` (pass/fail): the share of the lawyers' fails that the judge passed above
  ``max_false_pass``, with its Clopper-Pearson CI.

Fewer labelled items than ``min_labels``: ``insufficient`` (no verdict either way).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, fields

from legal_judge.calibration.robust import paradox_note
from legal_judge.calibration.schema import Reason
from legal_judge.errors import ConfigError

__all__ = [
    "SEVERITY",
    "Thresholds",
    "decide",
    "divergence_reason",
    "false_pass_reason",
    "headline",
    "kappa_reason",
    "loa_reason",
]

# Worst first: a wrong pass ships a bad answer; weak agreement makes every score doubtful; wide
# limits make single scores unreliable; a mean shift is the one a correction fixes best.
SEVERITY = ("false_pass", "kappa", "loa", "divergence")


@dataclass(frozen=True)
class Thresholds:
    """The settings a verdict is decided with (the CLI options of ``calibrate compare``)."""

    divergence: float = 0.5
    min_labels: int = 20
    min_kappa: float = 0.6
    max_loa: float = 1.5
    max_false_pass: float = 0.1

    def __post_init__(self) -> None:
        """A threshold outside its range (``--threshold nan``, ``--max-false-pass 2``) would
        silence its rule and store a verdict decided by nothing: refused before anything runs."""
        bad = []
        for f in fields(self):
            flag, low, high = _RANGES[f.name]
            value = getattr(self, f.name)
            if not math.isfinite(value) or value < low or (high is not None and value > high):
                rule = f"from {low:g} to {high:g}" if high is not None else f"at least {low:g}"
                bad.append(f"{flag} {value:g}: must be a number {rule}")
        if bad:
            raise ConfigError("bad calibration threshold: " + "; ".join(bad),
                              code="calibration-thresholds",
                              fix="drop the flag to use its default (" + ", ".join(
                                  f"{_RANGES[f.name][0]} {f.default:g}" for f in fields(Thresholds))
                              + ")")


#: Each threshold's command-line flag and its range (low, high; None: no upper bound).
_RANGES: dict[str, tuple[str, float, float | None]] = {
    "divergence": ("--threshold", 0.0, None), "min_labels": ("--min-labels", 1, None),
    "min_kappa": ("--min-kappa", -1.0, 1.0), "max_loa": ("--max-loa", 0.0, None),
    "max_false_pass": ("--max-false-pass", 0.0, 1.0)}


def _pct(x: float) -> str:
    return f"{x:.0%}"


def divergence_reason(mean: float | None, th: Thresholds) -> Reason | None:
    """The seed's rule: |mean divergence| > ``th.divergence`` points."""
    if mean is None or abs(mean) <= th.divergence:
        return None
    side = "above" if mean > 0 else "below"
    return Reason(code="divergence", value=mean, threshold=th.divergence,
                  message=f"mean divergence {mean:+.2f} points (the judge scores {side} the "
                          f"lawyers) exceeds ±{th.divergence:g}")


def kappa_reason(kappa: float | None, ci: tuple[float, float] | None, raw: float | None,
                 th: Thresholds, *, kind: str = "quadratic-weighted kappa",
                 robust: tuple[str, float | None] | None = None) -> Reason | None:
    """Chance-corrected agreement below ``th.min_kappa``.

    ``robust`` is ``(name, value)`` of the prevalence-robust coefficient beside kappa (AC1 or
    AC2); when raw agreement is high and it is not low, the message says in one sentence that
    the kappa paradox is the likely cause.
    """
    if kappa is None or kappa >= th.min_kappa:
        return None
    where = ""
    if ci is not None:
        where = (f"; even its 95% CI's upper bound {ci[1]:.2f} is below it" if ci[1] < th.min_kappa
                 else f"; its 95% CI reaches {ci[1]:.2f}")
    beside = f"; raw agreement {_pct(raw)} overstates it" if raw is not None else ""
    paradox = paradox_note(*robust, raw, th.min_kappa) if robust is not None else None
    if paradox is not None:
        beside = f". Note: {paradox}"
    return Reason(code="kappa", value=kappa, threshold=th.min_kappa,
                  message=f"{kind} {kappa:.2f} < {th.min_kappa:g}{where}{beside}")


def loa_reason(lower: float | None, upper: float | None, th: Thresholds) -> Reason | None:
    """Bland-Altman limits of agreement wider than ±``th.max_loa``."""
    if lower is None or upper is None or (lower >= -th.max_loa and upper <= th.max_loa):
        return None
    widest = max(abs(lower), abs(upper))
    return Reason(code="loa", value=widest, threshold=th.max_loa,
                  message=f"limits of agreement {lower:+.2f} to {upper:+.2f} points exceed "
                          f"±{th.max_loa:g}: a single score can be {widest:.1f} points off")


def false_pass_reason(passed: int, fails: int, ci: tuple[float, float] | None,
                      th: Thresholds) -> Reason | None:
    """The judge passed more than ``th.max_false_pass`` of the answers the lawyers failed."""
    if fails == 0 or passed / fails <= th.max_false_pass:
        return None
    rate = passed / fails
    band = f" (95% CI {_pct(ci[0])} to {_pct(ci[1])})" if ci is not None else ""
    return Reason(code="false_pass", value=rate, threshold=th.max_false_pass,
                  message=f"false-pass rate {_pct(rate)}: passed {passed} of {fails} answers the "
                          f"lawyers failed{band}, above {_pct(th.max_false_pass)}")


def decide(n: int, reasons: list[Reason | None], th: Thresholds) -> tuple[str, list[Reason],
                                                                         str | None]:
    """``(verdict, reasons that fired, note)`` for ``n`` labelled items."""
    if n < th.min_labels:
        return "insufficient", [], (f"{n} labelled item{'s' if n != 1 else ''} (fewer than "
                                    f"{th.min_labels}): no verdict either way")
    fired = [r for r in reasons if r is not None]
    return ("recalibrate" if fired else "ok"), fired, None


def _plain(rubric: str, r: Reason, counts: tuple[int, int] | None) -> str:
    if r.code == "false_pass" and counts is not None:
        return f"the judges passed {counts[0]} of {counts[1]} answers the lawyers failed"
    if r.code == "kappa":
        how = "no better than chance" if r.value <= 0.2 else "weak"
        return (f"on {rubric} the judges' agreement with the lawyers is {how} "
                f"(quadratic-weighted kappa {r.value:.2f}; {r.threshold:g} needed)")
    if r.code == "loa":
        return (f"on {rubric} a judge's score can be {r.value:.1f} points away from the "
                f"lawyers' (limits of agreement beyond ±{r.threshold:g})")
    side = "above" if r.value > 0 else "below"
    return f"on {rubric} the judges score {abs(r.value):.2f} points {side} the lawyers on average"


def headline(findings: list[tuple[str, Reason, tuple[int, int] | None]]) -> str | None:
    """The worst finding in plain words: the most severe kind first, then the largest excess.

    Args:
        findings: ``(rubric or "pass/fail", reason, (passed, lawyer fails) for false_pass)``.
    """
    if not findings:
        return None

    def rank(f: tuple[str, Reason, tuple[int, int] | None]) -> tuple[int, float]:
        r = f[1]
        excess = (r.threshold - r.value) if r.code == "kappa" else abs(r.value) - r.threshold
        return SEVERITY.index(r.code), -excess

    rubric, reason, counts = min(findings, key=rank)
    return _plain(rubric, reason, counts)
