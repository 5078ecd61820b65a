"""Rule 1 in the ensemble: a well-formed fake citation forces citation_quality = 0 only when verified.

The fakes are Mata v. Avianca's citations under other party names (as ``LOOKALIKE_TEXT`` in
tests/checks/_support.py): under their own names they are known fabrications since issue 32,
`invalid` offline, and never sent to the lookup.
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import httpx
import pytest

from legal_judge.benchmark.ensemble_config import load_ensemble_config
from legal_judge.benchmark.item_checks import StoreLookupCache
from legal_judge.benchmark.runner import run_benchmark
from legal_judge.checks import CourtListenerLookup
from legal_judge.dataset import load_dataset, sample_dataset_path
from legal_judge.errors import MissingKeyError
from legal_judge.store import Store

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "checks"))
from _support import entries_handler, load_fixture  # noqa: E402

_LOOKALIKE = {"Varghese": "Okafor", "Shaboon": "Haddad", "Petersen": "Lindqvist"}


def _mata_item(*, lookalike: bool = True) -> list:  # type: ignore[type-arg]
    [item] = [i for i in load_dataset(sample_dataset_path()) if i.id == "us-fed-003"]
    if not lookalike:
        return [item]
    response = item.response
    for real, other in _LOOKALIKE.items():
        assert real in response
        response = response.replace(real, other)
    return [item.model_copy(update={"response": response})]


def test_offline_the_fabrications_are_unverifiable_and_not_forced() -> None:
    out = asyncio.run(run_benchmark(_mata_item(), load_ensemble_config("demo"), store=Store()))
    r = out.results["us-fed-003"]
    assert r.checks["forces_citation_zero"] is False and r.overrides == []
    statuses = {f["status"] for f in r.checks["findings"]["citations"]["findings"]}
    assert statuses == {"unverifiable"}


def test_offline_the_known_fabrications_under_their_own_names_are_forced() -> None:
    out = asyncio.run(run_benchmark(_mata_item(lookalike=False), load_ensemble_config("demo"),
                                    store=Store()))
    r = out.results["us-fed-003"]
    assert r.checks["forces_citation_zero"] is True and r.scores["citation_quality"] == 0
    assert r.overrides and "925 F.3d 1339" in r.overrides[0]


def test_with_the_lookup_the_ensemble_forces_zero_with_the_reason() -> None:
    store = Store()
    seen: list[str] = []
    table = load_fixture("mata_lookup.json")["entries"]
    client = httpx.Client(transport=httpx.MockTransport(entries_handler(table, seen)))
    lookup = CourtListenerLookup(token="cl-test-token", client=client, cache=StoreLookupCache(store),
                                 sleep=lambda s: None)
    out = asyncio.run(run_benchmark(_mata_item(), load_ensemble_config("demo"), store=store,
                                    lookup=lookup))
    r = out.results["us-fed-003"]
    assert r.checks["forces_citation_zero"] is True
    assert r.scores["citation_quality"] == 0 and "citation_quality" in r.raw_scores
    assert r.overrides and "fabricated_source" in r.overrides[0] and "925 F.3d 1339" in r.overrides[0]
    assert seen, "the lookup was called"
    key = store.db.execute("SELECT key FROM lookup_cache").fetchone()[0]
    assert store.lookup_get(key) is not None  # answers are cached in the store


def test_lookup_without_token_fails_before_any_call() -> None:
    config = load_ensemble_config("demo").model_copy(update={"citation_lookup": True})
    with pytest.raises(MissingKeyError, match="COURTLISTENER_TOKEN"):
        asyncio.run(run_benchmark(_mata_item(), config, store=Store()))
    assert Store().list_runs() == []
