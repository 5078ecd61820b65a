"""`audit diff` marks a bias that moved away from zero significantly as `worse` (issue 29).

Applying `aware` for bandwagon made position worse (+0.72 -> +1.12): shown only as "still flagged".
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from scipy import stats as sps

from legal_judge.audit.history import diff_reports, moved_away

from .helpers import invoke

OLD = [1, 0.5, 1, 0.5, 0.5, 1, 0.5, 1, 0.5, 0.7]      # mean +0.72
NEW = [1.5, 1, 1.5, 0.5, 1, 1.5, 1, 1.5, 0.5, 1.2]    # mean +1.12, the same pairs


def report(diffs: list[float], *, flagged: bool = True, effect: float = 1.0) -> dict[str, Any]:
    pairs = [{"variant_a_input": f"a{i}", "variant_b_input": f"b{i}", "variant_a_score": d,
              "variant_b_score": 0.0, "difference": d, "exceeds_threshold": True}
             for i, d in enumerate(diffs)]
    mean = round(sum(diffs) / len(diffs), 4)
    return {"audit_metadata": {"significance_threshold": 0.05},
            "dimension_results": [{"dimension": "position", "mean_difference": mean,
                                   "effect_size": effect, "flagged": flagged,
                                   "test_pairs": pairs}]}


def test_moving_away_from_zero_significantly_is_worse_not_still_flagged() -> None:
    row = diff_reports(report(OLD, effect=0.72), report(NEW, effect=1.12))[0]
    assert row["mean_difference_old"] == 0.72 and row["mean_difference_new"] == 1.12
    assert row["status"] == "worse" and row["worse"]
    expected = sps.ttest_rel(NEW, OLD, alternative="greater").pvalue
    assert row["moved_away_p"] == expected < 0.05


def test_identical_audits_stay_still_flagged_and_a_negative_bias_moves_away_downwards() -> None:
    same = diff_reports(report(OLD), report(OLD))[0]
    assert same["status"] == "still flagged" and same["moved_away_p"] == 1.0
    down = moved_away(report([-x for x in OLD])["dimension_results"][0],
                      report([-x for x in NEW])["dimension_results"][0], alpha=0.05)
    assert down is not None and down < 0.05
    toward = diff_reports(report(NEW), report(OLD))[0]  # back toward zero: not worse
    assert toward["status"] == "still flagged"


def test_the_diff_says_at_which_significance_worse_was_decided(tmp_path: Path) -> None:
    # Walk of the audit area: a change of +0.01 in effect showed "worse" with nothing saying the
    # new audit was made at significance 0.5 (one-sided p = 0.49 was "significant").
    old, new = tmp_path / "old.json", tmp_path / "new.json"
    old.write_text(json.dumps(report(OLD, effect=0.72)))
    loose = report(NEW, effect=1.12)
    loose["audit_metadata"]["significance_threshold"] = 0.5
    new.write_text(json.dumps(loose))
    res = invoke(tmp_path / "home", "audit", "diff", str(old), str(new), "--force")
    assert res.exit_code == 0, res.output
    p = sps.ttest_rel(NEW, OLD, alternative="greater").pvalue
    assert ("worse: the bias moved away from zero, one-sided p below the new audit's "
            f"significance 0.5 (position p = {p:.2g})") in " ".join(res.output.split())
