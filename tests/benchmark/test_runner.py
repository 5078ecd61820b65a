"""The runner: end to end with simulated judges, resume without paying twice, SIGKILL safety."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from click.testing import CliRunner
from judge.fakes import ScriptedProvider, verdict_json  # the judge tests' scripted provider
from stub_process import stub_process

from legal_judge.benchmark.ensemble_config import EnsembleConfig, load_ensemble_config
from legal_judge.benchmark.runner import run_benchmark
from legal_judge.cli import cli
from legal_judge.dataset import load_dataset, sample_dataset_path
from legal_judge.judge.config import JudgeConfig
from legal_judge.providers.registry import register_provider, unregister_provider
from legal_judge.store import Store


def test_demo_from_the_cli_completes_and_prints_the_summary() -> None:
    result = CliRunner().invoke(cli, ["demo", "--quiet"])
    assert result.exit_code == 0, result.output
    for text in ("pass rate", "legal_soundness", "Per judge", "SIMULATED", "--ensemble default"):
        assert text in result.output
    runs = Store().list_runs()
    assert runs[0]["status"] == "completed" and runs[0]["results"] == runs[0]["items"] >= 40


def test_cached_rerun_makes_no_provider_call() -> None:
    items = load_dataset(sample_dataset_path())[:10]
    config = load_ensemble_config("demo")
    store = Store()
    first = asyncio.run(run_benchmark(items, config, store=store))
    second = asyncio.run(run_benchmark(items, config, store=store))
    assert first.progress.cached == 0 and second.progress.cached == 30
    assert store.call_counts(second.run_id)["calls"] == 0  # nothing was called
    assert store.get_run(second.run_id)["summary"]["cached_verdicts"] == 30
    for item_id, r in first.results.items():
        assert second.results[item_id].scores == r.scores


class _Switchable:
    """A provider prefix whose instances fail while ``down`` is True; counts calls per process."""

    down = True
    calls = 0

    def __init__(self, spec, options, client):  # type: ignore[no-untyped-def]
        from legal_judge.errors import ProviderUnavailable

        fam = {"a": "openai", "b": "google", "c": "mistral"}[spec.model]
        self.inner = ScriptedProvider(f"switch:{spec.model}", family=fam)
        self.spec, self.family = self.inner.spec, fam
        self._err = ProviderUnavailable

    async def complete(self, request):  # type: ignore[no-untyped-def]
        _Switchable.calls += 1
        if _Switchable.down and self.spec.model == "c":
            raise self._err("outage", provider="switch", status=503)
        self.inner.enqueue(verdict_json())
        return await self.inner.complete(request)

    async def aclose(self) -> None:
        pass


@pytest.fixture
def switch_provider() -> Iterator[type[_Switchable]]:
    register_provider("switch", _Switchable)
    _Switchable.down, _Switchable.calls = True, 0
    yield _Switchable
    unregister_provider("switch")


def test_outage_then_resume_repeats_no_completed_call(switch_provider: type[_Switchable]) -> None:
    items = load_dataset(sample_dataset_path())[:6]
    config = EnsembleConfig(judges=[JudgeConfig(spec=f"switch:{m}") for m in "abc"], quorum=3,
                            run_checks=False)
    store = Store()
    out = asyncio.run(run_benchmark(items, config, store=store))
    assert all(r.status == "inconclusive" for r in out.results.values())  # quorum 3, judge c down
    assert switch_provider.calls == 18  # 6 items x 3 judges, c failing
    switch_provider.down, switch_provider.calls = False, 0
    resumed = asyncio.run(run_benchmark([], config, store=store, run_id=out.run_id, resume=True))
    assert switch_provider.calls == 6  # only judge c's calls are made again
    assert all(r.status == "ok" for r in resumed.results.values())
    assert len(store.load_results(out.run_id)) == 6


def test_cost_limit_stops_cleanly() -> None:
    register_provider("pricey", lambda spec, o, c: ScriptedProvider(
        f"openai:{spec.model}", family={"gpt-4o": "openai", "gemini-2.5-pro": "google"}[spec.model],
        outputs=[verdict_json()] * 100))
    try:
        items = load_dataset(sample_dataset_path())[:20]
        config = EnsembleConfig(judges=[JudgeConfig(spec="pricey:gpt-4o"),
                                        JudgeConfig(spec="pricey:gemini-2.5-pro")],
                                cost_limit_usd=0.001, concurrency=1, run_checks=False)
        out = asyncio.run(run_benchmark(items, config, store=Store()))
    finally:
        unregister_provider("pricey")
    assert out.status == "stopped" and any("cost limit" in w for w in out.warnings)
    assert len(out.results) < 20


def test_same_family_refused_before_any_call() -> None:
    register_provider("never", lambda spec, o, c: pytest.fail("no provider may be created"))
    try:
        sp = ScriptedProvider("x:y")
        register_provider("fam", lambda spec, o, c: ScriptedProvider("fam:gpt-4o", family="openai"))
        config = EnsembleConfig(judges=[JudgeConfig(spec="fam:gpt-4o")], quorum=1)
        items = load_dataset(sample_dataset_path())[:3]
        items = [i.model_copy(update={"system_under_test": "gpt-4o-mini"}) for i in items]
        from legal_judge.errors import ConfigError

        with pytest.raises(ConfigError, match="same family"):
            asyncio.run(run_benchmark(items, config, store=Store()))
        assert sp.requests == []
        assert Store().list_runs() == []
    finally:
        unregister_provider("never")
        unregister_provider("fam")


# --- SIGKILL halfway and resume, through real HTTP and the real openai SDK -------------------------

@pytest.fixture
def stub_url() -> Iterator[str]:
    with stub_process(30) as url:
        yield url


def _config(path: Path, url: str) -> Path:
    judges = "".join(f'\n[[judges]]\nspec = "openai-compatible:{m}@{url}"\n'
                     for m in ("gpt-4o", "gemini-2.5-pro", "mistral-large-latest"))
    path.write_text(f"name = 'stub'\nconcurrency = 4\nrun_checks = false\n{judges}")
    return path


def _results(home: Path, run_id: str) -> dict[str, tuple[str, str]]:
    db = sqlite3.connect(home / "store.sqlite3")
    rows = db.execute("SELECT item_id, result_json FROM ensemble_results WHERE run_id = ?", (run_id,))
    out = {}
    for item_id, js in rows:
        r = json.loads(js)
        out[item_id] = (r["overall"], json.dumps(r["scores"], sort_keys=True))
    return out


def _verdict_count(home: Path) -> int:
    try:
        db = sqlite3.connect(home / "store.sqlite3", timeout=5)
        return int(db.execute("SELECT COUNT(*) FROM verdicts").fetchone()[0])
    except sqlite3.Error:
        return 0


@pytest.mark.sqlite_only("PRAGMA integrity_check; on PostgreSQL, tests/reliability's "
                         "two_writers_one_killed")
def test_sigkill_halfway_then_resume_equals_uninterrupted(tmp_path: Path, stub_url: str) -> None:
    bench = tmp_path / "bench.jsonl"
    items = load_dataset(sample_dataset_path())[:24]
    bench.write_text("".join(i.model_dump_json() + "\n" for i in items))
    cfg = _config(tmp_path / "stub.toml", stub_url)
    env = {**os.environ, "LEGAL_JUDGE_HOME": str(tmp_path / "killed")}
    cmd = [sys.executable, "-m", "legal_judge", "run", str(bench), "--ensemble", str(cfg),
           "--run-id", "R1", "--quiet"]
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.time() + 60
    while _verdict_count(tmp_path / "killed") < 30 and time.time() < deadline:
        time.sleep(0.02)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    done_before = _verdict_count(tmp_path / "killed")
    assert 0 < done_before < 72
    resume = subprocess.run([sys.executable, "-m", "legal_judge", "run", "--resume", "R1", "--quiet"],
                            env=env, capture_output=True, text=True, timeout=120)
    assert resume.returncode == 0, resume.stderr
    stats = httpx.get(stub_url.removesuffix("/v1") + "/stats").json()
    # A completed call is never repeated; only the calls in flight at the kill (at most the
    # concurrency, 4) can be sent again, because their answers never reached the store.
    assert stats["max_per_digest"] <= 2
    assert stats["distinct"] == 72 and stats["requests"] - 72 <= 4
    killed = _results(tmp_path / "killed", "R1")
    env2 = {**os.environ, "LEGAL_JUDGE_HOME": str(tmp_path / "clean")}
    clean = subprocess.run([*cmd[:-3], "--run-id", "R2", "--quiet"], env=env2, capture_output=True,
                           text=True, timeout=120)
    assert clean.returncode == 0, clean.stderr
    assert killed == _results(tmp_path / "clean", "R2") and len(killed) == 24
    db = sqlite3.connect(tmp_path / "killed" / "store.sqlite3")
    assert db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
