"""``calibrate plan``: how much lawyers' time the next calibration and the escalation need.

From the newest calibration of the run's ensemble (its pass/fail table against the lawyers) and
the run's newest escalation, or from stated assumptions (``pass_rate``, ``rho``, ``coverage``,
``disagreement``), it answers three questions:

* how many labels give a judge-error-corrected pass rate within ±``margin`` (PPI++ with the
  observed judge-lawyer correlation, :func:`legal_judge.stats.labels_for_margin`), beside the
  count without the judges, and whether the correlation clears the break-even ``1/sqrt(n - 2)``;
* how many labels the escalation needs to guarantee ``target`` at ``confidence`` at the observed
  coverage and disagreement among kept items (:func:`legal_judge.stats.labels_needed`);
* how many answers per 1,000 go to a lawyer at that coverage.
"""

from __future__ import annotations

import math
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from legal_judge.calibration.data import ENSEMBLE, ensemble_judge_id
from legal_judge.calibration.escalation import check_levels
from legal_judge.errors import ConfigError
from legal_judge.stats import break_even_correlation, labels_for_margin, labels_needed
from legal_judge.store import Store

__all__ = ["LabelPlan", "plan_labels"]


class LabelPlan(BaseModel):
    """The figures of ``calibrate plan`` and where each input came from."""

    model_config = ConfigDict(extra="forbid")

    run_id: str
    n_items: int
    margin: float
    pass_rate: float
    rho: float
    sources: dict[str, str]
    labels_without_judges: int | None
    labels_with_judges: int | None
    break_even_rho: float | None
    judges_help: bool | None
    target: float
    confidence: float
    coverage: float
    disagreement: float
    escalation_labels: int | None
    escalated_per_1000: int
    notes: list[str] = Field(default_factory=list)


def _phi(pf: dict[str, Any]) -> float | None:
    a, b = pf["both_pass"], pf["judge_pass_human_fail"]
    c, d = pf["judge_fail_human_pass"], pf["both_fail"]
    den = math.sqrt((a + b) * (c + d) * (a + c) * (b + d))
    return (a * d - b * c) / den if den else None


#: Each input's range: (low, high, whether low itself is allowed).
_RANGES = {"margin": (0.0, 1.0, False), "pass_rate": (0.0, 1.0, True), "rho": (-1.0, 1.0, True),
           "coverage": (0.0, 1.0, False), "disagreement": (0.0, 1.0, True)}


def _check_inputs(**values: float | None) -> None:
    """A stated input out of range (``--pass-rate 1.5``, ``--coverage 0``) gave a plan of
    "1 labels" or a false reason; refused with the range instead."""
    bad = []
    for name, value in values.items():
        low, high, closed = _RANGES[name]
        if value is not None and not ((low <= value if closed else low < value) and value <= high):
            bad.append(f"--{name.replace('_', '-')} {value:g}: must be a number "
                       f"{'from' if closed else 'above'} {low:g} {'to' if closed else 'up to'} "
                       f"{high:g}")
    if bad:
        raise ConfigError("bad plan input: " + "; ".join(bad), code="plan-inputs",
                          fix="state a value in range, or drop the flag (--margin defaults to "
                              "0.05; the others are measured from the newest calibration and "
                              "escalation)")


def plan_labels(store: Store, run_id: str, *, margin: float = 0.05, target: float = 0.90,
                confidence: float = 0.95, pass_rate: float | None = None,
                rho: float | None = None, coverage: float | None = None,
                disagreement: float | None = None) -> LabelPlan:
    """The label plan of a run (see the module docstring).

    Raises:
        NotFoundError: unknown run. ConfigError: an input neither measured nor given.
    """
    _check_inputs(margin=margin, pass_rate=pass_rate, rho=rho, coverage=coverage,
                  disagreement=disagreement)
    check_levels(target, confidence)
    run = store.get_run(run_id)
    n_items = sum(1 for _ in store.iter_results(run_id))
    cal = store.calibrations.latest_report_of_judge(ensemble_judge_id(run["config"]),
                                                    not_of_run="")
    pf = ((cal or {}).get("pass_fail") or {}).get(ENSEMBLE)
    esc = store.escalations.latest_of_run(run_id)
    sources: dict[str, str] = {}
    cal_id = (cal or {}).get("calibration_id")
    if pass_rate is None and pf:
        pass_rate = (pf["both_pass"] + pf["judge_fail_human_pass"]) / pf["n"]
        sources["pass_rate"] = f"lawyers' pass rate in {cal_id}"
    if rho is None and pf:
        rho = _phi(pf)
        sources["rho"] = f"judge-lawyer pass/fail correlation (phi) in {cal_id}"
    if esc and esc.get("guaranteed"):
        if coverage is None:
            coverage = float(esc["coverage"])
            sources["coverage"] = f"escalation {esc['escalation_id']}"
        if disagreement is None:
            disagreement = 1.0 - float(esc["observed_agreement"])
            sources["disagreement"] = f"kept labelled items of escalation {esc['escalation_id']}"
    if disagreement is None and pf:
        disagreement = 1.0 - float(pf["agreement"])
        sources["disagreement"] = f"all labelled items of {cal_id} (no guaranteed escalation)"
    if coverage is None:
        coverage = 1.0
        sources["coverage"] = "assumed 100% (no guaranteed escalation: give --coverage)"
    missing = [k for k, v in (("pass_rate", pass_rate), ("rho", rho),
                              ("disagreement", disagreement)) if v is None]
    if missing:
        raise ConfigError(f"no calibration of the ensemble of run '{run_id}' to measure "
                          f"{', '.join(missing)} from", code="plan-inputs",
                          fix="state them: --pass-rate 0.8 --rho 0.6 --disagreement 0.05, or "
                              "run `calibrate compare` on a labelled run first")
    assert pass_rate is not None and rho is not None and disagreement is not None
    for key in ("pass_rate", "rho", "disagreement", "coverage"):
        sources.setdefault(key, "stated")
    variance = pass_rate * (1.0 - pass_rate)
    plain = labels_for_margin(variance, margin) if variance > 0 else 1
    with_judges = labels_for_margin(variance, margin, rho=rho,
                                    n_unlabelled=max(n_items, 1)) if variance > 0 else 1
    be = break_even_correlation(with_judges) if with_judges and with_judges >= 3 else None
    notes = []
    if variance == 0:
        notes.append("the lawyers' pass rate is 0 or 1: any label count gives a zero-width CI; "
                     "label more before planning")
    escalation = labels_needed(disagreement, coverage, target, confidence)
    if escalation is None:
        notes.append("no number of labels can guarantee the target at this disagreement: every "
                     "answer would go to a lawyer")
    return LabelPlan(
        run_id=run_id, n_items=n_items, margin=margin, pass_rate=pass_rate, rho=rho,
        sources=sources, labels_without_judges=plain, labels_with_judges=with_judges,
        # PPI++ clips lambda to [0, 1]: a negative correlation cannot help.
        break_even_rho=be, judges_help=None if be is None else rho >= be,
        target=target, confidence=confidence, coverage=coverage, disagreement=disagreement,
        escalation_labels=escalation,
        escalated_per_1000=1000 if escalation is None else round(1000 * (1.0 - coverage)),
        notes=notes)
