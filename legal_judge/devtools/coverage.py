"""The coverage study of the judge-error-corrected intervals (issue 21, item 8).

A simulated judge of known error scores 2,000 items; 50 random items get lawyer labels (the
truth); repeated with a fixed seed. For a 0-5 rubric the judge is about +0.8 points generous with
noise; for the pass rate it passes 95% of the true passes and half of the true fails. The target
is the true mean over the 2,000 items. Beside PPI++ and plain PPI: the naive interval on the
judge's own scores (t CI of the mean, Wilson for the pass rate), which ignores the judge's error.

    python scripts/coverage_study.py --reps 1000
"""

from __future__ import annotations

import numpy as np

from legal_judge.stats import mean_ci, ppi_mean, proportion_ci

__all__ = ["coverage_study"]

N_ITEMS, N_LABELS = 2000, 50


def _rubric(rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    truth = rng.choice(np.arange(6.0), size=N_ITEMS, p=[0.1, 0.15, 0.2, 0.25, 0.2, 0.1])
    judge = np.clip(truth + 1 + rng.choice([-1.0, 0.0, 0.0, 1.0], size=N_ITEMS), 0, 5)
    return truth, judge


def _pass(rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    truth = (rng.random(N_ITEMS) < 0.5).astype(float)
    judge = np.where(truth == 1, rng.random(N_ITEMS) < 0.95, rng.random(N_ITEMS) < 0.5)
    return truth, judge.astype(float)


def coverage_study(reps: int, seed: int = 21) -> dict[str, dict[str, float]]:
    """Coverage and mean width of the PPI++, plain PPI and naive intervals over ``reps``."""
    rng = np.random.default_rng(seed)
    out: dict[str, dict[str, float]] = {}
    for name, draw in (("rubric 0-5", _rubric), ("pass rate", _pass)):
        hits = {"PPI++": 0, "PPI": 0, "naive": 0}
        widths = {"PPI++": 0.0, "PPI": 0.0, "naive": 0.0}
        for _ in range(reps):
            truth, judge = draw(rng)
            target = float(truth.mean())
            labelled = np.zeros(N_ITEMS, bool)
            labelled[rng.choice(N_ITEMS, N_LABELS, replace=False)] = True
            for label, tuned in (("PPI++", True), ("PPI", False)):
                res = ppi_mean(truth[labelled], judge[labelled], judge[~labelled], tuned=tuned)
                hits[label] += res.ci[0] <= target <= res.ci[1]
                widths[label] += res.ci[1] - res.ci[0]
            if name == "pass rate":
                lo, hi = proportion_ci(int(judge.sum()), N_ITEMS)
            else:
                ci = mean_ci(judge).ci95
                assert ci is not None  # N_ITEMS values always have an interval
                lo, hi = ci
            hits["naive"] += lo <= target <= hi
            widths["naive"] += hi - lo
        out[name] = {**{f"coverage {k}": v / reps for k, v in hits.items()},
                     **{f"width {k}": v / reps for k, v in widths.items()}}
    return out
