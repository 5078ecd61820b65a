"""Judge-error-corrected estimates and the verdict's statistics against fixed reference numbers.

PPI / PPI++: the numbers are ppi-python 0.2.3's ``ppi_mean_pointestimate`` and ``ppi_mean_ci``
(``lam=1`` and ``lam=None``), computed once with ppi-python installed in a scratch environment and
recorded here (ppi-python is not a dependency). Rogan-Gladen: there is no reference library, so the
numbers come from a separate straightforward computation of the formulas (the script is quoted in
:func:`test_rogan_gladen_reference`). Weighted kappa CI: statsmodels 0.15's ``cohens_kappa``
(``std_kappa``, ``kappa_low``, ``kappa_upp``).
"""

from __future__ import annotations

import numpy as np
import pytest

from legal_judge.stats import (
    StatisticsError,
    effective_judges,
    kappa_ci,
    limits_of_agreement,
    ppi_mean,
    ppi_mean_stratified,
    rogan_gladen,
    rogan_gladen_stratified,
)

# A 0-5 rubric whose judge sits about a point above the lawyers.
Y = [3, 4, 2, 5, 1, 0, 3, 4, 2, 3, 5, 1, 2, 4, 3]
YH = [4, 4, 3, 5, 2, 1, 4, 5, 3, 3, 5, 3, 2, 5, 4]
YU = [4, 5, 3, 2, 5, 4, 1, 3, 4, 5, 2, 4, 3, 5, 4, 3, 2, 4, 5, 1, 3, 4]
# A pass rate (1 pass, 0 fail): lawyers and the judge.
PY = [1, 0, 1, 1, 0, 0, 1, 0, 1, 1, 0, 1, 0, 0, 1, 1, 0, 1, 0, 0]
PYH = [1, 1, 1, 1, 0, 1, 1, 0, 1, 1, 1, 1, 0, 1, 1, 1, 0, 1, 1, 0]
PYU = [1, 1, 0, 1, 1, 1, 0, 1, 1, 1, 1, 0, 1, 1, 1, 0, 1, 1, 1, 1, 1, 0, 1, 1, 1, 1, 0, 1, 1, 1]
# Predictions anti-correlated with the labels: the tuned lambda clips at 0.
CY = [0, 1, 2, 3, 4, 5, 0, 1, 2, 3]
CYH = [5, 4, 3, 2, 1, 0, 4, 4, 2, 2]
CYU = [1, 2, 3, 4, 5, 0, 1, 2]

# (vectors, tuned, alpha) -> (estimate, low, high) from ppi-python 0.2.3
PPI_REFERENCE = [
    ((Y, YH, YU), False, 0.05, (2.721212121212121, 2.1298130431761098, 3.3126111992481326)),
    ((Y, YH, YU), False, 0.1, (2.721212121212121, 2.2248943693777323, 3.21752987304651)),
    ((Y, YH, YU), True, 0.05, (2.751968688845402, 2.2378318731922677, 3.266105504498536)),
    ((Y, YH, YU), True, 0.1, (2.751968688845402, 2.320491471586844, 3.1834459061039597)),
    ((PY, PYH, PYU), False, 0.05, (0.55, 0.31229964909356417, 0.787700350906436)),
    ((PY, PYH, PYU), False, 0.1, (0.55, 0.3505155771227905, 0.7494844228772095)),
    ((PY, PYH, PYU), True, 0.05, (0.521416083916084, 0.32695089189696214, 0.7158812759352058)),
    ((PY, PYH, PYU), True, 0.1, (0.521416083916084, 0.3582157501693746, 0.6846164176627934)),
    ((CY, CYH, CYU), False, 0.05, (1.65, -0.5225451513723742, 3.822545151372374)),
    ((CY, CYH, CYU), False, 0.1, (1.65, -0.17325736602210307, 3.4732573660221027)),
    ((CY, CYH, CYU), True, 0.05, (2.1, 1.1219799356082532, 3.078020064391747)),
    ((CY, CYH, CYU), True, 0.1, (2.1, 1.279219688302797, 2.920780311697203)),
]
# ppi-python's _calc_lam_glm(..., clip=True) on the same vectors
LAMBDA_REFERENCE = [((Y, YH, YU), 0.609628180039139), ((PY, PYH, PYU), 0.42832167832167833),
                    ((CY, CYH, CYU), 0.0)]


@pytest.mark.parametrize(("vectors", "tuned", "alpha", "expected"), PPI_REFERENCE)
def test_ppi_mean_equals_ppi_python(vectors: tuple[list[int], ...], tuned: bool, alpha: float,
                                    expected: tuple[float, float, float]) -> None:
    res = ppi_mean(*vectors, alpha=alpha, tuned=tuned)
    assert (res.estimate, *res.ci) == pytest.approx(expected, abs=1e-12)
    assert res.n_labelled == len(vectors[0]) and res.n_unlabelled == len(vectors[2])
    assert res.method == ("PPI++" if tuned else "PPI")


@pytest.mark.parametrize(("vectors", "lam"), LAMBDA_REFERENCE)
def test_tuned_lambda_equals_ppi_python(vectors: tuple[list[int], ...], lam: float) -> None:
    assert ppi_mean(*vectors).lam == pytest.approx(lam, abs=1e-12)
    assert ppi_mean(*vectors, tuned=False).lam == 1.0


def test_ppi_refuses_what_it_cannot_estimate() -> None:
    with pytest.raises(StatisticsError, match="at least 2"):
        ppi_mean([3], [4], [4, 5])
    with pytest.raises(StatisticsError, match="no unlabelled item"):
        ppi_mean([3, 4], [4, 4], [])
    with pytest.raises(StatisticsError, match="differ in length"):
        ppi_mean([3, 4], [4], [4])
    # constant predictions carry no information: the classical mean of the labels
    flat = ppi_mean([1, 2, 3], [4, 4, 4], [4, 4])
    assert flat.lam == 0.0 and flat.estimate == pytest.approx(2.0)


def test_rogan_gladen_reference() -> None:
    """Reference from the formulas, computed apart from legal_judge::

        tp, pos, tn, neg = 9, 10, 5, 10      # from RY/RYH below
        tpr, tnr, p = tp/pos, tn/neg, sum(PYU)/len(PYU)
        J = tpr + tnr - 1; th = (p + tnr - 1)/J
        var = (p(1-p)/N + th²·tpr(1-tpr)/pos + (1-th)²·tnr(1-tnr)/neg)/J²
        ci = th ± norm.ppf(0.975)·sqrt(var)
    """
    ryh = [0, *PYH[1:]]  # one lawyer pass the judge failed: TPR 0.9
    res = rogan_gladen(PY, ryh, PYU)
    assert (res.tpr, res.tnr, res.p_observed) == pytest.approx((0.9, 0.5, 0.8))
    assert res.raw_estimate == pytest.approx(0.7500000000000003, abs=1e-12)
    assert res.se == pytest.approx(0.27338541170540426, abs=1e-12)
    assert res.estimate == pytest.approx(0.75)
    assert res.ci == pytest.approx((0.21417443915875312, 1.0), abs=1e-12)  # 1.2858 clipped
    assert (res.n_labelled_pass, res.n_labelled_fail, res.n_unlabelled) == (10, 10, 30)
    assert "delta method" in res.method and res.reason is None


def test_rogan_gladen_undefined_with_reasons() -> None:
    chance = rogan_gladen([1, 1, 0, 0], [1, 0, 1, 0], [1, 1, 0])
    assert chance.estimate is None and chance.ci is None
    assert "TPR 0.50 + TNR 0.50 <= 1" in (chance.reason or "")
    no_fail = rogan_gladen([1, 1, 1], [1, 0, 1], [1, 0])
    assert no_fail.estimate is None and "specificity" in (no_fail.reason or "")
    with pytest.raises(StatisticsError, match="other than 0 and 1"):
        rogan_gladen([1, 2], [1, 0], [1])
    # an estimate past the boundary is clipped; the raw value stays
    over = rogan_gladen([1, 1, 0, 0, 0], [1, 0, 0, 0, 1], [1, 1, 1, 1])
    assert over.raw_estimate is not None and over.raw_estimate > 1 and over.estimate == 1.0


def test_stratified_weights_by_stratum_size() -> None:
    """A sample drawn 50/50 from strata of 90 and 10 items: the unweighted estimate is biased."""
    rng = np.random.default_rng(4)
    big_y, big_yh = rng.integers(0, 2, 10).astype(float), np.ones(10)
    small_y, small_yh = np.zeros(10), np.zeros(10)
    strata = {"pass": (big_y, big_yh, np.ones(80)), "fail": (small_y, small_yh, np.array([]))}
    res = ppi_mean_stratified(strata)
    assert res.weights == {"pass": 0.9, "fail": 0.1}
    # "pass": constant predictions -> lambda 0 -> the stratum's mean label; "fail": a census
    assert res.estimate == pytest.approx(0.9 * big_y.mean() + 0.1 * 0.0)
    per_pass = res.per_stratum["pass"]
    assert per_pass is not None and per_pass.se > 0 and res.per_stratum["fail"] is None
    assert res.se == pytest.approx(0.9 * per_pass.se)
    assert res.ci == pytest.approx((res.estimate - 1.959963984540054 * res.se,
                                    res.estimate + 1.959963984540054 * res.se))
    naive = ppi_mean(np.concatenate([big_y, small_y]), np.concatenate([big_yh, small_yh]),
                     np.ones(80))
    assert abs(naive.estimate - res.estimate) > 0.1
    with pytest.raises(StatisticsError, match="stratum 'one'"):
        ppi_mean_stratified({"one": ([1.0], [1.0], [1.0, 0.0])})


def test_rogan_gladen_stratified() -> None:
    # strata that are the judge's own verdict: TNR cannot be measured inside the "pass" stratum
    by_verdict = rogan_gladen_stratified({"pass": ([1, 1, 0], [1, 1, 1], [1, 1]),
                                          "fail": ([0, 0, 1], [0, 0, 0], [0])})
    assert by_verdict.estimate is None and "stratum" in (by_verdict.reason or "")
    a = (PY, [0, *PYH[1:]], PYU)
    both = rogan_gladen_stratified({"a": a, "b": a})
    one = rogan_gladen(*a)
    assert both.estimate == pytest.approx(one.estimate)
    assert both.se == pytest.approx(one.se / np.sqrt(2))


def test_kappa_ci_equals_statsmodels() -> None:
    judge = [3, 4, 2, 5, 1, 0, 3, 4, 2, 3, 5, 1, 2, 4, 3, 2, 2, 5, 4, 1]
    lawyer = [4, 4, 3, 5, 2, 1, 4, 5, 3, 3, 5, 3, 2, 5, 4, 0, 2, 3, 4, 1]
    scale = list(range(6))
    # statsmodels.stats.inter_rater.cohens_kappa(table, wt=...): kappa, std_kappa, low, upp
    expected = {
        None: (0.2638036809815951, 0.13243560432348578, 0.004234666236765883, 0.5233726957264244),
        "linear": (0.5426829268292683, 0.09884541791811077, 0.34894946767296103,
                   0.7364163859855757),
        "quadratic": (0.7505938242280286, 0.07687612655284921, 0.5999193849135007,
                      0.9012682635425564),
    }
    for weights, (k, se, lo, hi) in expected.items():
        res = kappa_ci(judge, lawyer, weights=weights, labels=scale)  # type: ignore[arg-type]
        assert res.n == 20
        assert (res.kappa, res.se, *res.ci) == pytest.approx((k, se, lo, hi), abs=1e-12)  # type: ignore[misc]
    undefined = kappa_ci([1, 1], [1, 1], labels=[0, 1])
    assert undefined.kappa is None and undefined.ci is None


def test_limits_of_agreement() -> None:
    judge, lawyer = np.array([4, 4, 3, 5, 2, 1, 4, 5.0]), np.array([3, 4, 2, 5, 1, 0, 3, 4.0])
    loa = limits_of_agreement(judge, lawyer)
    d = judge - lawyer
    assert loa.bias == pytest.approx(d.mean())
    assert (loa.lower, loa.upper) == pytest.approx((d.mean() - 1.96 * d.std(ddof=1),
                                                    d.mean() + 1.96 * d.std(ddof=1)))
    one = limits_of_agreement([3.0], [1.0])
    assert one.n == 1 and one.lower is None and one.sd is None


def test_effective_judges_kish() -> None:
    rng = np.random.default_rng(0)
    shared = rng.normal(size=200)
    same = np.vstack([shared + 0.01 * rng.normal(size=200) for _ in range(3)])
    assert effective_judges(same).effective_judges == pytest.approx(1.0, abs=0.01)
    independent = effective_judges(rng.normal(size=(3, 5000)))
    assert independent.effective_judges == pytest.approx(3.0, abs=0.1)
    errors = np.array([[1, 0, 1, 2, 0], [1, 1, 1, 2, 0], [0, 0, 1, 1, 1.0]])
    res = effective_judges(errors)
    r = np.corrcoef(errors)
    mean = (r[0, 1] + r[0, 2] + r[1, 2]) / 3
    assert res.mean_correlation == pytest.approx(mean)
    assert res.effective_judges == pytest.approx(3 / (1 + 2 * max(mean, 0)))
    flat = effective_judges(np.array([[1, 1, 1.0], [0, 1, 2.0]]))
    assert flat.mean_correlation is None and flat.effective_judges is None
