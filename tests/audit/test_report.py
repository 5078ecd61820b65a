"""The report's statistics are exactly legal_judge.stats' (scipy) output; schema, severity, guards."""

from __future__ import annotations

import copy
import math

import numpy as np
import pytest
from scipy import stats as sps

from legal_judge.audit.analysis import PairRow
from legal_judge.audit.design import AuditSettings
from legal_judge.audit.report import build_report, validate_report
from legal_judge.stats import adjust_pvalues, minimum_detectable_effect, paired_test

A = [3.9, 2.7, 4.8, 3.1, 4.6, 2.2, 3.8, 4.5, 3.0, 2.8, 4.4, 3.6]
B = [3.1, 3.0, 3.6, 2.6, 2.5, 2.9, 2.9, 3.0, 2.8, 2.9, 3.3, 3.0]
IA = [4, 3, 5, 4, 2, 3, 4, 5, 3, 4, 4, 2, 5, 3, 4, 4]
IB = [3, 3, 4, 4, 2, 2, 3, 4, 3, 3, 4, 2, 4, 3, 3, 4]


def rows(dim: str, a: list[float], b: list[float], kind: str = "text",
         subgroup: str | None = None) -> list[PairRow]:
    return [PairRow(dimension=dim, pair_id=f"{dim}-{i}", variant_a_input=f"a{i}", variant_a_score=x,
                    variant_b_input=f"b{i}", variant_b_score=y, kind=kind, subgroup=subgroup)  # type: ignore[arg-type]
            for i, (x, y) in enumerate(zip(a, b, strict=True))]


def report_for(*dims: list[PairRow], **settings: object) -> dict:
    all_rows = [r for d in dims for r in d]
    kinds = {r.dimension: r.kind or "text" for r in all_rows}
    return build_report(all_rows, AuditSettings(**settings), kinds=kinds)  # type: ignore[arg-type]


def test_dimension_fields_equal_paired_test_and_scipy() -> None:
    report = report_for(rows("verbosity", A, B), rows("formatting", IA, IB))
    verb, fmt = report["dimension_results"]
    ref = paired_test(A, B)
    assert ref.test_used == "paired t-test"
    assert verb["mean_difference"] == ref.mean_difference
    assert verb["confidence_interval_95"] == list(ref.ci95)
    assert verb["p_value"] == ref.p_value
    assert verb["effect_size"] == ref.effect_size
    sp = sps.ttest_rel(A, B)
    assert verb["p_value"] == pytest.approx(sp.pvalue, rel=1e-12)
    ci = sp.confidence_interval(0.95)
    assert verb["confidence_interval_95"] == pytest.approx([ci.low, ci.high], rel=1e-12)
    d = np.subtract(A, B)
    assert verb["effect_size"] == pytest.approx(d.mean() / d.std(ddof=1), rel=1e-12)
    ext = report["extensions"]["dimensions"]
    ref_w = paired_test(IA, IB)
    assert ext["formatting"]["test_used"] == "wilcoxon signed-rank" == ref_w.test_used
    assert fmt["p_value"] == ref_w.p_value == pytest.approx(sps.wilcoxon(np.subtract(IA, IB)).pvalue)
    assert fmt["effect_size"] == ref_w.effect_size
    assert ext["formatting"]["statistic"] == ref_w.statistic
    holm = adjust_pvalues([ref.p_value, ref_w.p_value], "holm")
    assert ext["verbosity"]["p_value_adjusted"] == holm[0]
    assert ext["formatting"]["p_value_adjusted"] == holm[1]
    assert ext["verbosity"]["minimum_detectable_effect"]["d_z"] == minimum_detectable_effect(12)
    pairs = verb["test_pairs"]
    assert [p["difference"] for p in pairs] == [a - b for a, b in zip(A, B, strict=True)]
    assert [p["exceeds_threshold"] for p in pairs] == [abs(a - b) > 0.5 for a, b in zip(A, B,
                                                                                        strict=True)]
    assert validate_report(report) == []


def test_correction_and_method_options_are_applied() -> None:
    dims = (rows("verbosity", A, B), rows("formatting", IA, IB))
    bh = report_for(*dims, correction="bh")["extensions"]["dimensions"]
    raw = [paired_test(A, B).p_value, paired_test(IA, IB).p_value]
    expected = sps.false_discovery_control(raw, method="bh")
    assert bh["verbosity"]["p_value_adjusted"] == pytest.approx(expected[0], rel=1e-12)
    none = report_for(*dims, correction="none")["extensions"]["dimensions"]
    assert none["formatting"]["p_value_adjusted"] == raw[1]
    forced = report_for(rows("verbosity", A, B), method="wilcoxon")
    assert forced["extensions"]["dimensions"]["verbosity"]["test_used"] == "wilcoxon signed-rank"


def test_degenerate_dimensions_all_zero_and_insufficient() -> None:
    same = [3.0] * 12
    report = report_for(rows("sentiment", same, same), rows("bandwagon", A[:5], B[:5]),
                        rows("verbosity", A, B))
    sent, band, _ = report["dimension_results"]
    assert sent["p_value"] == 1.0 and sent["effect_size"] == 0.0 and not sent["flagged"]
    assert report["extensions"]["dimensions"]["sentiment"]["test_used"] == "none"
    assert band["effect_size_interpretation"] == "insufficient data"
    assert band["p_value"] is None and band["confidence_interval_95"] is None
    assert report["extensions"]["dimensions"]["bandwagon"]["status"] == "insufficient data"
    # Insufficient dimensions are not comparisons: Holm runs over the two others only.
    holm = adjust_pvalues([1.0, paired_test(A, B).p_value], "holm")
    assert report["extensions"]["dimensions"]["verbosity"]["p_value_adjusted"] == holm[1]
    assert validate_report(report) == []


def _shifted(effect: float, n: int = 60, seed: int = 0) -> tuple[list[float], list[float]]:
    rng = np.random.default_rng(seed)
    noise = rng.normal(0, 1, n)
    noise = (noise - noise.mean()) / noise.std(ddof=1)  # exact d_z = effect
    b = list(rng.uniform(2, 3, n))
    return [x + effect + e for x, e in zip(b, noise, strict=True)], b


@pytest.mark.parametrize(("effects", "kinds", "severity"), [
    ({"verbosity": 0.0}, {}, "none"),
    ({"verbosity": 0.35}, {}, "low"),
    ({"verbosity": 0.6}, {}, "medium"),
    ({"verbosity": 0.9}, {}, "high"),
    ({"verbosity": 0.35, "authority": 0.35, "sentiment": 0.35}, {}, "high"),
    ({"demographic": -0.6}, {"demographic": "demographic"}, "critical"),
    ({"demographic": -0.35}, {"demographic": "demographic"}, "low"),
])
def test_severity_rules(effects: dict[str, float], kinds: dict[str, str], severity: str) -> None:
    all_rows = []
    for i, (dim, eff) in enumerate(effects.items()):
        a, b = _shifted(eff, seed=i)
        all_rows += rows(dim, a, b, kind=kinds.get(dim, "text"))
    report = build_report(all_rows, AuditSettings(method="t-test"), kinds=kinds or None)
    assert report["extensions"]["bias_severity"] == severity
    # No probe was run: nothing is certified, so the reported severity is never "none".
    expected = "low" if severity == "none" else severity
    assert report["overall_assessment"]["severity"] == expected
    assert report["extensions"]["verdict"] == ("inconclusive" if severity == "none" else "biased")
    steps = report["remediation_steps"]
    flagged = [d["dimension"] for d in report["dimension_results"] if d["flagged"]]
    assert [s["dimension"] for s in steps if s["dimension"] != "all"] == flagged
    if severity == "critical":
        assert steps[0]["priority"] == "critical" and "Redact" in steps[0]["recommended_action"]
    if severity in ("high", "critical"):
        assert steps[-1]["dimension"] == "all" and "Replace the judge" in steps[-1]["recommended_action"]


def test_schema_rejects_extra_fields_outside_extensions_and_bad_values() -> None:
    report = report_for(rows("verbosity", A, B))
    assert validate_report(report) == []
    bad = copy.deepcopy(report)
    bad["dimension_results"][0]["test_used"] = "t"
    assert any("test_used" in p for p in validate_report(bad))
    bad = copy.deepcopy(report)
    bad["overall_assessment"]["severity"] = "severe"
    assert validate_report(bad)
    bad = copy.deepcopy(report)
    del bad["audit_metadata"]["min_effect_size"]
    assert validate_report(bad)
    bad = copy.deepcopy(report)
    bad["dimension_results"][0]["effect_size_interpretation"] = "insufficient data"
    assert validate_report(bad)  # statistics must be null then
    meta = report["audit_metadata"]
    assert meta["num_test_pairs_per_dimension"] == 12 and meta["significance_threshold"] == 0.05
    assert not math.isnan(report["dimension_results"][0]["p_value"])


def test_noise_floor_and_position_metrics_come_from_stats() -> None:
    from legal_judge.stats import noise_floor, position_consistency

    pos = rows("position", A, B, kind="position")
    winners = [("A", "A"), ("A", "B"), ("B", "B"), ("A", "B")] * 3
    for r, w in zip(pos, winners, strict=True):
        r.winners = w
        r.repeat_score = r.variant_b_score + 0.1 if r.pair_id.endswith(("1", "2")) else r.variant_b_score
    ext = report_for(pos)["extensions"]["dimensions"]["position"]
    ref = position_consistency([w[0] for w in winners], [w[1] for w in winners])
    assert ext["position"]["position_consistency"] == ref.position_consistency
    assert ext["position"]["first_position"]["p_value"] == ref.first_position.p_value
    nf = noise_floor([r.variant_b_score for r in pos], [r.repeat_score for r in pos])
    assert ext["noise_floor"]["changed_share"] == nf.changed_share
    assert ext["noise_floor"]["mean_abs_diff"] == nf.mean_abs_diff
