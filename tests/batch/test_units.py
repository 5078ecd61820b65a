"""Custom ids, splitting within provider limits, the status command and the CLI entry point."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from legal_judge.batch import BatchLimits, run_benchmark_batch
from legal_judge.batch.anthropic_batch import ANTHROPIC_LIMITS
from legal_judge.batch.base import custom_id, parse_custom_id, split_lines
from legal_judge.batch.cli import run_batch_cli
from legal_judge.batch.openai_batch import OPENAI_LIMITS
from legal_judge.batch.records import batch_rows
from legal_judge.cli import cli
from legal_judge.dataset import load_dataset, sample_dataset_path
from legal_judge.errors import ConfigError
from legal_judge.store import Store

from .fakes import sim_factory


def test_custom_ids_round_trip_and_fit_anthropics_alphabet() -> None:
    cid = custom_id(2, 123_456, "self_debias", 3)
    assert cid == "j2-i123456-s3" and parse_custom_id(cid) == (2, 123_456, "self_debias", 3)
    assert parse_custom_id("j0-i0-v1") == (0, 0, "verdict", 1)
    for bad in ("j0-i0-x1", "item-1", "j0-i0-v"):
        with pytest.raises(ValueError):
            parse_custom_id(bad)


def test_provider_limits() -> None:
    assert (OPENAI_LIMITS.max_requests, OPENAI_LIMITS.max_bytes) == (50_000, 200 * 1024 * 1024)
    assert (ANTHROPIC_LIMITS.max_requests, ANTHROPIC_LIMITS.max_bytes) == (100_000, 256_000_000)


def test_split_respects_count_and_bytes() -> None:
    lines = [(f"c{i}", b"x" * 9) for i in range(7)]  # 10 bytes each with the newline
    assert [len(c) for c in split_lines(lines, BatchLimits(3, 10_000))] == [3, 3, 1]
    assert [len(c) for c in split_lines(lines, BatchLimits(100, 25))] == [2, 2, 2, 1]
    chunks = list(split_lines(lines, BatchLimits(100, 30)))
    assert [cid for c in chunks for cid, _ in c] == [f"c{i}" for i in range(7)]
    with pytest.raises(ConfigError, match="over the provider's batch limit"):
        list(split_lines([("big", b"x" * 50)], BatchLimits(10, 40)))


async def test_a_large_round_is_split_into_several_batches(make_config, sleeps) -> None:
    items = load_dataset(sample_dataset_path())[:7]
    factory = sim_factory(limits=BatchLimits(max_requests=3, max_bytes=10**6))
    config = make_config("simulated:demo-openai", "simulated:demo-google")
    store = Store()
    out = await run_benchmark_batch(items, config, store=store, backend_factory=factory,
                                    sleep=sleeps)
    assert out.status == "completed" and out.batches_submitted == 6  # 2 judges x (3 + 3 + 1)
    sizes = sorted(r["meta"]["requests"] for r in batch_rows(store, run_id=out.run_id))
    assert sizes == [1, 1, 3, 3, 3, 3]
    assert all(r.valid_judges == 2 for r in out.results.values())


def test_run_batch_cli_then_batches_status(tmp_path: Path) -> None:
    data = tmp_path / "bench.jsonl"
    data.write_text("".join(i.model_dump_json() + "\n"
                            for i in load_dataset(sample_dataset_path())[:3]))
    toml = tmp_path / "e.toml"
    toml.write_text('run_checks = false\n[[judges]]\nspec = "openai:gpt-4o"\n'
                    '[[judges]]\nspec = "simulated:demo-google"\n')
    from legal_judge.batch.emulator import ProviderEmulator

    emu = ProviderEmulator(polls_to_end=3)  # still running at the one poll of --no-wait
    import legal_judge.benchmark.runner as orch

    original = orch.build_judges

    def with_client(config, store, *, use_cache, http_client=None):  # type: ignore[no-untyped-def]
        return original(config, store, use_cache=use_cache, http_client=emu.client())

    orch.build_judges = with_client  # type: ignore[assignment]
    try:
        res = run_batch_cli(data, str(toml), run_id="run-cli", wait=False)
        assert res["outcome"].status == "submitted" and res["run"]["status"] == "submitted"
        shown = CliRunner().invoke(cli, ["batches", "status", "run-cli"])
        assert shown.exit_code == 0, shown.output
        flat = " ".join(shown.output.split())
        assert "Batches of run-cli" in flat and "legal-judge run --resume run-cli --batch" in flat
        rows = json.loads(CliRunner().invoke(cli, ["batches", "status", "run-cli", "--json"]).output)
        assert [(r["id"], r["status"], r["meta"]["requests"]) for r in rows] == [
            ("batch_0001", "submitted", 3)]
        res = run_batch_cli(None, str(toml), resume="run-cli", poll_interval_s=0.0)
    finally:
        orch.build_judges = original  # type: ignore[assignment]
    assert res["outcome"].status == "completed" and res["run"]["summary"]["scored"] == 3
    as_json = json.loads(CliRunner().invoke(cli, ["batches", "status", "--json"]).output)
    assert [(r["id"], r["status"]) for r in as_json] == [("batch_0001", "collected")]
    assert "custom_ids" not in as_json[0]["meta"]
    missing = CliRunner().invoke(cli, ["batches", "status", "no-such-run"])
    assert missing.exit_code == 2 and "runs list" in missing.output
