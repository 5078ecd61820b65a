"""The three-judge ensemble: same-family weighting, aggregation, the vote, disagreement.

Rules (DESIGN.md, from the seed):

- **Same-family weighting.** When the system under test (SUT) shares a family with some judges, the
  judges of other families together carry at least 60% of the weight (raised to 60% when equal weights
  give less; left alone when they already carry more). A single-judge ensemble whose judge is
  same-family is refused; an ensemble of only same-family judges is refused unless explicitly allowed,
  and then warned about.
- **Aggregation.** Numeric rubrics: weighted mean over judges with a valid verdict (weights
  renormalised). Pass/fail: weighted majority of the judges' own pass/fail; a tie fails. Hallucination:
  weighted plurality; a tie resolves to the more severe value. Fewer valid judges than the quorum makes
  the item INCONCLUSIVE.
- **Rule findings** (rule 1: a fabricated citation forces citation_quality = 0; rule 2: another
  jurisdiction's law caps jurisdiction_awareness at 2; rule 4: hedging only caps completeness and
  legal_soundness and fails the item; review flags) are applied after aggregation by
  :func:`~legal_judge.benchmark.answer_rules.apply_answer_rules`, from the answer-rules table, and
  are visible in the result beside the judges' own figures (``raw_scores``, ``raw_overall``).
"""

from __future__ import annotations

import math
from collections import defaultdict
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import numpy as np

from legal_judge.assets.rubrics import RubricSet
from legal_judge.benchmark.answer_rules import apply_answer_rules
from legal_judge.errors import ConfigError
from legal_judge.models import EnsembleResult, JudgeWeight, Verdict

__all__ = ["EnsemblePolicy", "JudgeSlot", "aggregate", "check_policy", "compute_weights",
           "sample_sd"]


@dataclass(frozen=True)
class JudgeSlot:
    """What the weighting needs to know about one judge."""

    name: str
    family: str
    weight: float


@dataclass(frozen=True)
class EnsemblePolicy:
    """Ensemble rules that are configuration, not code."""

    quorum: int = 2
    other_family_min_share: float = 0.6
    allow_same_family_only: bool = False
    disagreement_threshold: float = 2.0


def _same(slot: JudgeSlot, sut_family: str | None) -> bool:
    return sut_family is not None and sut_family not in ("unknown", "") and slot.family == sut_family


def check_policy(slots: list[JudgeSlot], sut_family: str | None, policy: EnsemblePolicy) -> list[str]:
    """Refuse configurations the same-family rule forbids; return warnings for allowed ones.

    Raises:
        ConfigError: a single same-family judge, or only same-family judges without permission.
    """
    same = [s for s in slots if _same(s, sut_family)]
    if not same:
        return []
    if len(slots) == 1:
        raise ConfigError(
            f"the only judge ({slots[0].name}) is from the same family as the system under test "
            f"({sut_family})", code="ensemble-same-family-single",
            fix="use a judge from a different provider than the system under test",
        )
    if len(same) == len(slots):
        if not policy.allow_same_family_only:
            raise ConfigError(
                f"every judge is from the same family as the system under test ({sut_family})",
                code="ensemble-same-family-only",
                fix="add at least one judge of another family, or set allow_same_family_only = true "
                    "(every report will carry a warning)",
            )
        return [f"all judges share the system under test's family ({sut_family}): scores may be "
                "inflated by self-preference"]
    return []


def compute_weights(slots: list[JudgeSlot], sut_family: str | None,
                    policy: EnsemblePolicy) -> list[JudgeWeight]:
    """Per-item weights (summing to 1) under the same-family rule, each with its reason."""
    return list(_weights(tuple(slots), sut_family, policy))


@lru_cache(maxsize=256)
def _weights(slots: tuple[JudgeSlot, ...], sut_family: str | None,
             policy: EnsemblePolicy) -> tuple[JudgeWeight, ...]:
    # Every item of a run has the same judges and mostly the same SUT family: the weights and
    # their reasons are computed once per combination (JudgeWeight is frozen: shared, not copied).
    total = sum(s.weight for s in slots)
    same = [_same(s, sut_family) for s in slots]
    other_total = sum(s.weight for s, m in zip(slots, same, strict=True) if not m)
    share = other_total / total
    raise_others = any(same) and not all(same) and share < policy.other_family_min_share
    out = []
    for slot, is_same in zip(slots, same, strict=True):
        if raise_others:
            group_total = total - other_total if is_same else other_total
            target = (1 - policy.other_family_min_share) if is_same else policy.other_family_min_share
            weight = slot.weight / group_total * target
            reason = (f"same family as the SUT ({sut_family}): other families raised to "
                      f"{policy.other_family_min_share:.0%}")
        else:
            weight = slot.weight / total
            if not any(same):
                reason = "no judge shares the SUT's family: configured weights"
            elif all(same):
                reason = "all judges share the SUT's family (allowed by config): configured weights"
            else:
                reason = (f"other families already carry {share:.0%} >= "
                          f"{policy.other_family_min_share:.0%}: configured weights")
        out.append(JudgeWeight(judge=slot.name, family=slot.family, weight=round(weight, 10),
                               same_family=is_same, reason=reason))
    return tuple(out)


def _weighted_mean(values: list[float], weights: list[float]) -> float:
    total = sum(weights)
    return sum(v * w for v, w in zip(values, weights, strict=True)) / total


def _expected_means(weighted: list[tuple[Verdict, float]]) -> dict[str, float]:
    """Per rubric, the weighted mean of the judges' log-probability expected scores, over the
    judges that have one (weights renormalised, as for the scores)."""
    by_rubric: dict[str, tuple[list[float], list[float]]] = {}
    for v, w in weighted:
        for rubric, value in (v.extra.get("expected_scores") or {}).items():
            values, weights = by_rubric.setdefault(rubric, ([], []))
            values.append(float(value))
            weights.append(w)
    return {r: round(_weighted_mean(*by_rubric[r]), 4) for r in sorted(by_rubric)}


def _vote(valid: list[tuple[Verdict, float]]) -> tuple[str, dict[str, float]]:
    votes = {"pass": 0.0, "fail": 0.0}
    for v, weight in valid:
        votes[v.overall or "fail"] += weight
    overall = "pass" if votes["pass"] > votes["fail"] + 1e-12 else "fail"  # a tie fails
    return overall, {k: round(x, 10) for k, x in votes.items()}


def _plurality(valid: list[tuple[Verdict, float]], severity: list[str]) -> str | None:
    tally: dict[str, float] = defaultdict(float)
    for v, weight in valid:
        if v.hallucination is not None:
            tally[v.hallucination] += weight
    if not tally:
        return None
    best = max(tally.values())
    tied = [k for k, w in tally.items() if abs(w - best) < 1e-12]
    return max(tied, key=severity.index)  # a tie resolves to the more severe value


def sample_sd(values: list[float]) -> float:
    """The sample standard deviation (``ddof=1``; 0.0 for one value), numpy's number exactly.

    An ensemble has a few judges: for fewer than eight values numpy's sums are plain left-to-right
    sums, which this pure-Python loop repeats at a fraction of the cost of building an array.
    """
    n = len(values)
    if n < 2:
        return 0.0
    if n >= 8:  # numpy's pairwise summation from here on: let numpy give its own number
        return float(np.asarray(values, dtype=float).std(ddof=1))
    total = 0.0
    for x in values:
        total += float(x)
    mean = total / n
    squares = 0.0
    for x in values:
        d = float(x) - mean
        squares += d * d
    return math.sqrt(squares / (n - 1))


def aggregate(item_id: str, verdicts: list[Verdict], slots: list[JudgeSlot], *,
              sut_family: str | None, policy: EnsemblePolicy, rubric_set: RubricSet,
              severity: list[str], checks: dict[str, Any] | None = None) -> EnsembleResult:
    """Combine the judges' verdicts on one item into the ensemble's result.

    ``verdicts[i]`` is the verdict of the judge in ``slots[i]``: a verdict is matched to its judge
    by position, never by the display name it carries, so a renamed judge whose verdict came from
    the cache under its old name is still weighted as the judge it is.

    Raises:
        ValueError: ``verdicts`` and ``slots`` differ in length.
    """
    if len(verdicts) != len(slots):
        raise ValueError(f"{len(verdicts)} verdicts for {len(slots)} judges")
    checks = checks or {}
    paired = list(zip(verdicts, slots, strict=True))
    valid_pairs = [(v, s) for v, s in paired if v.status == "ok"]
    valid = [v for v, _ in valid_pairs]
    valid_slots = [s for _, s in valid_pairs]
    if len(valid) < policy.quorum:
        all_weights = compute_weights(slots, sut_family, policy)
        reasons = "; ".join(f"{s.name}: {v.status} ({v.reason})" for v, s in paired
                            if v.status != "ok")
        return EnsembleResult(item_id=item_id, weights=all_weights, valid_judges=len(valid),
                              checks=checks, status="inconclusive",
                              reason=f"{len(valid)} valid verdict(s), quorum is {policy.quorum}"
                                     + (f" — {reasons}" if reasons else ""))
    weights_list = compute_weights(valid_slots, sut_family, policy)
    weighted = [(v, w.weight) for v, w in zip(valid, weights_list, strict=True)]
    flags: list[str] = []
    if valid_slots and all(_same(s, sut_family) for s in valid_slots) and len(valid_slots) < len(slots):
        flags.append("only same-family judges returned a valid verdict")
    # Each rubric's scores and weights, in judge order, gathered once for the mean and the
    # disagreement alike.
    by_rubric: dict[str, tuple[list[float], list[float]]] = {}
    for v, w in weighted:
        for rubric, score in v.scores.items():
            got = by_rubric.get(rubric)
            if got is None:
                got = by_rubric[rubric] = ([], [])
            got[0].append(score)
            got[1].append(w)
    scores = {rubric: round(_weighted_mean(*by_rubric[rubric]), 4) for rubric in sorted(by_rubric)}
    raw_scores = dict(scores)
    overall, votes = _vote(weighted)
    hallucination = _plurality(weighted, severity)
    # Every rule finding's declared effect (caps, a forced fail, review), in this one place.
    ruled = apply_answer_rules(checks, scores=scores, overall=overall, votes=votes,
                               hallucination=hallucination, rubric_set=rubric_set)
    disagreement = {rubric: {"range": float(max(values) - min(values)), "sd": sample_sd(values)}
                    for rubric, (values, _) in by_rubric.items()}
    split = min(votes.values()) > 0
    flagged = split or bool(ruled.review) or any(d["range"] >= policy.disagreement_threshold
                                                 for d in disagreement.values())
    if split:
        flags.append("judges split on pass/fail")
    flags += [f"{r}: judges {d['range']:.1f} points apart" for r, d in disagreement.items()
              if d["range"] >= policy.disagreement_threshold]
    flags += ruled.review
    return EnsembleResult(
        item_id=item_id, weights=weights_list, valid_judges=len(valid), checks=checks, status="ok",
        scores=ruled.scores, raw_scores=raw_scores, hallucination=hallucination,  # type: ignore[arg-type]
        overall=ruled.overall, raw_overall=overall, votes=votes,  # type: ignore[arg-type]
        rule_fail_reasons=ruled.rule_fail_reasons,
        disagreement=disagreement, flagged_for_review=flagged, flags=flags,
        overrides=ruled.overrides, expected_scores=_expected_means(weighted),
    )
