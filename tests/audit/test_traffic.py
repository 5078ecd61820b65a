"""Production traffic audit: groups, the 50-per-subgroup guard, the observational caveat."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import numpy as np
import pytest
from scipy import stats as sps

from legal_judge.audit.traffic import parse_since, traffic_audit
from legal_judge.errors import ConfigError

from .helpers import invoke


def _rows(seed: int = 0) -> list[dict]:
    rng = np.random.default_rng(seed)
    rows = []
    for region, shift, n in (("eu", 0.0, 80), ("us", 0.0, 90), ("mena", -0.6, 70), ("apac", 0, 12)):
        for s in rng.normal(3.5 + shift, 0.5, n):
            rows.append({"score": float(s), "metadata": {"client_region": region},
                         "timestamp": "2030-01-01T00:00:00+00:00"})
    return rows


def test_groups_compared_with_the_reference_and_small_groups_excluded() -> None:
    rows = _rows()
    res = traffic_audit(rows, attribute="metadata.client_region", method="welch")
    assert res["status"] == "complete" and res["too_small"] == ["apac"]
    by = {c["group"]: c for c in res["comparisons"]}
    assert res["reference"] == "us" and set(by) == {"eu", "mena"} and res["flagged"] == ["mena"]
    mena = [r["score"] for r in rows if r["metadata"]["client_region"] == "mena"]
    rest = [r["score"] for r in rows if r["metadata"]["client_region"] == "us"]
    ref = sps.ttest_ind(mena, rest, equal_var=False)
    assert by["mena"]["p_value"] == pytest.approx(ref.pvalue, rel=1e-12)
    assert "Observational" in res["summary"] and "counterbalanced" in res["caveat"]


def test_fewer_than_two_eligible_groups_is_insufficient() -> None:
    res = traffic_audit(_rows()[:100], attribute="metadata.client_region")
    assert res["status"] == "INSUFFICIENT_DATA" and res["comparisons"] == []


def test_an_attribute_no_output_has_is_a_mistake_to_fix_not_a_failed_audit(
        tmp_path: Path) -> None:
    # Before: exit 1, "fewer than two groups of 'metadata.region' have 50 or more scores",
    # fix "widen --since", for a misspelt attribute that no row carries.
    with pytest.raises(ConfigError) as exc:
        traffic_audit(_rows(), attribute="metadata.region")
    assert exc.value.message == ("--attribute metadata.region: none of the 252 scored outputs "
                                 "has it")
    assert exc.value.fix == "use an attribute the outputs carry: metadata.client_region"
    export = tmp_path / "scores.jsonl"
    export.write_text("".join(json.dumps(r) + "\n" for r in _rows()))
    res = invoke(tmp_path / "home", "audit", "traffic", "--since", "2029-12-01",
                 "--attribute", "metadata.region", "--input", str(export))
    assert res.exit_code == 2, res.output
    assert "metadata.client_region" in res.output
    # No output at all in the window is still "insufficient data", exit 1.
    empty = invoke(tmp_path / "home", "audit", "traffic", "--attribute", "metadata.region")
    assert empty.exit_code == 1, empty.output


def test_since_parsing() -> None:
    now = datetime(2030, 1, 8, tzinfo=UTC)
    assert parse_since("7d", now=now) == datetime(2030, 1, 1, tzinfo=UTC)
    assert parse_since("2030-01-02", now=now).tzinfo is not None
    with pytest.raises(ConfigError):
        parse_since("last tuesday")


def test_traffic_cli_from_an_export_file(tmp_path: Path) -> None:
    export = tmp_path / "scores.jsonl"
    export.write_text("".join(json.dumps(r) + "\n" for r in _rows()))
    out = tmp_path / "traffic.json"
    res = invoke(tmp_path / "home", "audit", "traffic", "--since", "2029-12-01",
                 "--attribute", "metadata.client_region", "--input", str(export), "--out", str(out))
    assert res.exit_code == 0, res.output
    assert json.loads(out.read_text())["flagged"] == ["mena"]
    assert invoke(tmp_path / "home", "audit", "verify-log").exit_code == 0


def test_traffic_rows_from_the_store(tmp_path: Path) -> None:
    from legal_judge.audit.traffic import traffic_rows_from_store
    from legal_judge.store import Store

    store = Store(tmp_path / "s.sqlite3")
    store.create_run("r1", kind="benchmark", config={})
    store.save_items("r1", [{"id": "a", "prompt": "p", "response": "r",
                             "metadata": {"client_region": "eu"}},
                            {"id": "b", "prompt": "p", "response": "r", "metadata": {}}])
    store.save_result("r1", "a", {"status": "ok", "scores": {"x": 4.0, "y": 2.0}})
    store.save_result("r1", "b", {"status": "inconclusive", "scores": {}})
    rows = traffic_rows_from_store(store, since=parse_since("1d"), rubric=None)
    assert [(r["id"], r["score"], r["metadata"]) for r in rows] == [("a", 3.0, {"client_region": "eu"})]
    assert traffic_rows_from_store(store, since=parse_since("1d"), rubric="y")[0]["score"] == 2.0
