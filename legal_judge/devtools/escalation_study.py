"""Validation study of the escalation guarantee (issue 30): does it hold, and what breaks it?

Each repetition simulates one run of :data:`N_ITEMS` answers judged by three simulated judges:

* every answer has a true quality ``q ~ Uniform(0, 4)`` and a latent difficulty ``d``; the
  lawyers fail it when ``q <= 1`` (the rubric set's ``legal_soundness <= 1`` line);
* each judge scores ``q + N(0, sd)`` with ``sd = 0.3 + 4 d^2`` (clipped to 0-5) and passes the
  answer when its score is above 1: a judge's error depends on the item's difficulty (and on how
  close the answer is to the line), as the issue asks;
* the ensemble result (vote, mean scores, score ranges, flags) is built as the runner stores it,
  and the product's own :func:`~legal_judge.calibration.confidence.item_confidence` scores it.

:data:`N_LABELS` items drawn at random are the lawyers' labels; the threshold comes from
:func:`~legal_judge.stats.fixed_sequence_threshold`, and the *realised* agreement is measured on
every kept item of the run. A repetition that guarantees nothing keeps nothing and counts as a
success (the guarantee is vacuous), as in the paper; the share guaranteed is reported beside it.

``shifted`` draws the labels from a different distribution: the lawyers labelled only easy
answers (``d < 0.3``) while the run's difficulty is ``Uniform(0, 1)``. The threshold is then set
on labels that overstate the judges, the realised agreement falls below the target more often,
and the product's exchangeability check
(:func:`~legal_judge.calibration.escalation.exchangeability_note`) should fire.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from legal_judge.calibration.confidence import item_confidence
from legal_judge.calibration.escalation import exchangeability_note
from legal_judge.calibration.rubrics import rubric_specs
from legal_judge.stats import fixed_sequence_threshold

__all__ = ["N_ITEMS", "N_LABELS", "TARGETS", "escalation_study", "simulate_run"]

N_ITEMS = 2000
N_LABELS = 100
TARGETS = (0.85, 0.90)
_JUDGES = 3


def simulate_run(rng: np.random.Generator, n: int = N_ITEMS
                 ) -> tuple[list[dict[str, Any]], np.ndarray, np.ndarray]:
    """One simulated run: the stored-result dicts, the lawyers' pass (bool) and the difficulty."""
    q = rng.uniform(0.0, 4.0, n)
    d = rng.uniform(0.0, 1.0, n)
    sd = 0.3 + 4.0 * d**2
    scores = np.clip(q[:, None] + rng.normal(0.0, 1.0, (n, _JUDGES)) * sd[:, None], 0.0, 5.0)
    passes = scores > 1.0
    juris = np.clip(3.0 + rng.normal(0.0, 0.5, (n, _JUDGES)), 0.0, 5.0)
    results = []
    for i in range(n):
        votes = float(passes[i].sum()) / _JUDGES
        ranges = {"legal_soundness": float(np.ptp(scores[i])),
                  "jurisdiction_awareness": float(np.ptp(juris[i]))}
        split = 0 < passes[i].sum() < _JUDGES
        results.append({
            "item_id": f"i{i}", "status": "ok", "overall": "pass" if votes > 0.5 else "fail",
            "votes": {"pass": votes, "fail": 1.0 - votes},
            "scores": {"legal_soundness": float(scores[i].mean()),
                       "jurisdiction_awareness": float(juris[i].mean())},
            "disagreement": {r: {"range": v} for r, v in ranges.items()},
            "flagged_for_review": split or max(ranges.values()) >= 2.0, "checks": {}})
    return results, q > 1.0, d


def _one(rng: np.random.Generator, *, shifted: bool) -> dict[float, tuple[bool, bool, float, bool]]:
    """Per target: (guaranteed, realised >= target, coverage, warning fired)."""
    rset, _ = rubric_specs()
    results, truth, difficulty = simulate_run(rng)
    conf = np.array([item_confidence(r, rset).value for r in results])  # type: ignore[union-attr]
    agree = np.array([(r["overall"] == "pass") == t for r, t in zip(results, truth, strict=True)])
    if shifted:
        pool = np.flatnonzero(difficulty < 0.3)
        labelled = rng.choice(pool, N_LABELS, replace=False)
    else:
        labelled = rng.choice(len(results), N_LABELS, replace=False)
    warned = exchangeability_note(conf[labelled].tolist(), conf.tolist()) is not None
    out = {}
    for target in TARGETS:
        fs = fixed_sequence_threshold(conf[labelled], agree[labelled], conf, target=target,
                                      confidence=0.95)
        if not fs.guaranteed or fs.threshold is None:
            out[target] = (False, True, 0.0, warned)
            continue
        kept = conf >= fs.threshold
        out[target] = (True, bool(agree[kept].mean() >= target), float(kept.mean()), warned)
    return out


def escalation_study(reps: int = 1000, seed: int = 30, *, shifted: bool = False
                     ) -> dict[str, dict[str, float]]:
    """The study's figures per target: the share of repetitions whose realised agreement on the
    kept items reached the target, the share guaranteed, the mean coverage when guaranteed, and
    the share where the exchangeability warning fired."""
    rng = np.random.default_rng(seed)
    rows: dict[float, list[tuple[bool, bool, float, bool]]] = {t: [] for t in TARGETS}
    for _ in range(reps):
        for target, got in _one(rng, shifted=shifted).items():
            rows[target].append(got)
    figures = {}
    for target, outcomes in rows.items():
        guaranteed = [g for g in outcomes if g[0]]
        figures[f"target {target:.2f}"] = {
            "held": float(np.mean([g[1] for g in outcomes])),
            "guaranteed": len(guaranteed) / len(outcomes),
            "coverage": float(np.mean([g[2] for g in guaranteed])) if guaranteed else 0.0,
            "warned": float(np.mean([g[3] for g in outcomes])),
        }
    return figures
