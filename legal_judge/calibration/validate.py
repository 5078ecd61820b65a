"""Is the changed judge closer to the lawyers than the incumbent, on the same labelled items?

DESIGN.md, "Decisions and the burden of proof": judge changes are validated on the same
lawyer-labelled items as the incumbent; the false-pass rate (the judge passes, the lawyers fail)
is decided first. For pass/fail and each rubric: agreement with the lawyers' consensus (rounded
scores equal), kappa, MAE, the false-pass and false-fail rates, each with an exact 95% CI; the
paired difference candidate - incumbent (exact McNemar for agreement and the error rates, the
paired test of ``stats.paired_test`` on absolute errors of a numeric rubric, Holm across rubrics).

Verdicts (``[validation]`` of the policy): ``better`` (significantly closer), ``not worse`` (the
95% CI excludes a loss larger than the margin), ``worse`` (significantly further; for pass/fail
also a significantly higher false-pass rate, whatever else improves), ``cannot tell`` (with the
labelled items that would be needed).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from legal_judge.calibration.rubrics import PASS_FAIL, RubricSpec
from legal_judge.calibration.validation_data import JudgeScores, LawyerSet, Score
from legal_judge.calibration.validation_schema import (
    Difference,
    Fitness,
    JudgeFigures,
    Rate,
    RubricValidation,
)
from legal_judge.policy import ValidationPolicy
from legal_judge.stats import adjust_pvalues, cohen_kappa, paired_test, proportion_ci
from legal_judge.stats.paired_rates import (
    items_for_noninferiority,
    items_for_noninferiority_mean,
    paired_rate_difference,
)

__all__ = ["PASS_FAIL_ROW", "overall_verdict", "validate_rubrics"]

PASS_FAIL_ROW = "pass_fail"


def _rate(k: int, n: int) -> Rate:
    if n == 0:
        return Rate(k=0, n=0, value=None, ci95=None)
    return Rate(k=k, n=n, value=k / n, ci95=proportion_ci(k, n, method="exact"))


def _agree(a: Score | None, b: Score | None) -> bool:
    if isinstance(a, str) or isinstance(b, str):
        return a == b
    return a is not None and b is not None and round(float(a)) == round(float(b))


def _pass_figures(judge: JudgeScores, lawyers: dict[str, bool], keys: list[str]) -> JudgeFigures:
    pairs = [(judge.passed.get(k), lawyers[k]) for k in keys]
    agree = sum(1 for j, h in pairs if j is h)
    fails = [j for j, h in pairs if h is False]
    passes = [j for j, h in pairs if h is True]
    # A judge with no verdict on an item counts against it: the item was not decided.
    fp, ff = sum(1 for j in fails if j is not False), sum(1 for j in passes if j is not True)
    kappa = cohen_kappa([str(j) for j, _ in pairs], [str(h) for _, h in pairs]) if pairs else None
    confusion = {"both pass": sum(1 for j, h in pairs if j is True and h is True),
                 "judge pass, lawyers fail": fp,
                 "judge fail, lawyers pass": ff,
                 "both fail": sum(1 for j, h in pairs if j is False and h is False)}
    return JudgeFigures(judge=judge.ref.name, judge_id=judge.ref.judge_id, n=len(pairs),
                        agreement=_rate(agree, len(pairs)), kappa=kappa,
                        false_pass=_rate(fp, len(fails)), false_fail=_rate(ff, len(passes)),
                        confusion=confusion)


def _rubric_figures(judge: JudgeScores, spec: RubricSpec, humans: dict[str, Score],
                    keys: list[str]) -> JudgeFigures:
    col = judge.scores.get(spec.name, {})
    agree = sum(1 for k in keys if _agree(col.get(k), humans[k]))
    scored = [k for k in keys if col.get(k) is not None]
    kappa, mae = None, None
    if scored:
        levels = [round(spec.code(v)) for v in spec.scale]
        # A score outside the scale (a judge's 5.2) counts at the nearest level, as kappa needs.
        j = [min(max(round(spec.code(col[k])), levels[0]), levels[-1]) for k in scored]
        h = [min(max(round(spec.code(humans[k])), levels[0]), levels[-1]) for k in scored]
        kappa = cohen_kappa(j, h, weights="quadratic" if spec.kind == "numeric" else None,
                            labels=levels)
        if spec.kind == "numeric":
            mae = float(np.mean([abs(float(col[k]) - float(humans[k])) for k in scored]))
    return JudgeFigures(judge=judge.ref.name, judge_id=judge.ref.judge_id, n=len(keys),
                        agreement=_rate(agree, len(keys)), kappa=kappa, mae=mae)


def _difference(what: str, before: Sequence[bool], after: Sequence[bool]) -> Difference:
    if not before:
        return Difference(what=what, estimate=None, ci95=None, test="none", p_value=1.0, n=0)
    d = paired_rate_difference(before, after)
    return Difference(what=what, estimate=d.estimate, ci95=d.ci95, test="exact McNemar",
                      p_value=d.p_value, n=d.n, discordant=(d.b, d.c))


def _rate_verdict(diff: Difference, *, n: int, policy: ValidationPolicy,
                  p: float) -> tuple[Fitness, str, int | None]:
    """Verdict of an agreement difference (higher is better), with the items needed."""
    est, ci = diff.estimate or 0.0, diff.ci95 or (0.0, 0.0)
    text = f"agreement {est:+.3f} [95% CI {ci[0]:+.3f}, {ci[1]:+.3f}], p={p:.3g}"
    if n < policy.min_labelled_items:
        return "cannot tell", f"only {n} labelled items (policy: {policy.min_labelled_items})", \
            max(0, policy.min_labelled_items - n)
    if p < policy.alpha and est > 0:
        return "better", text, None
    if p < policy.alpha and est < 0:
        return "worse", text, None
    if ci[0] > -policy.agreement_margin:
        return "not worse", f"{text}: above -{policy.agreement_margin:g}", None
    disc = (sum(diff.discordant) / n) if diff.discordant else 1 / n
    need = items_for_noninferiority(max(disc, 1 / n), est, policy.agreement_margin,
                                    alpha=policy.alpha)
    return "cannot tell", f"{text}: the CI reaches below -{policy.agreement_margin:g}", \
        None if need is None else max(0, need - n)


def _pass_fail_row(lawyers: LawyerSet, cand: JudgeScores, inc: JudgeScores,
                   policy: ValidationPolicy) -> RubricValidation:
    decided = {k: v for k, v in lawyers.lawyers_pass.items() if v is not None}
    keys = sorted(decided)
    fc, fi = _pass_figures(cand, decided, keys), _pass_figures(inc, decided, keys)
    agree = _difference("agreement", [inc.passed.get(k) is decided[k] for k in keys],
                        [cand.passed.get(k) is decided[k] for k in keys])
    fails = [k for k in keys if decided[k] is False]
    passes = [k for k in keys if decided[k] is True]
    # Error indicators: "after - before" > 0 means the candidate errs more often.
    fp = _difference("false-pass rate", [inc.passed.get(k) is not False for k in fails],
                     [cand.passed.get(k) is not False for k in fails])
    ff = _difference("false-fail rate", [inc.passed.get(k) is not True for k in passes],
                     [cand.passed.get(k) is not True for k in passes])
    verdict, reason, need = _rate_verdict(agree, n=len(keys), policy=policy, p=agree.p_value)
    if fp.estimate is not None and fp.estimate > 0 and fp.p_value < policy.alpha:
        lo, hi = fp.ci95 or (0.0, 0.0)
        verdict, need = "worse", None
        reason = (f"false-pass rate {fp.estimate:+.3f} [95% CI {lo:+.3f}, {hi:+.3f}], "
                  f"p={fp.p_value:.3g}: it passes more answers the lawyers fail")
    return RubricValidation(rubric=PASS_FAIL_ROW, kind="pass_fail", n=len(keys), candidate=fc,
                            incumbent=fi, agreement_difference=agree, false_pass_difference=fp,
                            false_fail_difference=ff, verdict=verdict, reason=reason,
                            items_needed=need)


def _rubric_row(spec: RubricSpec, lawyers: LawyerSet, cand: JudgeScores, inc: JudgeScores,
                ) -> tuple[RubricValidation, float]:
    humans = lawyers.humans.get(spec.name, {})
    keys = sorted(k for k in humans if k in lawyers.items)
    fc = _rubric_figures(cand, spec, humans, keys)
    fi = _rubric_figures(inc, spec, humans, keys)
    cc, ic = cand.scores.get(spec.name, {}), inc.scores.get(spec.name, {})
    agree = _difference("agreement", [_agree(ic.get(k), humans[k]) for k in keys],
                        [_agree(cc.get(k), humans[k]) for k in keys])
    mae_diff, p = None, agree.p_value
    both = [k for k in keys if cc.get(k) is not None and ic.get(k) is not None]
    if spec.kind == "numeric" and len(both) >= 2:
        err_c = [abs(float(cc[k]) - float(humans[k])) for k in both]
        err_i = [abs(float(ic[k]) - float(humans[k])) for k in both]
        res = paired_test(err_c, err_i)
        # Two or more pairs always give a p-value; only a single pair leaves it undefined.
        p = 1.0 if res.p_value is None else res.p_value
        mae_diff = Difference(what="mean absolute error", estimate=res.mean_difference,
                              ci95=res.ci95, test=res.test_used, p_value=p, n=res.n)
    row = RubricValidation(rubric=spec.name, kind="numeric" if spec.kind == "numeric"
                           else "categorical", n=len(keys), candidate=fc, incumbent=fi,
                           agreement_difference=agree, mae_difference=mae_diff,
                           verdict="cannot tell", reason="")
    return row, p


def _mae_verdict(row: RubricValidation, policy: ValidationPolicy) -> tuple[Fitness, str, int | None]:
    diff = row.mae_difference
    assert diff is not None
    est, ci, p = diff.estimate or 0.0, diff.ci95, diff.p_adjusted or diff.p_value
    text = (f"mean absolute error {est:+.2f}" + (f" [95% CI {ci[0]:+.2f}, {ci[1]:+.2f}]" if ci
                                                 else "") + f", Holm p={p:.3g} ({diff.test})")
    if row.n < policy.min_labelled_items:
        return "cannot tell", f"only {row.n} labelled items (policy: " \
            f"{policy.min_labelled_items})", max(0, policy.min_labelled_items - row.n)
    if p < policy.alpha and est < 0:
        return "better", text, None
    if p < policy.alpha and est > 0:
        return "worse", text, None
    if ci is not None and ci[1] < policy.mae_margin:
        return "not worse", f"{text}: below +{policy.mae_margin:g}", None
    sd = (ci[1] - ci[0]) / 2 / 1.96 * np.sqrt(diff.n) if ci else 1.0
    need = items_for_noninferiority_mean(float(sd), est, policy.mae_margin, alpha=policy.alpha)
    return "cannot tell", f"{text}: the CI reaches above +{policy.mae_margin:g}", \
        None if need is None else max(0, need - row.n)


def validate_rubrics(lawyers: LawyerSet, candidate: JudgeScores, incumbent: JudgeScores,
                     policy: ValidationPolicy) -> list[RubricValidation]:
    """Pass/fail first, then every rubric the lawyers labelled, each with its verdict.

    Holm's correction runs across the rubrics (pass/fail, the primary decision, stands alone);
    a rubric may gate when its verdict is ``better`` or ``not worse`` and the candidate's kappa
    with the lawyers reaches the policy's floor.
    """
    rows = [_pass_fail_row(lawyers, candidate, incumbent, policy)]
    found = [_rubric_row(spec, lawyers, candidate, incumbent)
             for name, spec in lawyers.specs.items()
             if name != PASS_FAIL.name and lawyers.humans.get(name)]
    adjusted: list[float] = (adjust_pvalues([p for _, p in found], "holm").tolist()
                             if found else [])
    for (row, _), p_adj in zip(found, adjusted, strict=True):
        if row.mae_difference is not None:
            row.mae_difference.p_adjusted = float(p_adj)
            row.verdict, row.reason, row.items_needed = _mae_verdict(row, policy)
        else:
            row.agreement_difference.p_adjusted = float(p_adj)
            row.verdict, row.reason, row.items_needed = _rate_verdict(
                row.agreement_difference, n=row.n, policy=policy, p=float(p_adj))
        rows.append(row)
    for row in rows:
        kappa = row.candidate.kappa
        if row.verdict not in ("better", "not worse"):
            row.may_gate, row.gate_reason = False, f"verdict {row.verdict}"
        elif kappa is None or kappa < policy.min_kappa:
            row.may_gate = False
            row.gate_reason = (f"kappa {'undefined' if kappa is None else f'{kappa:.2f}'} "
                               f"below the policy floor {policy.min_kappa:g}")
        else:
            row.may_gate, row.gate_reason = True, f"verdict {row.verdict}, kappa {kappa:.2f}"
    return rows


def overall_verdict(rows: list[RubricValidation]) -> tuple[Fitness, list[str]]:
    """The overall verdict: the false-pass rate first, then any ``worse``, then pass/fail's.

    Returns:
        The verdict and the reasons that decided it.
    """
    pf = rows[0]
    fp = pf.false_pass_difference
    if fp is not None and pf.verdict == "worse" and pf.reason.startswith("false-pass"):
        return "worse", [f"pass/fail: {pf.reason}"]
    worse = [f"{r.rubric}: {r.reason}" for r in rows if r.verdict == "worse"]
    if worse:
        return "worse", worse
    if pf.verdict == "cannot tell":
        need = f"; about {pf.items_needed} more labelled items would be needed" \
            if pf.items_needed is not None else ""
        return "cannot tell", [f"pass/fail: {pf.reason}{need}"]
    return pf.verdict, [f"pass/fail: {pf.reason}"]
