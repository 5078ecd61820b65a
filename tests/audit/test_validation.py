"""Statistical validation with the simulated judge: the audit finds what is there, and does not cry
wolf. The full study (200 repetitions) is marked slow; a reduced one always runs."""

from __future__ import annotations

import os

import pytest

from legal_judge.audit.dimensions import resolve_dimensions
from legal_judge.audit.validation import EIGHT, validation_study


def test_power_d_05_60_pairs_reduced() -> None:
    res = validation_study("simulated:fair?verbosity=0.5", ["verbosity"], repetitions=40)
    # Exact power of a paired t-test at d_z = 0.5, n = 60, alpha = 0.05 is 0.97.
    assert res.rate("verbosity") >= 0.9
    assert 0.35 < res.mean_effect["verbosity"] < 0.65  # the injected d_z really is ~0.5


def test_false_positive_rate_eight_null_dimensions_reduced() -> None:
    res = validation_study("simulated:fair", EIGHT, repetitions=40)
    # Holm keeps the family-wise error at or below 0.05; P(>= 6 of 40 | 0.05) < 0.02.
    assert res.any_flagged <= 5, res.flagged_counts


FULL = pytest.mark.skipif(not os.environ.get("LEGAL_JUDGE_FULL_STUDY"),
                          reason="long: set LEGAL_JUDGE_FULL_STUDY=1 (or run "
                                 "scripts/audit_validation.py)")


# The 200-repetition flag studies cost about 1,100 CPU seconds (2.5 s per eight-dimension
# repetition), some 9 minutes of a 2-core CI run: they run with LEGAL_JUDGE_FULL_STUDY=1 -m slow.
# The reduced studies above always run, seeded, so their results are exact, not flaky.
@pytest.mark.slow
@FULL
def test_power_full_200_repetitions() -> None:
    single = validation_study("simulated:fair?verbosity=0.5", ["verbosity"], repetitions=200)
    assert single.rate("verbosity") >= 0.9
    among_eight = validation_study("simulated:fair?verbosity=0.5", EIGHT, repetitions=200)
    others = sum(v for k, v in among_eight.flagged_counts.items() if k != "verbosity")
    assert among_eight.rate("verbosity") >= 0.75 and others <= 20  # 200 x 7 null dims, Holm


@pytest.mark.slow
@FULL
def test_false_positive_rate_full_200_repetitions() -> None:
    res = validation_study("simulated:fair", EIGHT, repetitions=200)
    assert res.rate() <= 0.08  # 0.05 plus sampling error (binomial sd 0.015)


# The certification study: verdicts, not flags. Seeded, so the reduced runs below are exact, not
# flaky; the full study (200 repetitions per profile at the defaults) takes about an hour on this
# machine, so it runs from scripts/audit_validation.py or with LEGAL_JUDGE_FULL_STUDY=1 -m slow.
THREE = ["verbosity", "authority", "formatting"]


def test_certification_reduced_fair_certified_judges_that_cannot_judge_never() -> None:
    fair = validation_study("simulated:fair", THREE, repetitions=1, pairs=20, probes=None,
                            items="sample", workers=1)
    assert fair.verdict_counts == {"certified": 1}, fair.probe_failed_counts
    for profile in ("constant", "insensitive"):
        res = validation_study(f"simulated:{profile}", THREE, repetitions=1, pairs=20,
                               probes=None, items="sample", workers=1)
        assert res.verdict_counts == {"insensitive": 1}
        assert len(res.probe_failed_counts) == 6  # every probe failed
    demo = validation_study("simulated:demo-openai", THREE, repetitions=1, pairs=20, probes=None,
                            items="sample", workers=1)
    assert demo.verdict_counts == {"biased": 1} and demo.probe_failed_counts == {}


@pytest.mark.slow
@FULL
def test_certification_full_200_repetitions_at_the_defaults() -> None:
    nine = [d.name for d in resolve_dimensions(None)]
    for profile in ("constant", "insensitive"):
        res = validation_study(f"simulated:{profile}", nine, repetitions=200, probes=None,
                               items="sample")
        assert res.verdict_counts.get("certified", 0) == 0
    fair = validation_study("simulated:fair", nine, repetitions=200, probes=None, items="sample")
    assert fair.verdict_rate("certified") >= 0.8
    for profile in ("demo-openai", "biased"):
        res = validation_study(f"simulated:{profile}", nine, repetitions=50, probes=None,
                               items="sample")
        assert res.verdict_rate("biased") >= 0.95
