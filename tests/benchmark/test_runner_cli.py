"""The run command as a user drives it: Ctrl-C, --out exports, alerts."""

from __future__ import annotations

import csv
import json
import os
import signal
import subprocess
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, HTTPServer
from pathlib import Path

from click.testing import CliRunner
from pg_server import query_store

from legal_judge.cli import cli
from legal_judge.dataset import load_dataset, sample_dataset_path
from legal_judge.store import Store


def test_ctrl_c_stops_cleanly_and_says_how_to_resume(tmp_path: Path) -> None:
    cfg = tmp_path / "slow.toml"
    judges = "".join(f'\n[[judges]]\nspec = "simulated:{p}?latency_ms=150"\n'
                     for p in ("demo-openai", "demo-google", "demo-mistral"))
    cfg.write_text(f"name = 'slow'\nconcurrency = 2\nrun_checks = false\n{judges}")
    env = {**os.environ, "LEGAL_JUDGE_HOME": str(tmp_path / "home")}
    proc = subprocess.Popen([sys.executable, "-m", "legal_judge", "run", str(sample_dataset_path()),
                             "--ensemble", str(cfg), "--run-id", "INT", "--quiet"],
                            env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            # Ctrl-C as at a terminal, even when pytest itself ignores SIGINT (a
                            # background job of a non-interactive shell), which a child inherits.
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    deadline = time.time() + 60
    while time.time() < deadline:  # interrupt only once judging has started
        if (query_store(tmp_path / "home", "SELECT COUNT(*) FROM verdicts") or [(0,)])[0][0] >= 3:
            break
        time.sleep(0.05)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=60)
    # Exit 130 (interrupted), not 0: a cancelled CI step must not look green (issue 20, item 13).
    assert proc.returncode == 130, err
    assert "interrupted" in out and "--resume INT" in out
    assert "Traceback" not in err
    assert query_store(tmp_path / "home", "SELECT status FROM runs WHERE id = 'INT'") == [
        ("interrupted",)]
    resumed = subprocess.run([sys.executable, "-m", "legal_judge", "run", "--resume", "INT", "--quiet"],
                             env=env, capture_output=True, text=True, timeout=120)
    assert resumed.returncode == 0 and "completed" in resumed.stdout


def test_out_csv_one_row_per_item_and_formula_neutralised(tmp_path: Path) -> None:
    bench = tmp_path / "b.jsonl"
    items = load_dataset(sample_dataset_path())[:4]
    items[0] = items[0].model_copy(update={"id": "=HYPERLINK(\"http://x\",\"y\")"})
    bench.write_text("".join(i.model_dump_json() + "\n" for i in items))
    out = tmp_path / "results.csv"
    res = CliRunner().invoke(cli, ["run", str(bench), "--ensemble", "demo", "--out", str(out), "--quiet"])
    assert res.exit_code == 0, res.output
    rows = list(csv.DictReader(out.open(encoding="utf-8")))
    assert len(rows) == 4
    assert rows[0]["item_id"].startswith("'=HYPERLINK")
    assert {"ensemble.legal_soundness", "overall", "flags"} <= set(rows[0])
    assert any(k.endswith(".legal_soundness") and not k.startswith("ensemble") for k in rows[0])
    jl = tmp_path / "results.jsonl"
    res = CliRunner().invoke(cli, ["run", str(bench), "--ensemble", "demo", "--out", str(jl), "--quiet"])
    assert res.exit_code == 0 and len(jl.read_text().splitlines()) == 4


def test_inconclusive_posts_an_alert_to_the_webhook(tmp_path: Path) -> None:
    received: list[dict] = []  # type: ignore[type-arg]

    class Hook(BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802
            received.append(json.loads(self.rfile.read(int(self.headers["Content-Length"]))))
            self.send_response(204)
            self.end_headers()

        def log_message(self, *args: object) -> None:
            pass

    server = HTTPServer(("127.0.0.1", 0), Hook)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        cfg = tmp_path / "bad.toml"
        url = f"http://127.0.0.1:{server.server_address[1]}/alert"
        judges = "".join(f'\n[[judges]]\nspec = "simulated:{p}?invalid_json=1.0"\nalert_webhook = "{url}"\n'
                         for p in ("demo-openai", "demo-google"))
        cfg.write_text(f"name = 'bad'\nrun_checks = false\n{judges}")
        bench = tmp_path / "b.jsonl"
        bench.write_text(load_dataset(sample_dataset_path())[0].model_dump_json() + "\n")
        res = CliRunner().invoke(cli, ["run", str(bench), "--ensemble", str(cfg), "--quiet"])
        # Every judge answered, none validly: no item scored, so the run failed (it exited 0 as
        # "completed"); a resume would reuse the same verdicts, so it is exit 1, not 3.
        assert res.exit_code == 1, res.output
        assert "no item could be judged: 1 of 1 items INCONCLUSIVE" in res.output
    finally:
        server.shutdown()
    assert len(received) == 2 and received[0]["source"] == "legal-judge"
    assert "invalid" in received[0]["error"] or "JSON" in received[0]["error"]
    run = Store().list_runs()[0]
    assert run["status"] == "failed"
    assert Store().load_results(run["id"])[bench.read_text() and load_dataset(bench)[0].id]["status"] == "inconclusive"


def test_run_batch_flag_with_online_only_judges_completes(tmp_path: Path) -> None:
    bench = tmp_path / "b.jsonl"
    bench.write_text("".join(i.model_dump_json() + "\n" for i in load_dataset(sample_dataset_path())[:3]))
    res = CliRunner().invoke(cli, ["run", str(bench), "--ensemble", "demo", "--batch", "--quiet"])
    assert res.exit_code == 0, res.output
    assert "pass rate" in res.output
    status = CliRunner().invoke(cli, ["batches", "status"])
    assert status.exit_code == 0, status.output
