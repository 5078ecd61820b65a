"""Audit settings the statistics cannot use are refused before the audit exists (exit 2, no audit
row, no judge call), and the equivalence interval is named by the level it was computed at."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from pg_server import open_store

from legal_judge.stats import tost_paired

from .helpers import invoke

SMALL = ("--judge", "simulated:fair", "--dimensions", "verbosity", "--pairs", "12",
         "--noise-pairs", "2", "--probes", "hedge_only")


@pytest.mark.parametrize(("flags", "said"), [
    # Before: every judge call was made, then "internal error: ValueError: `confidence_level`
    # must be a number between 0 and 1" (exit 70), leaving an `interrupted` audit whose resume
    # failed the same way.
    (("--significance", "0.6"), "0.6 is above 0.5: the equivalence test (TOST)"),
    # Before: every judge call was made, then "the equivalence margin must be positive, got 0.0"
    # (exit 2, without naming the flag), leaving an unresumable `interrupted` audit.
    (("--disparity-threshold", "0"), "the equivalence margin is 0 (--disparity-threshold 0 and "
                                     "no --equivalence-margin)"),
])
def test_settings_the_statistics_cannot_use_are_refused_before_the_audit(
        tmp_path: Path, flags: tuple[str, ...], said: str) -> None:
    home = tmp_path / "home"
    res = invoke(home, "audit", "run", *SMALL, *flags)
    assert res.exit_code == 2, res.output
    assert said in " ".join(res.output.split())
    store = open_store(home)
    assert store.audits.recent(limit=5) == []  # no audit to resume, no judge call paid
    store.close()
    stats = invoke(home, "audit", "stats", str(tmp_path / "none.jsonl"), *flags)
    assert stats.exit_code == 2 and said in " ".join(stats.output.split())


def test_the_equivalence_interval_is_named_by_its_level(tmp_path: Path) -> None:
    # Before: "90% CI" whatever the significance; at 0.5 the "90% CI" was the mean twice.
    assert tost_paired([1.0, 2.0, 3.0], [1.5, 2.0, 2.5], margin=1.0).ci_level == \
        pytest.approx(0.9)
    out = tmp_path / "r.json"
    res = invoke(tmp_path / "home", "audit", "run", *SMALL, "--significance", "0.1",
                 "--out", str(out))
    assert res.exit_code == 0, res.output
    text = " ".join(res.output.split())
    assert "paired TOST, 80% CI inside the margin" in text and "90% CI" not in text
    eq = json.loads(out.read_text())["extensions"]["dimensions"]["verbosity"]["equivalence"]
    assert eq["ci_level"] == pytest.approx(0.8) and "(80% CI " in eq["statement"]
