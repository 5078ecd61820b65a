"""Agreement statistics against sklearn / krippendorff / scipy reference values."""

from __future__ import annotations

import math

import pytest

from legal_judge.stats import (
    StatisticsError,
    agreement_summary,
    cohen_kappa,
    confusion_matrix_pf,
    krippendorff_alpha,
    mean_divergence,
    spearman,
)

REL, ABS = 1e-12, 1e-14
NAN = float("nan")

J = [1, 2, 3, 4, 5, 3, 2, 4, 5, 1, 3, 3, 2, 4, 4, 5, 1, 2]
H = [1, 2, 4, 4, 5, 3, 3, 4, 4, 2, 3, 2, 2, 5, 4, 5, 1, 1]


@pytest.mark.parametrize(
    ("weights", "expected"),
    [
        # sklearn.metrics.cohen_kappa_score(J, H, weights=...)
        (None, 0.5116279069767442),
        ("linear", 0.7439024390243902),
        ("quadratic", 0.8923076923076922),
    ],
)
def test_kappa_matches_sklearn(weights: str | None, expected: float) -> None:
    assert cohen_kappa(J, H, weights=weights) == pytest.approx(expected, rel=REL, abs=ABS)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("weights", "with_scale", "observed_only"),
    [
        # sklearn cohen_kappa_score(GJ, GH, weights=w, labels=[1..5]) and without labels
        (None, 0.33333333333333337, 0.33333333333333337),
        ("linear", 0.7, 0.5714285714285714),
        ("quadratic", 0.8888888888888888, 0.7692307692307692),
    ],
)
def test_kappa_labels_keep_unused_scale_points(
    weights: str | None, with_scale: float, observed_only: float
) -> None:
    gj = [1, 2, 5, 4, 5, 2, 1, 4, 5, 1, 2, 4]  # nobody used 3
    gh = [1, 2, 4, 4, 5, 2, 2, 5, 4, 2, 1, 4]
    assert cohen_kappa(gj, gh, weights=weights, labels=[1, 2, 3, 4, 5]) == pytest.approx(  # type: ignore[arg-type]
        with_scale, rel=REL, abs=ABS
    )
    assert cohen_kappa(gj, gh, weights=weights) == pytest.approx(observed_only, rel=REL, abs=ABS)  # type: ignore[arg-type]


def test_kappa_missing_and_errors() -> None:
    # Missing labels drop the pair: same as the complete data.
    assert cohen_kappa([*J, None, 3], [*H, 2, NAN]) == pytest.approx(
        0.5116279069767442, rel=REL, abs=ABS
    )
    assert cohen_kappa([3, 3, 3], [3, 3, 3]) is None  # no expected disagreement
    with pytest.raises(StatisticsError, match="not among the labels"):
        cohen_kappa([1, 6], [1, 2], labels=[1, 2, 3, 4, 5])
    with pytest.raises(StatisticsError, match="differ in length"):
        cohen_kappa([1], [1, 2])


RD = [
    [1, 2, 3, 3, 2, 1, 4, 1, 2, NAN, NAN, NAN],
    [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, NAN, 3],
    [NAN, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, NAN],
    [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, NAN],
]


@pytest.mark.parametrize(
    ("level", "expected"),
    [
        # krippendorff.alpha(reliability_data=RD, level_of_measurement=level)  (krippendorff 0.9.0)
        ("nominal", 0.743421052631579),
        ("ordinal", 0.8153875037548814),
        ("interval", 0.8491071428571428),
        ("ratio", 0.7974027747116121),
    ],
)
def test_alpha_with_missing_matches_krippendorff(level: str, expected: float) -> None:
    assert krippendorff_alpha(RD, level=level) == pytest.approx(expected, rel=REL, abs=ABS)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("level", "expected"),
    [
        # krippendorff.alpha(reliability_data=[J, H], level_of_measurement=level)
        ("nominal", 0.5242718446601942),
        ("ordinal", 0.8988575268817204),
        ("interval", 0.8952543822146216),
    ],
)
def test_alpha_two_raters_matches_krippendorff(level: str, expected: float) -> None:
    assert krippendorff_alpha([J, H], level=level) == pytest.approx(expected, rel=REL, abs=ABS)  # type: ignore[arg-type]


def test_alpha_none_values_and_degenerate() -> None:
    with_none = [[None if isinstance(v, float) and math.isnan(v) else v for v in row] for row in RD]
    assert krippendorff_alpha(with_none, level="interval") == pytest.approx(0.8491071428571428)
    assert krippendorff_alpha([[2, 2, 2], [2, 2, 2]]) is None
    with pytest.raises(StatisticsError, match="two or more ratings"):
        krippendorff_alpha([[1, NAN], [NAN, 2]])


def test_spearman_matches_scipy() -> None:
    r = spearman([*J, NAN], [*H, 3])
    # scipy.stats.spearmanr(J, H)
    assert r.rho == pytest.approx(0.8982797996406668, rel=REL, abs=ABS)
    assert r.p_value == pytest.approx(4.170741858926099e-07, rel=1e-9)
    assert (r.n, r.n_dropped) == (18, 1)
    assert spearman([1, 2, 3], [2, 2, 2]).rho is None


JS = [1.33, 2.0, 3.67, 4.0, 4.67, 3.0, 2.33, 4.0, 5.0, 1.0]  # ensemble means
HS = [1, 2, 4, 4, 5, 3, 3, 4, 4, 2]


def test_mean_divergence_matches_scipy() -> None:
    d = mean_divergence(JS, HS)
    # numpy mean / mean(abs) of JS - HS; scipy.stats.ttest_1samp(JS - HS, 0).confidence_interval()
    assert d.mean_signed == pytest.approx(-0.1, rel=1e-12)
    assert d.ci95 == pytest.approx((-0.4900426631383553, 0.29004266313835536), rel=1e-12)
    assert d.mean_absolute == pytest.approx(0.366, rel=1e-12)
    one = mean_divergence([4.0], [3.0])  # issue 20, item 17: was a zero-width CI (1.0, 1.0)
    assert (one.n, one.mean_signed, one.ci95) == (1, 1.0, None)
    same = mean_divergence([4.0, 3.0], [3.0, 2.0])  # sd = 0 is defined: the CI collapses
    assert same.ci95 == (1.0, 1.0)


def test_confusion_matrix_pf() -> None:
    jp = [True, True, False, True, False, False, True, True, None]
    hp = [True, False, False, True, False, True, True, True, False]
    c = confusion_matrix_pf(jp, hp)
    assert (c.n, c.both_pass, c.judge_pass_human_fail, c.judge_fail_human_pass, c.both_fail) == (
        8,
        4,
        1,
        1,
        2,
    )
    assert c.agreement == 0.75
    # sklearn cohen_kappa_score on the 8 complete pairs
    assert c.kappa == pytest.approx(0.4666666666666667, rel=REL, abs=ABS)


def test_agreement_summary_rounds_for_kappa_only() -> None:
    s = agreement_summary(JS, HS, labels=[1, 2, 3, 4, 5])
    # sklearn cohen_kappa_score(rint(JS), HS, weights=..., labels=[1..5])
    assert s.kappa == pytest.approx(0.6153846153846154, rel=REL, abs=ABS)
    assert s.kappa_linear == pytest.approx(0.7972972972972974, rel=REL, abs=ABS)
    assert s.kappa_quadratic == pytest.approx(0.9132947976878613, rel=REL, abs=ABS)
    # krippendorff.alpha([rint(JS), HS], "ordinal") and ([JS, HS], "interval")
    assert s.alpha_ordinal == pytest.approx(0.9248801916932907, rel=REL, abs=ABS)
    assert s.alpha_interval == pytest.approx(0.915011474395338, rel=REL, abs=ABS)
    # scipy.stats.spearmanr(JS, HS) on the raw scores
    assert s.spearman_rho == pytest.approx(0.9153777730532723, rel=REL, abs=ABS)
    assert s.spearman_p == pytest.approx(0.0002023568096558185, rel=1e-9)
    assert s.divergence.mean_signed == pytest.approx(-0.1)
    assert s.pass_fail is None and s.n == 10


def test_kappa_rejects_unknown_weights_and_alpha_non_numbers() -> None:
    with pytest.raises(StatisticsError, match="kappa weights"):
        cohen_kappa(J, H, weights="None")  # type: ignore[arg-type]
    with pytest.raises(StatisticsError, match="not a number"):
        spearman(["high", "low"], [1, 2])  # type: ignore[list-item]


def test_alpha_accepts_a_float_matrix() -> None:
    import numpy as np

    assert krippendorff_alpha(np.array(RD), level="ordinal") == pytest.approx(0.8153875037548814)
    with pytest.raises(StatisticsError, match="raters x units"):
        krippendorff_alpha(np.array([1.0, 2.0]))
    with pytest.raises(StatisticsError, match="not a number"):
        krippendorff_alpha([["a", "b"], ["a", "c"]])
