"""Judge-versus-human comparison for the quarterly calibration."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from scipy import stats

from legal_judge.stats._common import ArrayLike, StatisticsError, complete_pairs
from legal_judge.stats.agreement import cohen_kappa, krippendorff_alpha, spearman

__all__ = [
    "AgreementSummary",
    "Divergence",
    "LimitsOfAgreement",
    "PassFailConfusion",
    "agreement_summary",
    "confusion_matrix_pf",
    "limits_of_agreement",
    "mean_divergence",
]


@dataclass(frozen=True, slots=True)
class Divergence:
    """Signed (judge - human) and absolute divergence over the complete pairs."""

    n: int
    n_dropped: int
    mean_signed: float
    ci95: tuple[float, float] | None
    mean_absolute: float


@dataclass(frozen=True, slots=True)
class PassFailConfusion:
    """Pass/fail confusion of judge against human; ``kappa`` is None when undefined."""

    n: int
    both_pass: int
    judge_pass_human_fail: int
    judge_fail_human_pass: int
    both_fail: int
    agreement: float
    kappa: float | None


@dataclass(frozen=True, slots=True)
class AgreementSummary:
    """Every agreement figure of one rubric (and one judge or the ensemble) against humans."""

    n: int
    divergence: Divergence
    kappa: float | None
    kappa_linear: float | None
    kappa_quadratic: float | None
    alpha_ordinal: float | None
    alpha_interval: float | None
    spearman_rho: float | None
    spearman_p: float | None
    pass_fail: PassFailConfusion | None


def mean_divergence(judge: ArrayLike, human: ArrayLike) -> Divergence:
    """Mean signed divergence ``judge - human`` with its 95% t CI, and the mean absolute one.

    Args:
        judge: Judge scores per item (NaN/None when missing).
        human: Human scores per item, same order.

    Returns:
        A :class:`Divergence`; with one pair the CI is undefined (None); with identical
        differences (sd = 0) it is ``[mean, mean]``.
    """
    x, y, dropped = complete_pairs(judge, human)
    if x.size == 0:
        raise StatisticsError("no item has both a judge and a human score", fix="check item ids")
    d = x - y
    mean = float(d.mean())
    ci: tuple[float, float] | None
    if d.size < 2:
        ci = None
    elif np.ptp(d) == 0:
        ci = (mean, mean)
    else:
        res = stats.ttest_1samp(d, 0.0).confidence_interval(confidence_level=0.95)
        ci = (float(res.low), float(res.high))
    return Divergence(int(d.size), dropped, mean, ci, float(np.abs(d).mean()))


def confusion_matrix_pf(
    judge_pass: Sequence[bool | None], human_pass: Sequence[bool | None]
) -> PassFailConfusion:
    """Pass/fail confusion matrix, raw agreement and Cohen's kappa (None entries dropped).

    Args:
        judge_pass: The judge's pass (True) / fail (False) per item.
        human_pass: The human's pass/fail per item, same order.

    Returns:
        A :class:`PassFailConfusion`.
    """
    if len(judge_pass) != len(human_pass):
        raise StatisticsError(
            "pass/fail lists differ in length", fix="pass one decision per item on each side"
        )
    pairs = [
        (bool(j), bool(h))
        for j, h in zip(judge_pass, human_pass, strict=True)
        if j is not None and h is not None
    ]
    if not pairs:
        raise StatisticsError("no item has both pass/fail decisions", fix="check item ids")
    j = np.array([p[0] for p in pairs])
    h = np.array([p[1] for p in pairs])
    n = int(j.size)
    return PassFailConfusion(
        n=n,
        both_pass=int(np.sum(j & h)),
        judge_pass_human_fail=int(np.sum(j & ~h)),
        judge_fail_human_pass=int(np.sum(~j & h)),
        both_fail=int(np.sum(~j & ~h)),
        agreement=float(np.mean(j == h)),
        kappa=cohen_kappa(j.tolist(), h.tolist(), labels=[False, True]),
    )


def agreement_summary(
    judge: ArrayLike,
    human: ArrayLike,
    *,
    labels: Sequence[int] | None = None,
    judge_pass: Sequence[bool | None] | None = None,
    human_pass: Sequence[bool | None] | None = None,
) -> AgreementSummary:
    """All calibration agreement statistics of judge scores against human scores.

    Kappa and ordinal alpha need categories, while an ensemble score is a weighted mean
    (e.g. 3.67): both sides are rounded to the nearest integer for those two (half to even).
    Divergence, interval alpha and Spearman use the raw scores.

    Args:
        judge: Judge (or ensemble) scores per item.
        human: Human scores per item (one annotator, or their mean), same order.
        labels: The rubric's scale, e.g. ``range(0, 6)``; default every integer between the
            smallest and largest rounded score, so unused middle scores still count as distance.
        judge_pass: Optional pass/fail of the judge per item.
        human_pass: Optional pass/fail of the human per item.

    Returns:
        An :class:`AgreementSummary`.
    """
    x, y, _ = complete_pairs(judge, human)
    if x.size == 0:
        raise StatisticsError("no item has both a judge and a human score", fix="check item ids")
    rx = np.rint(x).astype(int).tolist()
    ry = np.rint(y).astype(int).tolist()
    scale = list(labels) if labels is not None else list(range(min(rx + ry), max(rx + ry) + 1))
    rho = spearman(x, y)
    return AgreementSummary(
        n=int(x.size),
        divergence=mean_divergence(judge, human),
        kappa=cohen_kappa(rx, ry, labels=scale),
        kappa_linear=cohen_kappa(rx, ry, weights="linear", labels=scale),
        kappa_quadratic=cohen_kappa(rx, ry, weights="quadratic", labels=scale),
        alpha_ordinal=krippendorff_alpha([rx, ry], level="ordinal"),
        alpha_interval=krippendorff_alpha([x, y], level="interval"),
        spearman_rho=rho.rho,
        spearman_p=rho.p_value,
        pass_fail=(
            confusion_matrix_pf(judge_pass, human_pass)
            if judge_pass is not None and human_pass is not None
            else None
        ),
    )


@dataclass(frozen=True, slots=True)
class LimitsOfAgreement:
    """Bland-Altman limits of agreement of ``judge - human``: ``bias ± 1.96·sd`` (sd ddof 1).

    ``lower``/``upper`` are None with fewer than two pairs (no spread to measure).
    """

    n: int
    bias: float
    sd: float | None
    lower: float | None
    upper: float | None


def limits_of_agreement(judge: ArrayLike, human: ArrayLike) -> LimitsOfAgreement:
    """Bland-Altman 95% limits of agreement (Bland and Altman, Lancet 1986).

    Where 95% of the differences between a judge's score and the lawyers' are expected to fall:
    the mean difference ± 1.96 standard deviations of the differences.

    Raises:
        StatisticsError: no complete pair.
    """
    x, y, _ = complete_pairs(judge, human)
    if x.size == 0:
        raise StatisticsError("no item has both a judge and a human score", fix="check item ids")
    d = x - y
    bias = float(d.mean())
    if d.size < 2:
        return LimitsOfAgreement(int(d.size), bias, None, None, None)
    sd = float(d.std(ddof=1))
    return LimitsOfAgreement(int(d.size), bias, sd, bias - 1.96 * sd, bias + 1.96 * sd)
