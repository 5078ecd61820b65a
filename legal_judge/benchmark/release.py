"""The release decision of ``compare``: non-inferiority per endpoint, a flip guard, one verdict.

DESIGN.md, "Decisions and the burden of proof": a release passes only on positive evidence that B
is *not worse* than A. Each endpoint (the pass rate and every rubric mean) is

- ``non-inferior`` when the one-sided lower confidence bound of ``B - A`` is above ``-margin``;
- ``regressed`` when the one-sided upper bound is below ``-margin`` (shown worse);
- ``cannot tell`` otherwise, or with fewer paired items than the policy's ``min_items``; the
  reason says how many paired items would be needed at the observed variance.

The flip guard counts critical items (dataset ``critical: true`` or the policy's
``critical_ids``) that went from pass to fail; more than ``max_flips`` is a regression whatever
the bounds say. It passes only on evidence: a critical item that could have gone pass -> fail
but is not scored in both runs (missing from B, INCONCLUSIVE, a different question) leaves the
guard ``cannot tell``.

With the policy's ``require_escalations_reviewed``, the candidate run's newest escalation
(``calibrate escalate``) must have no item pending lawyer review (:func:`review_guard`): a run
whose hardest answers nobody has looked at yet has no evidence on them.

The gate is an **intersection-union test**: it passes only when *every* endpoint is non-inferior.
Each endpoint's test is run at the full level and no multiplicity correction is applied, because
the release is claimed only when all the null hypotheses ("B is worse by the margin on this
endpoint") are rejected together: the probability of a false release is at most that of the
single endpoint on which B is truly worse, which is at most ``1 - confidence`` (Berger 1982).
Correcting would only make the gate more conservative.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping
from typing import Any

from legal_judge import stats
from legal_judge.benchmark.run_gate import RunGate
from legal_judge.policy import ReleasePolicy, RunPolicy

__all__ = ["DECISIONS", "PENDING_REVIEW", "endpoint_decision", "flip_guard", "release_verdict",
           "review_guard", "scored_requirement"]

NON_INFERIOR, REGRESSED, CANNOT_TELL = "non-inferior", "regressed", "cannot tell"
#: The decision of an endpoint (what JUnit, the summary and the report read).
DECISIONS = (NON_INFERIOR, REGRESSED, CANNOT_TELL)
#: The release decision when only escalated items pending lawyer review stop it.
PENDING_REVIEW = "pending review"


def _num(x: float) -> str:
    return f"{x + 0.0:+.3f}".replace("-0.000", "+0.000")


def endpoint_decision(name: str, *, n: int | None, estimate: float | None,
                      lower: float | None, upper: float | None, margin: float,
                      policy: ReleasePolicy, method: str, sd: float | None = None,
                      unit: str = "points", identical: bool = False,
                      shares: tuple[float, float] | None = None) -> dict[str, Any]:
    """Decide one endpoint from its one-sided bounds.

    Args:
        name: ``pass_rate`` or the rubric's name.
        n: Paired items (None for estimates that are not item pairs, e.g. corrected figures).
        estimate: The observed ``B - A``.
        lower: One-sided lower bound at ``policy.confidence`` (None when undefined).
        upper: One-sided upper bound.
        margin: The non-inferiority margin (positive).
        policy: The ``[release]`` policy (confidence, min_items).
        method: How the bounds were made (``tango score``, ``t``, ``hodges-lehmann``, ...).
        sd: The per-item sd of the differences, for the items-needed figure of a mean.
        shares: ``(better, worse)`` shares of items for a pass rate: the items-needed figure
            is then Tango's (``stats.tango_items_needed``).
        unit: What the margin is in (``pass rate`` or ``points``).
        identical: Every paired score is the same in both runs (and the comparison as a whole
            has ``min_items``): nothing moved, so a rubric scored on fewer items (e.g. only the
            non-English ones) is not "cannot tell" for want of items.

    Returns:
        A dict with ``decision`` (one of :data:`DECISIONS`), the bounds, margin and ``reason``.
    """
    conf = f"one-sided {policy.confidence:.0%}"
    out: dict[str, Any] = {"endpoint": name, "n": n, "estimate": estimate, "lower": lower,
                           "upper": upper, "margin": margin, "unit": unit,
                           "confidence": policy.confidence, "method": method,
                           "items_needed": None}
    if identical and n:
        return {**out, "decision": NON_INFERIOR,
                "reason": f"all {n} paired scores are identical in both runs: nothing moved"}
    if n is not None and n < policy.min_items:
        return {**out, "decision": CANNOT_TELL,
                "reason": f"{n} paired items, fewer than the policy's min_items "
                          f"{policy.min_items}: not tested"}
    if lower is None or upper is None or estimate is None:
        return {**out, "decision": CANNOT_TELL, "reason": "no confidence bound (too few items)"}
    if lower > -margin:
        return {**out, "decision": NON_INFERIOR,
                "reason": f"the {conf} lower bound {_num(lower)} is above -{margin:g}"}
    if upper < -margin:
        return {**out, "decision": REGRESSED,
                "reason": f"the {conf} upper bound {_num(upper)} is below -{margin:g}: shown "
                          "worse than the margin"}
    needed = (stats.tango_items_needed(*shares, margin, confidence=policy.confidence)
              if shares is not None else
              stats.items_needed(sd, estimate, margin, confidence=policy.confidence))
    if needed is not None:
        more = (f"about {needed} paired items would be needed at this variance (if the "
                f"difference stayed {_num(estimate)})")
    elif n is None:
        more = "more labelled items would narrow the bounds"
    else:
        more = (f"the observed difference {_num(estimate)} is itself beyond the margin: more "
                "items would not show non-inferiority")
    return {**out, "decision": CANNOT_TELL, "items_needed": needed,
            "reason": f"the lower bound {_num(lower)} is below -{margin:g}; {more}"}


def flip_guard(flipped: Iterable[str], critical: Iterable[str], *,
               policy: ReleasePolicy, unchecked: Iterable[str] = (),
               present: Collection[str] | None = None) -> dict[str, Any]:
    """The flip guard: critical items that went pass -> fail, at most ``policy.max_flips``.

    Args:
        flipped: Every item that passed in A and failed in B.
        critical: The items marked critical (dataset flags and ``policy.critical_ids``).
        policy: The ``[release]`` policy.
        unchecked: Critical items the guard cannot check: not scored in both runs while a
            pass -> fail was possible (passed in A and unscored or missing in B, unscored in A
            and not passed in B). Any of them leaves the guard ``cannot tell``: it passed
            "0 of 2 critical items went pass -> fail" with one of the two missing from B.
        present: Every item id either run holds (None: all of them). A critical id outside
            it (a policy id of another dataset, or a typo) is named in the reason, not counted.
    """
    flipped, wanted = list(flipped), set(critical) | set(policy.critical_ids)
    critical_set = wanted if present is None else wanted & set(present)
    absent = sorted(wanted - critical_set)
    hits = [i for i in flipped if i in critical_set]
    unknown = sorted(set(unchecked) & critical_set)
    tripped = len(hits) > policy.max_flips
    if not critical_set:
        reason = ("no item is marked critical (dataset `critical: true` or policy critical_ids): "
                  "nothing to guard")
    else:
        reason = (f"{len(hits)} of {len(critical_set)} critical item(s) went pass -> fail "
                  f"(max_flips {policy.max_flips})")
    if unknown and not tripped:
        reason += (f"; {len(unknown)} critical item(s) not scored in both runs, so not checked: "
                   + _ids(unknown))
    if absent:
        reason += f"; {len(absent)} critical id(s) in neither run: " + _ids(absent)
    decision = REGRESSED if tripped else CANNOT_TELL if unknown else "passed"
    return {"decision": decision, "critical_flips": hits, "critical_items": len(critical_set),
            "max_flips": policy.max_flips, "flipped": flipped, "unchecked": unknown,
            "absent": absent, "reason": reason}


def _ids(ids: list[str], shown: int = 10) -> str:
    return ", ".join(ids[:shown]) + (" ..." if len(ids) > shown else "")


def scored_requirement(runs: Mapping[str, tuple[int, int]], *,
                       policy: RunPolicy) -> dict[str, Any]:
    """Each run scored enough of its items: the ``[run]`` gate's ``max_inconclusive_share``.

    The endpoints compare only the items both runs scored; a run that left many unscored
    (INCONCLUSIVE, or never judged) says nothing about them, and they are rarely a random
    share. A candidate with 204 of 684 items INCONCLUSIVE, which its own ``run`` gate failed,
    passed the release on the other 480. A requirement: met only on evidence, always checked.

    Args:
        runs: ``run id -> (items, scored items)``, baseline first.
        policy: The ``[run]`` policy.

    Returns:
        ``{"name", "required", "met", "reason", "fix", "runs"}`` (``runs``: each run's figures).
    """
    figures: dict[str, dict[str, Any]] = {}
    said, short = [], []
    for run_id, (items, scored) in runs.items():
        gate = RunGate(inconclusive=items - scored, items=items,
                       limit=policy.max_inconclusive_share)
        figures[run_id] = {"items": items, "scored": scored, "share_unscored": gate.share,
                           "met": gate.passed}
        said.append(f"run {run_id}: {items - scored} of {items} items not scored"
                    + (f" ({gate.share:.1%})" if gate.share is not None else ""))
        if not gate.passed:
            short.append(said[-1])
    limit = f"policy limit {policy.max_inconclusive_share:.1%} (run.max_inconclusive_share)"
    reason = ("; ".join(short) + f" > {limit}" if short else
              "every run scored its items: " + ", ".join(said) + f" <= {limit}")
    return {"name": "items scored", "required": True, "met": not short, "reason": reason,
            "fix": "judge the INCONCLUSIVE items again once their cause is fixed (legal-judge "
                   "run --resume RUN_ID), or raise run.max_inconclusive_share in the policy on "
                   "purpose", "runs": figures}


def review_guard(run_id: str, *, escalation_id: str | None, escalated: int, pending: int,
                 policy: ReleasePolicy) -> dict[str, Any]:
    """Whether run B's escalated items were all reviewed, when the policy requires it.

    Args:
        run_id: The candidate run (B).
        escalation_id: Its newest escalation, or None when it was never escalated.
        escalated: The items that escalation sent to lawyers.
        pending: How many of them carry no lawyer label yet.
        policy: The ``[release]`` policy (``require_escalations_reviewed``).

    Returns:
        A dict: ``decision`` (``passed``, ``pending review`` or ``not required``), ``pending``,
        ``escalated``, ``escalation_id``, ``run_id``, ``required`` and ``reason``.
    """
    out = {"run_id": run_id, "escalation_id": escalation_id, "escalated": escalated,
           "pending": pending, "required": policy.require_escalations_reviewed}
    if escalation_id is None:
        reason = f"run {run_id} was never escalated: no item is pending lawyer review"
    elif pending:
        reason = (f"{pending} of the {escalated} items of run {run_id} escalated to lawyers "
                  f"(escalation {escalation_id}) are pending lawyer review")
    else:
        reason = f"all {escalated} escalated items of run {run_id} were reviewed by lawyers"
    if not policy.require_escalations_reviewed:
        return {**out, "decision": "not required", "reason": reason}
    return {**out, "decision": PENDING_REVIEW if pending else "passed", "reason": reason}


def release_verdict(endpoints: list[dict[str, Any]], guard: dict[str, Any], *,
                    policy: ReleasePolicy, review: dict[str, Any] | None = None) -> dict[str, Any]:
    """All endpoints non-inferior (and the guards held): the release may ship.

    ``cannot tell`` fails unless ``policy.on_cannot_tell`` is ``pass``; a regression always fails;
    so do escalated items pending review when the policy requires them reviewed (``review``).
    """
    regressed = [e["endpoint"] for e in endpoints if e["decision"] == REGRESSED]
    unknown = [e["endpoint"] for e in endpoints if e["decision"] == CANNOT_TELL]
    if guard["decision"] == REGRESSED:
        regressed.append("flip guard")
    elif guard["decision"] == CANNOT_TELL:
        unknown.append("flip guard")
    pending = review is not None and review["decision"] == PENDING_REVIEW
    allowed = policy.on_cannot_tell == "pass"
    passed = bool(endpoints) and not regressed and (not unknown or allowed) and not pending
    decision = (REGRESSED if regressed else CANNOT_TELL if unknown
                else PENDING_REVIEW if pending else NON_INFERIOR)
    rule = (f"every endpoint non-inferior: one-sided {policy.confidence:.0%} lower bound of B - A "
            f"above -{policy.pass_rate_margin:g} (pass rate) and -{policy.rubric_margin:g} "
            f"points (each rubric), at least {policy.min_items} paired items, at most "
            f"{policy.max_flips} critical flip(s); cannot tell "
            f"{'passes' if policy.on_cannot_tell == 'pass' else 'fails'}"
            + ("; every escalated item reviewed by a lawyer"
               if policy.require_escalations_reviewed else ""))
    return {"decision": decision, "passed": passed, "regressed": regressed,
            "cannot_tell": unknown, "cannot_tell_allowed": allowed and bool(unknown),
            "pending_review": pending, "rule": rule}
