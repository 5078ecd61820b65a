"""Gwet's AC1/AC2 and PABAK against the reference implementation irrCAC 0.4.4.

The expected figures were computed once with ``irrCAC.raw.CAC(df, weights=..., categories=...,
digits=10).gwet()`` / ``.bp()`` on the tables below (two raters, no population correction,
95% t interval) and are pinned here; irrCAC is not a dependency (it pins scipy 1.12).
"""

from __future__ import annotations

import pytest

from legal_judge.stats import StatisticsError, cohen_kappa, gwet_ac, pabak

# The kappa paradox: 87.5% raw agreement on answers nearly all of which pass.
JUDGE_PF = ["pass"] * 34 + ["pass"] * 3 + ["fail"] * 2 + ["fail"]
LAWYER_PF = ["pass"] * 34 + ["fail"] * 3 + ["pass"] * 2 + ["fail"]
PF = ["fail", "pass"]
J = [5, 4, 4, 3, 5, 2, 4, 4, 5, 3, 1, 4, 5, 5, 4, 3, 4, 2, 5, 4, 0, 3, 4, 5]
H = [5, 4, 3, 3, 4, 2, 4, 5, 5, 4, 2, 4, 5, 4, 4, 3, 3, 2, 5, 4, 1, 2, 4, 5]
SCALE = [0, 1, 2, 3, 4, 5]
TOL = 1e-9


def _close(got: tuple[float, float] | None, want: tuple[float, float]) -> bool:
    return got is not None and all(abs(g - w) < TOL for g, w in zip(got, want, strict=True))


def test_ac1_pass_fail_equals_irrcac_and_survives_the_paradox() -> None:
    r = gwet_ac(JUDGE_PF, LAWYER_PF, labels=PF)
    assert r.name == "AC1" and r.n == 40
    assert r.value == pytest.approx(0.8512458163, abs=TOL)
    assert r.se == pytest.approx(0.0706900031, abs=TOL)
    assert _close(r.ci, (0.7082617889, 0.9942298437))
    assert r.pa == pytest.approx(0.875) and r.pe == pytest.approx(0.1596875)
    # the same table's kappa is far lower: what the compare verdict explains
    kappa = cohen_kappa(JUDGE_PF, LAWYER_PF, labels=PF)
    assert kappa is not None and kappa < 0.3


def test_pabak_equals_irrcac_brennan_prediger() -> None:
    r = pabak(JUDGE_PF, LAWYER_PF, labels=PF)
    assert r.value == pytest.approx(0.75, abs=TOL)
    assert r.se == pytest.approx(0.1059148182, abs=TOL)
    assert _close(r.ci, (0.5357670589, 0.9642329411))
    six = pabak(J, H, labels=SCALE)
    assert six.value == pytest.approx(0.55, abs=TOL)
    assert six.se == pytest.approx(0.121135928, abs=TOL)
    assert _close(six.ci, (0.2994112407, 0.8005887593))


@pytest.mark.parametrize(("weights", "value", "se", "ci"), [
    ("quadratic", 0.9529463021, 0.0151390407, (0.9216288104, 0.9842637939)),
    ("linear", 0.8358870457, 0.048159594, (0.736261335, 0.9355127564)),
    (None, 0.5598125127, 0.119659474, (0.3122780312, 0.8073469943)),
])
def test_ac2_ordinal_equals_irrcac(weights: str | None, value: float, se: float,
                                   ci: tuple[float, float]) -> None:
    r = gwet_ac(J, H, weights=weights, labels=SCALE)  # type: ignore[arg-type]
    assert r.name == ("AC1" if weights is None else "AC2")
    assert r.value == pytest.approx(value, abs=TOL)
    assert r.se == pytest.approx(se, abs=TOL)
    assert _close(r.ci, ci)


def test_upper_end_capped_at_one_as_irrcac() -> None:
    a, b = ["pass"] * 30, ["pass"] * 29 + ["fail"]
    ac1, pab = gwet_ac(a, b, labels=PF), pabak(a, b, labels=PF)
    assert ac1.value == pytest.approx(0.9655370477, abs=TOL)
    assert _close(ac1.ci, (0.8927042571, 1.0))
    assert pab.value == pytest.approx(0.9333333333, abs=TOL)
    assert _close(pab.ci, (0.7969846905, 1.0))


def test_missing_pairs_dropped_and_too_few_refused() -> None:
    r = gwet_ac([*JUDGE_PF, None], [*LAWYER_PF, "pass"], labels=PF)
    assert r.n == 40
    with pytest.raises(StatisticsError):
        gwet_ac(["pass"], ["pass"], labels=PF)
    one = gwet_ac(["pass", "pass"], ["pass", "pass"])
    assert one.value is None and one.ci is None
