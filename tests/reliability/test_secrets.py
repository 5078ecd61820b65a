"""Item 5: fake keys in the environment never reach the store, logs, reports, exports, traces or errors.

The run goes through the HTTP stub with the real ``openai`` provider, so OPENAI_API_KEY is really sent
(the stub refuses any other key and, like real servers, echoes a wrong key back in its 401). Then an
audit, a calibration, a Langfuse sync (to a stand-in that only accepts the fake Langfuse keys) and a
report. Every byte written under the test folder, every table row, every log record, every CLI output
and every body the stand-in received is scanned for each secret.
"""

from __future__ import annotations

import base64
import csv
import logging
import os
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner, Result
from standin import LangfuseStandin

from legal_judge.cli import cli

from .conftest import Stub, bench_items, dump_store, write_jsonl

OPENAI = "sk-fake-OPENAI-4f9d2c7be1a04b3c9e8d7f6a5b4c3d2e"
SECRETS = {
    "OPENAI_API_KEY": OPENAI,
    "ANTHROPIC_API_KEY": "sk-ant-fake-ANTHROPIC-0c1d2e3f4a5b6c7d8e9f",
    "LANGFUSE_SECRET_KEY": "sk-lf-fake-SECRET-9a8b7c6d5e4f3a2b1c0d",
    "COURTLISTENER_TOKEN": "fake-cl-TOKEN-77e6d5c4b3a2918f",
}
WRONG = "sk-fake-WRONG-KEY-00112233445566778899aabb"
PUBLIC = "pk-lf-fake-PUBLIC-5566"


def _needles() -> list[str]:
    auth = base64.b64encode(f"{PUBLIC}:{SECRETS['LANGFUSE_SECRET_KEY']}".encode()).decode()
    secrets = [*SECRETS.values(), WRONG]
    # The bare key body too: a redaction that only strips a prefix must still be caught.
    return [*secrets, *(s.split("-", 2)[-1] for s in secrets), auth]


@pytest.fixture
def standin() -> Iterator[LangfuseStandin]:
    server = LangfuseStandin(public_key=PUBLIC, secret_key=SECRETS["LANGFUSE_SECRET_KEY"]).start()
    yield server
    server.stop()


@pytest.fixture
def fake_env(standin: LangfuseStandin, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    for var, value in SECRETS.items():
        monkeypatch.setenv(var, value)
    monkeypatch.setenv("LANGFUSE_PUBLIC_KEY", PUBLIC)
    monkeypatch.setenv("LANGFUSE_BASE_URL", standin.base_url)
    monkeypatch.setenv("LANGFUSE_TIMEOUT", "5")
    home = tmp_path / "home"
    monkeypatch.setenv("LEGAL_JUDGE_HOME", str(home))
    return home


def _ensemble(path: Path, url: str) -> Path:
    judges = "".join(f'\n[[judges]]\nspec = "openai:{m}@{url}"\noptions = {{max_retries = 1}}\n'
                     for m in ("gpt-4o", "gemini-2.5-pro", "mistral-large-latest"))
    path.write_text(f"name = 'secrets'\nconcurrency = 8\n{judges}", encoding="utf-8")
    return path


def _fill(template: Path, out: Path) -> None:
    with template.open(encoding="utf-8-sig", newline="") as fh:
        reader = csv.DictReader(fh)
        rows, columns = list(reader), list(reader.fieldnames or [])
    for row in rows:
        for rubric in ("legal_soundness", "citation_quality", "jurisdiction_awareness",
                       "completeness"):
            row[rubric] = "3"
        row["hallucination"] = "clean"
        row["annotator"], row["labeled_at"] = "lawyer_a", "2026-05-04"
    with out.open("w", encoding="utf-8", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=columns)
        writer.writeheader()
        writer.writerows(rows)


def _cli(outputs: list[str], *args: str, code: int = 0) -> Result:
    result = CliRunner().invoke(cli, ["-vv", *args])
    outputs.append(result.output + repr(result.exception))
    assert result.exit_code == code, result.output[-3000:]
    return result


def _scan(where: str, text: str) -> None:
    for needle in _needles():
        assert needle not in text, f"a secret leaked into {where}"


def test_no_secret_anywhere_after_run_audit_calibration_sync(
        fake_env: Path, standin: LangfuseStandin, start_stub: Callable[..., Stub],
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    stub = start_stub("--require-key", OPENAI, "--rate-429", "0.2", "--invalid-json", "0.1",
                      "--retry-after-ms", "1")
    bench = write_jsonl(tmp_path / "bench.jsonl", bench_items(12))
    ensemble = _ensemble(tmp_path / "e.toml", stub.url)
    outs: list[str] = []
    _cli(outs, "run", str(bench), "--ensemble", str(ensemble), "--run-id", "S", "--quiet",
         "--out", str(tmp_path / "results.csv"))
    _cli(outs, "run", str(bench), "--ensemble", str(ensemble), "--run-id", "S2", "--quiet",
         "--no-cache", "--out", str(tmp_path / "results.jsonl"))
    _cli(outs, "audit", "run", "--judge", f"openai:gpt-4o@{stub.url}", "--items", str(bench),
         "--dimensions", "injection,verbosity", "--pairs", "12", "--noise-pairs", "4",
         "--out", str(tmp_path / "audit.json"))
    _cli(outs, "calibrate", "sample", "S", "--n", "10", "--out", str(tmp_path / "template.csv"),
         "--no-langfuse-queue")
    _fill(tmp_path / "template.csv", tmp_path / "labels.csv")
    _cli(outs, "calibrate", "import", str(tmp_path / "labels.csv"), "--run", "S")
    _cli(outs, "calibrate", "compare", "S", "--out", str(tmp_path / "calibration.json"))
    _cli(outs, "sync")
    _cli(outs, "report", "S", "--html", str(tmp_path / "report.html"), "--md",
         str(tmp_path / "report.md"), "--json", str(tmp_path / "report.json"))
    # A wrong key: the server echoes it back; the error must name the variable, not the key.
    os.environ["OPENAI_API_KEY"] = WRONG
    bad = _cli(outs, "run", str(bench), "--ensemble", str(ensemble), "--run-id", "W", "--quiet",
               "--no-cache", code=2)
    os.environ["OPENAI_API_KEY"] = OPENAI
    assert "OPENAI_API_KEY" in bad.output and "401" in bad.output
    assert "Incorrect API key provided: ***" in bad.output  # the echo arrived, redacted
    assert stub.stats()["faults"].get("401", 0) >= 1 and standin.state.traces
    assert (tmp_path / "results.csv").exists() and (tmp_path / "report.html").exists()
    _scan("the store tables", repr(dump_store(fake_env / "store.sqlite3")))
    for path in sorted(p for p in tmp_path.rglob("*") if p.is_file()):
        _scan(str(path.relative_to(tmp_path)), path.read_bytes().decode("latin-1"))
    _scan("the log records", caplog.text + "".join(r.getMessage() for r in caplog.records))
    _scan("the CLI output and exceptions", "\n".join(outs))
    _scan("the Langfuse stand-in bodies", standin.received_text() + repr(standin.state.spans))


def test_no_secret_in_subprocess_stderr(fake_env: Path, start_stub: Callable[..., Stub],
                                        tmp_path: Path) -> None:
    stub = start_stub("--require-key", OPENAI)
    bench = write_jsonl(tmp_path / "bench.jsonl", bench_items(3))
    ensemble = _ensemble(tmp_path / "e.toml", stub.url)
    env = {**os.environ, "LANGFUSE_BASE_URL": "http://127.0.0.1:9"}  # Langfuse down, too
    cmd = [sys.executable, "-m", "legal_judge", "-vv", "run", str(bench), "--ensemble", str(ensemble),
           "--quiet"]
    ok = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=300)
    assert ok.returncode == 0, ok.stderr[-3000:]
    wrong = subprocess.run([*cmd, "--no-cache"], env={**env, "OPENAI_API_KEY": WRONG, "LEGAL_JUDGE_DEBUG": "1"},
                           capture_output=True, text=True, timeout=300)
    assert wrong.returncode == 2 and "OPENAI_API_KEY" in wrong.stderr
    for name, text in (("stderr", ok.stderr + wrong.stderr), ("stdout", ok.stdout + wrong.stdout)):
        _scan(f"subprocess {name}", text)
