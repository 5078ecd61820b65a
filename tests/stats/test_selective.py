"""Fixed-sequence testing of the escalation threshold against hand-computed binomial figures."""

from __future__ import annotations

import pytest

from legal_judge.stats import fixed_sequence_threshold, labels_needed, min_items_zero_failures


@pytest.mark.parametrize(("target", "confidence", "n"), [
    (0.90, 0.95, 29),  # 0.9^28 = 0.0523 > 0.05 >= 0.9^29 = 0.0471
    (0.85, 0.95, 19),  # 0.85^18 = 0.0536, 0.85^19 = 0.0456
    (0.95, 0.95, 59),  # 0.95^58 = 0.0510, 0.95^59 = 0.0485
    (0.90, 0.99, 44),  # 0.9^43 = 0.0108, 0.9^44 = 0.0097
])
def test_start_rule(target: float, confidence: float, n: int) -> None:
    assert min_items_zero_failures(target, confidence) == n


def _labelled(disagree_at: set[int], n: int) -> tuple[list[float], list[bool]]:
    """Item i (0 = most confident) has confidence 1 - i/1000; it disagrees when i is listed."""
    return [1.0 - i / 1000 for i in range(n)], [i not in disagree_at for i in range(n)]


def test_walk_stops_at_first_acceptance_even_if_later_thresholds_would_reject() -> None:
    # 30 agreements, then one disagreement, then 29 agreements: with 60 kept and 1 disagreement
    # H0 would be rejected (P(X<=1) = 0.9^60 + 60*0.1*0.9^59 = 0.0138), but the walk stops at 31.
    conf, agrees = _labelled({30}, 60)
    run = [1.0 - i / 200 for i in range(200)]  # the run: 200 items spread over [0.005, 1]
    r = fixed_sequence_threshold(conf, agrees, run, target=0.90, confidence=0.95)
    assert r.guaranteed and r.min_start == 29
    assert [(s.n_kept, s.disagreements, s.rejected) for s in r.steps] == [
        (29, 0, True), (30, 0, True), (31, 1, False)]
    assert r.steps[0].p_value == pytest.approx(0.9**29)
    assert r.steps[2].p_value == pytest.approx(0.9**31 + 31 * 0.1 * 0.9**30)
    assert r.threshold == pytest.approx(1.0 - 29 / 1000)
    # run items with confidence >= 0.971: 1 - i/200 >= 0.971  <=>  i <= 5.8: six items
    assert r.n_kept_items == 6 and r.coverage == pytest.approx(6 / 200)
    assert r.n_kept_labelled == 30 and r.disagreements == 0 and r.observed_agreement == 1.0
    assert r.agreement_lower == pytest.approx(0.05 ** (1 / 30))  # exact bound with 30/30
    assert r.agreement_ci is not None and r.agreement_ci[1] == 1.0
    assert r.agreement_ci[0] == pytest.approx(0.025 ** (1 / 30))


def test_ties_share_a_threshold() -> None:
    conf = [0.9] * 35 + [0.5] * 10
    agrees = [True] * 35 + [False] * 10
    r = fixed_sequence_threshold(conf, agrees, conf, target=0.90, confidence=0.95)
    assert [(s.threshold, s.n_kept, s.disagreements) for s in r.steps] == [
        (0.9, 35, 0), (0.5, 45, 10)]
    assert r.threshold == 0.9 and r.coverage == pytest.approx(35 / 45)


def test_too_few_labels_cannot_guarantee_and_says_how_many_more() -> None:
    conf, agrees = _labelled(set(), 20)
    r = fixed_sequence_threshold(conf, agrees, conf, target=0.90, confidence=0.95)
    assert not r.guaranteed and r.threshold is None and r.steps == []
    assert r.coverage == 0.0
    assert r.best_achievable == pytest.approx(0.05 ** (1 / 20))  # 20/20: 0.8609
    assert r.labels_needed == 29 and r.more_labels == 9


def test_judges_wrong_everywhere_more_labels_do_not_help() -> None:
    conf, agrees = _labelled(set(range(0, 50, 4)), 50)  # 13 of 50 disagree, spread evenly
    r = fixed_sequence_threshold(conf, agrees, conf, target=0.90, confidence=0.95)
    assert not r.guaranteed
    assert r.steps and not r.steps[0].rejected  # 29 kept, 8 disagree
    assert r.labels_needed is None


def test_labels_needed_reference() -> None:
    # all kept, 5% disagreement: the smallest N with binom.cdf(round(.05 N), N, .1) <= .05
    assert labels_needed(0.05, 1.0, 0.90, 0.95) == 89  # k = 4 of 89: P = 0.0497
    assert labels_needed(0.0, 0.5, 0.90, 0.95) == 58  # floor(0.5 N) >= 29
    assert labels_needed(0.12, 1.0, 0.90, 0.95) is None


def test_weighted_labels_use_the_kish_effective_sample_size() -> None:
    # 40 confident labels of weight 1, 20 less confident of weight 3 (their stratum labelled at a
    # third of the rate), one of those disagreeing.
    conf = [0.9] * 40 + [0.5] * 20
    agrees = [True] * 40 + [False] + [True] * 19
    run = [0.9] * 50 + [0.5] * 50
    plain = fixed_sequence_threshold(conf, agrees, run, target=0.90, confidence=0.95)
    # unweighted: 60 kept, 1 disagreement: P(X <= 1; 60, 0.1) = 0.01378 rejects; coverage 100%
    assert plain.threshold == 0.5 and plain.steps[1].p_value == pytest.approx(0.013777078966)
    weighted = fixed_sequence_threshold(conf, agrees, run, target=0.90, confidence=0.95,
                                        weights=[1.0] * 40 + [3.0] * 20)
    first, second = weighted.steps
    # at 0.9 all weights are 1: the plain test (0.9^40 = 0.01478)
    assert (first.n_kept, first.disagreements) == (40, 0)
    assert first.p_value == pytest.approx(0.014780882941)
    # at 0.5: n_eff = floor(100^2 / 220) = 45; rate 3/100; ceil(0.03 * 45) = 2 disagreements;
    # P(X <= 2; 45, 0.1) = 0.15904 cannot reject: the walk stops, coverage halves
    assert (second.n_kept, second.disagreements, second.rejected) == (45, 2, False)
    assert second.p_value == pytest.approx(0.159042891685)
    assert weighted.threshold == 0.9 and weighted.coverage == 0.5
    # equal weights give back the unweighted walk exactly
    same = fixed_sequence_threshold(conf, agrees, run, target=0.90, confidence=0.95,
                                    weights=[2.5] * 60)
    assert same.steps == plain.steps and same.threshold == plain.threshold


def test_weights_must_be_one_positive_number_per_label() -> None:
    from legal_judge.stats import StatisticsError

    with pytest.raises(StatisticsError, match="positive"):
        fixed_sequence_threshold([0.5, 0.6], [True, True], [0.5], weights=[1.0, 0.0])
    with pytest.raises(StatisticsError, match="2 weights for 3"):
        fixed_sequence_threshold([0.5, 0.6, 0.7], [True] * 3, [0.5], weights=[1.0, 1.0])
