"""Judge-error-corrected estimates: prediction-powered inference and Rogan-Gladen.

A judge's pass rate or rubric mean over a run is the judge's opinion; its t or Wilson CI ignores the
judge's error. With lawyers' labels on some items, these estimators correct for it:

* :func:`ppi_mean`: prediction-powered inference for the mean of the true label (Angelopoulos,
  Bates, Fannjiang, Jordan and Zrnic, "Prediction-powered inference", Science 2023), power-tuned
  as PPI++ (Angelopoulos, Duchi and Zrnic, arXiv 2311.01453) when ``tuned``. The figures equal
  ppi-python 0.2.3's ``ppi_mean_pointestimate`` / ``ppi_mean_ci`` (``lam=None`` / ``lam=1``).
* :func:`rogan_gladen`: a pass rate corrected with the judge's sensitivity and specificity
  measured on the labelled items (Rogan and Gladen, Am. J. Epidemiol. 1978), CI by the delta
  method over both samples.
* :func:`ppi_mean_stratified` / :func:`rogan_gladen_stratified`: the same per stratum of a
  stratified sample, weighted by stratum size (an unweighted estimate of a stratified sample is
  biased).

Conventions (DESIGN.md): normal (z) CI; variances with ddof 0; the unlabelled set excludes the
labelled items; the tuned lambda is clipped to [0, 1].
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
from scipy import stats

from legal_judge.stats._common import ArrayLike, FloatArray, StatisticsError, as_float_array

__all__ = [
    "CorrectedMean",
    "RoganGladen",
    "StratifiedEstimate",
    "ppi_mean",
    "ppi_mean_stratified",
    "rogan_gladen",
    "rogan_gladen_stratified",
]

Stratum = tuple[ArrayLike, ArrayLike, ArrayLike]


@dataclass(frozen=True, slots=True)
class CorrectedMean:
    """A prediction-powered mean: ``lam*mean(yhat_unlabelled) + mean(y - lam*yhat_labelled)``."""

    estimate: float
    ci: tuple[float, float]
    se: float
    lam: float
    tuned: bool
    n_labelled: int
    n_unlabelled: int
    alpha: float
    method: str


@dataclass(frozen=True, slots=True)
class RoganGladen:
    """A pass rate corrected with the judge's sensitivity (TPR) and specificity (TNR).

    ``estimate`` is ``(p_observed + TNR - 1) / (TPR + TNR - 1)`` clipped to [0, 1] and
    ``raw_estimate`` the unclipped value; both are None, with ``reason``, when the correction is
    undefined (TPR + TNR <= 1, or no labelled pass or no labelled fail to measure them on).
    """

    estimate: float | None
    ci: tuple[float, float] | None
    se: float | None
    raw_estimate: float | None
    p_observed: float
    tpr: float | None
    tnr: float | None
    n_labelled_pass: int
    n_labelled_fail: int
    n_unlabelled: int
    alpha: float
    method: str = "delta method (observed rate, TPR and TNR as independent binomials)"
    reason: str | None = None


@dataclass(frozen=True, slots=True)
class StratifiedEstimate:
    """Per-stratum estimates combined with weights ``N_h / N`` (labelled + unlabelled items).

    ``estimate`` is None, with ``reason``, when a stratum's estimate is undefined.
    """

    estimate: float | None
    ci: tuple[float, float] | None
    se: float | None
    weights: dict[str, float]
    per_stratum: dict[str, CorrectedMean | RoganGladen | None]
    n_labelled: int
    n_unlabelled: int
    alpha: float
    method: str
    reason: str | None = None


def _z(alpha: float) -> float:
    if not 0.0 < alpha < 1.0:
        raise StatisticsError(f"alpha {alpha!r} is not in (0, 1)", fix="use e.g. alpha=0.05")
    return float(stats.norm.ppf(1.0 - alpha / 2.0))


def _inputs(y: ArrayLike, yhat: ArrayLike, yhat_u: ArrayLike) -> tuple[FloatArray, FloatArray,
                                                                        FloatArray]:
    a = as_float_array(y, name="y_labelled")
    b = as_float_array(yhat, name="yhat_labelled")
    c = as_float_array(yhat_u, name="yhat_unlabelled")
    if a.shape != b.shape:
        raise StatisticsError(
            f"labelled vectors differ in length ({a.size} vs {b.size})",
            fix="pass the lawyer's label and the judge's score of each labelled item at the "
                "same position")
    if np.isnan(a).any() or np.isnan(b).any() or np.isnan(c).any():
        raise StatisticsError("a label or a judge score is missing (NaN)",
                              fix="drop the items without both figures before estimating")
    return a, b, c


def _tuned_lambda(y: FloatArray, yhat: FloatArray, yhat_u: FloatArray) -> float:
    """PPI++'s variance-minimising lambda for a mean, clipped to [0, 1] (as ppi-python 0.2.3).

    ppi-python computes ``cov(y, yhat)`` with ddof 0 over the labelled items and the variance of
    the predictions with ``np.cov`` (ddof 1) over labelled and unlabelled items together; the
    same is done here so the figures match. Constant predictions carry no information: lambda 0
    (the classical mean of the labels).
    """
    n, big_n = y.size, yhat_u.size
    cov = float(np.mean((y - y.mean()) * (yhat - yhat.mean())))
    var = float(np.var(np.concatenate([yhat, yhat_u]), ddof=1))
    if var == 0.0:
        return 0.0
    return float(np.clip(cov / ((1.0 + n / big_n) * var), 0.0, 1.0))


def ppi_mean(
    y_labelled: ArrayLike,
    yhat_labelled: ArrayLike,
    yhat_unlabelled: ArrayLike,
    *,
    alpha: float = 0.05,
    tuned: bool = True,
) -> CorrectedMean:
    """Prediction-powered estimate and CI of the mean of the true label over all items.

    Args:
        y_labelled: The lawyers' label of each labelled item (a 0-5 score, or 1/0 for pass).
        yhat_labelled: The judge's score of the same items, same order.
        yhat_unlabelled: The judge's score of every other item (the labelled ones excluded).
        alpha: Error level: the CI has coverage ``1 - alpha``.
        tuned: PPI++ power tuning (lambda estimated, clipped to [0, 1]); False is plain PPI
            (lambda = 1).

    Returns:
        A :class:`CorrectedMean`; the CI is ``estimate ± z(1 - alpha/2) · se`` with
        ``se² = var(lam·yhat_unlabelled)/N + var(y - lam·yhat_labelled)/n`` (ddof 0).

    Raises:
        StatisticsError: fewer than 2 labelled or no unlabelled item, mismatched or missing values.
    """
    z = _z(alpha)
    y, yhat, yhat_u = _inputs(y_labelled, yhat_labelled, yhat_unlabelled)
    if y.size < 2:
        raise StatisticsError(f"{y.size} labelled item(s): a corrected mean needs at least 2",
                              fix="label more items")
    if yhat_u.size < 1:
        raise StatisticsError("no unlabelled item: every item is labelled",
                              fix="use the lawyers' mean itself; nothing is left to predict")
    lam = _tuned_lambda(y, yhat, yhat_u) if tuned else 1.0
    estimate = float(lam * yhat_u.mean() + (y - lam * yhat).mean())
    se = math.sqrt(float(np.var(lam * yhat_u)) / yhat_u.size + float(np.var(y - lam * yhat)) / y.size)
    return CorrectedMean(estimate, (estimate - z * se, estimate + z * se), se, lam, tuned,
                         int(y.size), int(yhat_u.size), alpha, "PPI++" if tuned else "PPI")


def _binary(x: FloatArray, name: str) -> None:
    if not np.isin(x, (0.0, 1.0)).all():
        raise StatisticsError(f"{name} holds values other than 0 and 1",
                              fix="code pass as 1 and fail as 0")


def rogan_gladen(
    y_labelled: ArrayLike,
    yhat_labelled: ArrayLike,
    yhat_unlabelled: ArrayLike,
    *,
    alpha: float = 0.05,
) -> RoganGladen:
    """The judge's pass rate corrected for its sensitivity and specificity (Rogan-Gladen).

    TPR (judge pass among lawyer passes) and TNR (judge fail among lawyer fails) come from the
    labelled items, the observed pass rate ``p`` from the unlabelled ones, so the three are
    independent. The CI is the delta method: with ``J = TPR + TNR - 1``,
    ``var = [p(1-p)/N + θ²·TPR(1-TPR)/n₁ + (1-θ)²·TNR(1-TNR)/n₀] / J²`` (θ unclipped,
    n₁/n₀ the labelled passes/fails), a normal CI clipped to [0, 1]. A rate measured as exactly
    0 or 1 contributes no variance, so with few labels the CI is too narrow: read it with n.

    Args:
        y_labelled: The lawyers' pass (1) / fail (0) of each labelled item.
        yhat_labelled: The judge's pass/fail of the same items.
        yhat_unlabelled: The judge's pass/fail of every other item.
        alpha: Error level of the CI.

    Returns:
        A :class:`RoganGladen`; ``estimate`` None with a ``reason`` when undefined.

    Raises:
        StatisticsError: non-binary values, mismatched lengths or no unlabelled item.
    """
    z = _z(alpha)
    y, yhat, yhat_u = _inputs(y_labelled, yhat_labelled, yhat_unlabelled)
    for arr, name in ((y, "y_labelled"), (yhat, "yhat_labelled"), (yhat_u, "yhat_unlabelled")):
        _binary(arr, name)
    if yhat_u.size < 1:
        raise StatisticsError("no unlabelled item to observe the judge's pass rate on",
                              fix="pass the judge's decisions of the items the lawyers did not label")
    n1, n0 = int(np.sum(y == 1)), int(np.sum(y == 0))
    p = float(yhat_u.mean())
    tpr = float(np.mean(yhat[y == 1])) if n1 else None
    tnr = float(np.mean(1.0 - yhat[y == 0])) if n0 else None
    base = dict(p_observed=p, tpr=tpr, tnr=tnr, n_labelled_pass=n1, n_labelled_fail=n0,
                n_unlabelled=int(yhat_u.size), alpha=alpha)
    if tpr is None or tnr is None:
        missing = "pass" if tpr is None else "fail"
        return RoganGladen(None, None, None, None, **base,  # type: ignore[arg-type]
                           reason=f"no labelled item the lawyers {'passed' if missing == 'pass' else 'failed'}: "
                                  f"the judge's {'sensitivity' if missing == 'pass' else 'specificity'} "
                                  "cannot be measured")
    j = tpr + tnr - 1.0
    if j <= 0.0:
        return RoganGladen(None, None, None, None, **base,  # type: ignore[arg-type]
                           reason=f"TPR {tpr:.2f} + TNR {tnr:.2f} <= 1: the judge's pass/fail is "
                                  "no better than chance, so it cannot be corrected")
    theta = (p + tnr - 1.0) / j
    var = (p * (1 - p) / yhat_u.size + theta**2 * tpr * (1 - tpr) / n1
           + (1 - theta) ** 2 * tnr * (1 - tnr) / n0) / j**2
    se = math.sqrt(var)
    est = float(np.clip(theta, 0.0, 1.0))
    ci = (float(np.clip(theta - z * se, 0.0, 1.0)), float(np.clip(theta + z * se, 0.0, 1.0)))
    return RoganGladen(est, ci, se, float(theta), **base)  # type: ignore[arg-type]


def _weights(strata: Mapping[str, Stratum]) -> tuple[dict[str, float], int, int]:
    sizes = {k: len(v[0]) + len(v[2]) for k, v in strata.items()}
    total = sum(sizes.values())
    if not strata or total == 0:
        raise StatisticsError("no stratum holds an item", fix="pass at least one stratum")
    return ({k: s / total for k, s in sizes.items()}, sum(len(v[0]) for v in strata.values()),
            sum(len(v[2]) for v in strata.values()))


def _combine(parts: dict[str, tuple[float, float]], weights: dict[str, float],
             z: float) -> tuple[float, tuple[float, float], float]:
    est = sum(weights[k] * m for k, (m, _) in parts.items())
    se = math.sqrt(sum(weights[k] ** 2 * s**2 for k, (_, s) in parts.items()))
    return est, (est - z * se, est + z * se), se


def ppi_mean_stratified(
    strata: Mapping[str, Stratum], *, alpha: float = 0.05, tuned: bool = True,
) -> StratifiedEstimate:
    """PPI(++) per stratum, combined with weights proportional to stratum size.

    Each stratum is ``(y_labelled, yhat_labelled, yhat_unlabelled)`` of its own items; its size is
    its labelled plus unlabelled items. A stratum with no unlabelled item was labelled whole (a
    census, e.g. the items enriched for disagreement): its mean label is exact there (se 0). The
    combined CI is ``Σ W_h·θ_h ± z·sqrt(Σ W_h²·se_h²)``.

    Raises:
        StatisticsError: a stratum with unlabelled items has fewer than 2 labelled ones.
    """
    z = _z(alpha)
    weights, n, big_n = _weights(strata)
    parts: dict[str, tuple[float, float]] = {}
    per: dict[str, CorrectedMean | RoganGladen | None] = {}
    for key, (y, yhat, yhat_u) in strata.items():
        if len(yhat_u) == 0:
            labels = as_float_array(y, name="y_labelled")
            parts[key], per[key] = (float(labels.mean()), 0.0), None
            continue
        try:
            res = ppi_mean(y, yhat, yhat_u, alpha=alpha, tuned=tuned)
        except StatisticsError as exc:
            raise StatisticsError(f"stratum '{key}': {exc.message}", fix=exc.fix) from None
        parts[key], per[key] = (res.estimate, res.se), res
    est, ci, se = _combine(parts, weights, z)
    return StratifiedEstimate(est, ci, se, weights, per, n, big_n, alpha,
                              ("PPI++" if tuned else "PPI") + " stratified")


def rogan_gladen_stratified(strata: Mapping[str, Stratum], *,
                            alpha: float = 0.05) -> StratifiedEstimate:
    """Rogan-Gladen per stratum (unclipped), weighted by stratum size, clipped at the end.

    A census stratum (no unlabelled item) contributes its lawyers' pass rate exactly. When any
    stratum's correction is undefined (e.g. strata drawn by the judge's own verdict, where TPR
    or TNR cannot be measured within a stratum), the whole estimate is undefined with the reason.
    """
    z = _z(alpha)
    weights, n, big_n = _weights(strata)
    parts: dict[str, tuple[float, float]] = {}
    per: dict[str, CorrectedMean | RoganGladen | None] = {}
    method = "Rogan-Gladen stratified"
    for key, (y, yhat, yhat_u) in strata.items():
        if len(yhat_u) == 0:
            parts[key], per[key] = (float(as_float_array(y, name="y_labelled").mean()), 0.0), None
            continue
        res = rogan_gladen(y, yhat, yhat_u, alpha=alpha)
        per[key] = res
        if res.raw_estimate is None or res.se is None:
            return StratifiedEstimate(None, None, None, weights, per, n, big_n, alpha, method,
                                      reason=f"stratum '{key}': {res.reason}")
        parts[key] = (res.raw_estimate, res.se)
    est, (lo, hi), se = _combine(parts, weights, z)
    return StratifiedEstimate(float(np.clip(est, 0, 1)),
                              (float(np.clip(lo, 0, 1)), float(np.clip(hi, 0, 1))), se, weights,
                              per, n, big_n, alpha, method)

