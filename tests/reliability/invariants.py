"""The invariants every finished run must satisfy, whatever faults it went through."""

from __future__ import annotations

import json
from collections import Counter
from typing import Any

from legal_judge.assets.catalogue import load_assets
from legal_judge.judge.parse import parse_verdict_json
from legal_judge.models import BenchmarkItem, EnsembleResult, Verdict
from legal_judge.store import Store


def _rubrics(item: BenchmarkItem) -> list[Any]:
    assets = load_assets()
    language = item.metadata.get("language") if isinstance(item.metadata, dict) else None
    return assets.active_rubrics(assets.rubric_set(), language=language)


def _check_verdict(v: Verdict, item: BenchmarkItem) -> None:
    rubrics = _rubrics(item)
    if v.status == "ok":
        numeric = {r.name: r for r in rubrics if r.kind == "numeric"}
        assert set(v.scores) == set(numeric), (item.id, v.judge, v.scores)
        assert all(numeric[k].valid_score(s) for k, s in v.scores.items()), (item.id, v.scores)
        assert v.hallucination is not None and v.overall in ("pass", "fail")
        # Not invented: the scores are exactly what the provider's last answer says.
        parsed = parse_verdict_json(v.raw, rubrics)
        assert parsed.scores == v.scores, (item.id, v.judge)
    else:
        assert v.scores == {} and v.overall is None and v.hallucination is None, (item.id, v)
        assert v.reason, (item.id, v.judge)
        if v.status == "inconclusive":
            assert v.raw and v.attempts == 3  # the raw output is kept for the reviewer


def _check_result(r: EnsembleResult, verdicts: list[Verdict], quorum: int) -> None:
    valid = [v for v in verdicts if v.status == "ok"]
    if r.status == "ok":
        assert len(valid) >= quorum and r.overall in ("pass", "fail")
        assert r.scores and all(0.0 <= s <= 5.0 for s in r.scores.values())
        for name, score in r.scores.items():  # a weighted mean lies within the judges' range
            judged = [v.scores[name] for v in valid]
            assert min(judged) - 1e-9 <= score <= max(judged) + 1e-9, (r.item_id, name)
    else:
        assert len(valid) < quorum, r.item_id
        assert r.scores == {} and r.overall is None and r.reason, r
        for v in verdicts:
            if v.status != "ok":
                assert v.judge in r.reason, (r.reason, v.judge)


def check_run(store: Store, run_id: str, items: list[BenchmarkItem], *, judges: list[str],
              quorum: int) -> dict[str, Any]:
    """Assert the run's invariants; return its figures (statuses, calls, retries, faults seen)."""
    by_id = {i.id: i for i in items}
    assert [i["id"] for i in store.load_items(run_id)] == [i.id for i in items]
    results = store.load_results(run_id)
    verdicts = store.load_verdicts(run_id)
    assert set(results) == set(by_id), "an item was lost or added"
    assert set(verdicts) == {(i, j) for i in by_id for j in judges}, "a verdict was lost or added"
    n_rows = store.db.execute("SELECT COUNT(*) FROM ensemble_results WHERE run_id = ?",
                              (run_id,)).fetchone()[0]
    assert n_rows == len(items), "an item was duplicated"
    statuses: Counter[str] = Counter()
    verdict_statuses: Counter[str] = Counter()
    reasons: Counter[str] = Counter()
    for item_id, raw in results.items():
        result = EnsembleResult.model_validate(raw)
        vs = [Verdict.model_validate(verdicts[(item_id, j)]) for j in judges]
        for v in vs:
            _check_verdict(v, by_id[item_id])
            verdict_statuses[v.status] += 1
            if v.reason:
                reasons[v.reason.split(":")[0]] += 1
        _check_result(result, vs, quorum)
        statuses[result.status] += 1
    calls = store.db.execute(
        "SELECT COUNT(*), COALESCE(SUM(retries), 0), COALESCE(SUM(error IS NOT NULL), 0),"
        " COALESCE(SUM(attempt > 1), 0), COALESCE(SUM(cached), 0)"
        " FROM judge_calls WHERE run_id = ? AND cached = 0", (run_id,)).fetchone()
    return {"items": dict(statuses), "verdicts": dict(verdict_statuses), "reasons": dict(reasons),
            "logged_calls": calls[0], "transport_retries": calls[1], "failed_calls": calls[2],
            "json_retry_calls": calls[3], "provider_attempts": calls[0] + calls[1]}


def dump(figures: dict[str, Any]) -> str:
    """Figures as one JSON line (printed by the tests; copied into docs/RELIABILITY.md)."""
    return "FIGURES " + json.dumps(figures, sort_keys=True)
