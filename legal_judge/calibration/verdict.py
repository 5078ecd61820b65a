"""The recalibration verdict: ``recalibrate`` with every reason that fired, ``ok``, or ``insufficient``.

A lawyer reads "no" as "the judge is fine", so the verdict is never a bare yes/no. The thresholds
are the policy's ``[calibration]`` section (:class:`~legal_judge.policy.CalibrationPolicy`). Per
rubric and judge (and for the ensemble), ``recalibrate`` when one of these fires:

* ``divergence``: |mean signed divergence| above ``divergence`` points (the seed's 0.5 rule);
* ``kappa``: quadratic-weighted kappa below ``min_kappa`` (the message says whether even the upper
  bound of its 95% CI is below it); raw agreement is reported beside it, since raw agreement
  overstates chance-corrected agreement;
* ``loa``: Bland-Altman 95% limits of agreement outside ±``max_loa`` points;
* ``false_pass`` (pass/fail): the share of the lawyers' fails that the judge passed above
  ``max_false_pass``, with its Clopper-Pearson CI.

The burden of proof is asymmetric: a reason to recalibrate counts from ``min_labels_recalibrate``
labelled items, but ``ok`` needs ``min_labels`` (the seed's sample of 50, the number a gate relying
on the calibration needs too). Fewer labels than the verdict would need: ``insufficient``, which
says how many an ``ok`` takes.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from legal_judge.calibration.robust import paradox_note
from legal_judge.calibration.schema import Reason

if TYPE_CHECKING:
    from legal_judge.policy import CalibrationPolicy

__all__ = [
    "SEVERITY",
    "decide",
    "divergence_reason",
    "false_pass_reason",
    "headline",
    "kappa_reason",
    "labels_rule",
    "loa_reason",
]

# Worst first: a wrong pass ships a bad answer; weak agreement makes every score doubtful; wide
# limits make single scores unreliable; a mean shift is the one a correction fixes best.
SEVERITY = ("false_pass", "kappa", "loa", "divergence")


def _pct(x: float) -> str:
    return f"{x:.0%}"


def divergence_reason(mean: float | None, th: CalibrationPolicy) -> Reason | None:
    """The seed's rule: |mean divergence| > ``th.divergence`` points."""
    if mean is None or abs(mean) <= th.divergence:
        return None
    side = "above" if mean > 0 else "below"
    return Reason(code="divergence", value=mean, threshold=th.divergence,
                  message=f"mean divergence {mean:+.2f} points (the judge scores {side} the "
                          f"lawyers) exceeds ±{th.divergence:g}")


def kappa_reason(kappa: float | None, ci: tuple[float, float] | None, raw: float | None,
                 th: CalibrationPolicy, *, kind: str = "quadratic-weighted kappa",
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


def loa_reason(lower: float | None, upper: float | None, th: CalibrationPolicy) -> Reason | None:
    """Bland-Altman limits of agreement wider than ±``th.max_loa``."""
    if lower is None or upper is None or (lower >= -th.max_loa and upper <= th.max_loa):
        return None
    widest = max(abs(lower), abs(upper))
    return Reason(code="loa", value=widest, threshold=th.max_loa,
                  message=f"limits of agreement {lower:+.2f} to {upper:+.2f} points exceed "
                          f"±{th.max_loa:g}: a single score can be {widest:.1f} points off")


def false_pass_reason(passed: int, fails: int, ci: tuple[float, float] | None,
                      th: CalibrationPolicy) -> Reason | None:
    """The judge passed more than ``th.max_false_pass`` of the answers the lawyers failed."""
    if fails == 0 or passed / fails <= th.max_false_pass:
        return None
    rate = passed / fails
    band = f" (95% CI {_pct(ci[0])} to {_pct(ci[1])})" if ci is not None else ""
    return Reason(code="false_pass", value=rate, threshold=th.max_false_pass,
                  message=f"false-pass rate {_pct(rate)}: passed {passed} of {fails} answers the "
                          f"lawyers failed{band}, above {_pct(th.max_false_pass)}")


def decide(n: int, reasons: list[Reason | None], th: CalibrationPolicy) -> tuple[str, list[Reason],
                                                                         str | None]:
    """``(verdict, reasons that fired, note)`` for ``n`` labelled items.

    ``recalibrate`` needs ``th.recalibrate_floor`` items and a reason; ``ok`` needs
    ``th.min_labels`` items and none: an ``ok`` on fewer would be a green without its evidence.
    """
    items = f"{n} labelled item{'s' if n != 1 else ''}"
    if n < th.recalibrate_floor:
        return "insufficient", [], (f"{items} (fewer than {th.recalibrate_floor}): no verdict "
                                    "either way")
    fired = [r for r in reasons if r is not None]
    if fired:
        return "recalibrate", fired, None
    if n < th.min_labels:
        return "insufficient", [], (f"{items}: no reason to recalibrate, but an ok needs "
                                    f"{th.min_labels} (calibration.min_labels)")
    return "ok", [], None


def labels_rule(min_labels: int, min_labels_recalibrate: int | None) -> str:
    """The labelled items each verdict needs, as the terminal and the report say it (None:
    a calibration stored before the policy held its thresholds, one floor for both)."""
    if min_labels_recalibrate is None:
        return f"at least {min_labels} labelled items for any verdict"
    return f"an ok needs {min_labels} labelled items, a recalibrate {min_labels_recalibrate}"


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
