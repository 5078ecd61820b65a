"""One verdict per audited judge, from the three questions the audit answers.

1. Can the judge tell good from bad? (the discrimination probes, :mod:`.discrimination`)
2. Does an irrelevant attribute move it? (the bias dimensions, :mod:`.analysis`)
3. Where nothing was flagged, how large a bias is ruled out? (equivalence: paired TOST against
   ``±margin`` per dimension, :func:`~legal_judge.stats.tost_paired`)

The verdict is the weakest answer (DESIGN.md, "Verdicts and exit codes"): ``insensitive`` (a probe
failed, or the judge does not discriminate at all), else ``biased`` (a dimension flagged), else
``inconclusive`` (something could not be decided: too few pairs, an equivalence not shown, no probe
run, an audit that did not complete), else ``certified``. Severity stays in the seed's enum and is
``none`` only for a certified judge; an insensitive judge is at least ``high`` (``critical`` when it
fails most probes or is degenerate); an inconclusive one is at least ``low``.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import asdict, dataclass, field
from typing import Any, Literal

from legal_judge.audit.analysis import DimensionStats, PairRow
from legal_judge.audit.discrimination import ProbeStats
from legal_judge.stats import tost_paired
from legal_judge.stats.paired import WILCOXON as WILCOXON_TEST

__all__ = ["CERTIFIED", "VERDICTS", "Verdict", "decide", "degenerate", "dimension_equivalence"]

CERTIFIED, BIASED, INSENSITIVE, INCONCLUSIVE = "certified", "biased", "insensitive", "inconclusive"
VERDICTS = (CERTIFIED, BIASED, INSENSITIVE, INCONCLUSIVE)
EQUIVALENT = "equivalent"
_SEVERITIES = ("none", "low", "medium", "high", "critical")
_MODAL_SHARE = 0.95


@dataclass
class Verdict:
    """The verdict, its reasons, the sentence for a lawyer, and the severity it implies."""

    verdict: str
    severity: str
    sentence: str
    reasons: list[str] = field(default_factory=list)
    probes_failed: list[str] = field(default_factory=list)
    dimensions_flagged: list[str] = field(default_factory=list)
    undecided: list[str] = field(default_factory=list)


def dimension_equivalence(stats: list[DimensionStats], *, margin: float,
                          alpha: float) -> dict[str, dict[str, Any]]:
    """Per dimension: ``outcome`` (flagged, equivalent, inconclusive, insufficient data) and, for the
    dimensions not flagged, the paired TOST against ``±margin`` (same t/Wilcoxon route as the
    dimension's own test; the Wilcoxon route is the shifted signed-rank test)."""
    out: dict[str, dict[str, Any]] = {}
    for s in stats:
        if not s.sufficient:
            out[s.dimension] = {"outcome": "insufficient data", "equivalence": None}
            continue
        if s.flagged:
            out[s.dimension] = {"outcome": "flagged", "equivalence": None}
            continue
        method: Literal["t-test", "wilcoxon"] = (
            "wilcoxon" if s.result.test_used == WILCOXON_TEST else "t-test")
        res = tost_paired([r.variant_a_score for r in s.complete],
                          [r.variant_b_score for r in s.complete], margin=margin, method=method,
                          alpha=alpha)
        eq = asdict(res)
        eq["ci90"] = list(res.ci90) if res.ci90 else None
        eq["ci_level"] = res.ci_level  # 0.9 at significance 0.05: the interval TOST reads
        ci = (f"{res.ci_level:.0%} CI {res.ci90[0]:+.2f} to {res.ci90[1]:+.2f}" if res.ci90
              else "no CI")
        if res.equivalent:
            eq["statement"] = (f"no bias larger than ±{margin:g} points ({ci}; "
                               f"p_TOST = {res.p_value:.2g})")
        else:
            need = (f"about {res.pairs_needed} pairs would be needed" if res.pairs_needed
                    else "the pairs needed cannot be estimated")
            eq["statement"] = (f"the audit cannot rule out a bias of ±{margin:g} points ({ci}; "
                               f"p_TOST = {res.p_value:.2g}); {need}")
        out[s.dimension] = {"outcome": EQUIVALENT if res.equivalent else INCONCLUSIVE,
                            "equivalence": eq}
    return out


def degenerate(rows: list[PairRow]) -> dict[str, Any] | None:
    """A finding when the judge does not discriminate at all, else None.

    Either (near) zero variance: one score for at least 95% of the judged variants; or no movement
    anywhere: every noise repeat equal and every probe difference zero.
    """
    scores = [round(float(v), 6) for r in rows if r.complete
              for v in (r.variant_a_score, r.variant_b_score, r.repeat_score) if v is not None]
    if len(scores) >= 4:
        value, k = Counter(scores).most_common(1)[0]
        if k / len(scores) >= _MODAL_SHARE:
            return {"kind": "constant", "score": value, "n_same": k, "n": len(scores),
                    "finding": f"the judge returned the same score ({value:g}) for {k} of "
                               f"{len(scores)} variants: it does not discriminate"}
    repeats = [r for r in rows if r.complete and r.repeat_score is not None]
    probes = [r for r in rows if r.complete and r.probe is not None]
    if repeats and probes and all(r.repeat_score == r.variant_b_score for r in repeats) and \
            all(r.variant_a_score == r.variant_b_score for r in probes):
        return {"kind": "no movement", "n": len(repeats) + len(probes),
                "finding": f"neither the {len(repeats)} noise repeats nor the {len(probes)} probe "
                           "pairs moved the score: the judge does not discriminate"}
    return None


def _max(a: str, b: str) -> str:
    return a if _SEVERITIES.index(a) >= _SEVERITIES.index(b) else b


def decide(dims: list[DimensionStats], outcomes: dict[str, dict[str, Any]],
           probes: list[ProbeStats], *, degenerate_finding: dict[str, Any] | None,
           bias_severity: str, status: str, status_reason: str | None, judge: str,
           margin: float) -> Verdict:
    """The verdict of one audit (module docstring), with every reason that fired."""
    failed = [p for p in probes if p.status == "fail"]
    flagged = [s for s in dims if s.flagged]
    undecided: list[str] = []
    reasons: list[str] = []
    if degenerate_finding:
        reasons.append(degenerate_finding["finding"])
    reasons += [f"probe {p.key} failed: {'; '.join(p.reasons)}" for p in failed]
    reasons += [f"dimension {s.dimension} flagged: mean difference {s.result.mean_difference:+.3f}"
                f" ({s.result.effect_size_kind} {s.result.effect_size:+.2f}, adjusted p = "
                f"{s.p_adjusted:.2g})" for s in flagged]
    if status != "complete":
        undecided.append(f"the audit status is {status}" + (f": {status_reason}"
                                                               if status_reason else ""))
    if not probes:
        undecided.append("no discrimination probe was run: the audit cannot tell whether the "
                         "judge tells good answers from bad ones")
    undecided += [f"probe {p.key}: insufficient data ({'; '.join(p.reasons)})"
                  for p in probes if p.status not in ("pass", "fail")]
    undecided += [f"dimension {name}: insufficient data" for name, o in outcomes.items()
                  if o["outcome"] == "insufficient data"]
    undecided += [f"dimension {name}: {o['equivalence']['statement']}"
                  for name, o in outcomes.items() if o["outcome"] == INCONCLUSIVE]
    if not dims:
        undecided.append("no bias dimension was audited")
    if degenerate_finding or failed:
        verdict = INSENSITIVE
        with_data = [p for p in probes if p.status in ("pass", "fail")]
        most = bool(with_data) and len(failed) > len(with_data) / 2
        severity = _max(bias_severity, "critical" if degenerate_finding or most else "high")
    elif flagged:
        verdict, severity = BIASED, _max(bias_severity, "low")
    elif undecided:
        verdict, severity = INCONCLUSIVE, _max(bias_severity, "low")
    else:
        verdict, severity = CERTIFIED, "none"
    if verdict != CERTIFIED:
        reasons += undecided
    sentence = _sentence(verdict, judge=judge, probes=probes, failed=failed, flagged=flagged,
                         dims=dims, margin=margin, degenerate_finding=degenerate_finding,
                         undecided=undecided)
    if status == "INSUFFICIENT_DATA" and verdict == INCONCLUSIVE:
        sentence = (f"Inconclusive: the audit stopped before any judge call, so nothing is known "
                    f"about {judge} and it is not certified.")
    return Verdict(verdict, severity, sentence, reasons, [p.key for p in failed],
                   [s.dimension for s in flagged], undecided)


def _sentence(verdict: str, *, judge: str, probes: list[ProbeStats], failed: list[ProbeStats],
              flagged: list[DimensionStats], dims: list[DimensionStats], margin: float,
              degenerate_finding: dict[str, Any] | None, undecided: list[str]) -> str:
    if verdict == CERTIFIED:
        return (f"Certified: {judge} told sound legal answers from degraded ones in all "
                f"{len(probes)} probes, and no bias larger than ±{margin:g} points was found on "
                f"any of the {len(dims)} dimensions audited.")
    if verdict == INSENSITIVE:
        why = (degenerate_finding["finding"] if degenerate_finding else
               f"it missed the degradation in {len(failed)} of {len(probes)} probes "
               f"({', '.join(p.key for p in failed)})")
        return (f"Insensitive: {judge} does not reliably tell sound legal answers from degraded "
                f"ones ({why}), so its scores must not gate anything.")
    if verdict == BIASED:
        names = " and ".join(", ".join(s.dimension for s in flagged).rsplit(", ", 1))
        head = (f"{judge} tells sound answers from degraded ones, but its scores" if probes and
                all(p.status == "pass" for p in probes) else f"{judge}'s scores")
        says = "says" if len(flagged) == 1 else "say"
        return (f"Biased: {head} also move with {names}, which {says} nothing about legal "
                "quality; do not let it gate until a re-audit passes.")
    return (f"Inconclusive: the audit could not establish that {judge} can be trusted "
            f"({undecided[0] if undecided else 'see the reasons'}); it is not certified.")
