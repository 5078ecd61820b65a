"""One demo store for the report tests: a simulated run, two audits, two quarterly calibrations and
a debias experiment, each produced by its own module through the CLI or its public API."""

from __future__ import annotations

import asyncio
import csv
import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner, Result
from report_fixtures import candidate_dataset

from legal_judge.store import Store

NUMERIC = ("legal_soundness", "citation_quality", "jurisdiction_awareness", "completeness")


@dataclass(frozen=True)
class DemoStore:
    """Where the demo store is and the ids inside it."""

    home: Path
    run_id: str
    audit_ids: tuple[str, str]
    calibration_ids: tuple[str, str]
    debias_id: str
    run_b_id: str = ""

    def store(self) -> Store:
        """A connection to the demo store."""
        return Store(self.home / "store.sqlite3")


def _invoke(*args: str) -> Result:
    from legal_judge.cli import cli

    res = CliRunner().invoke(cli, list(args), catch_exceptions=False)
    assert res.exit_code == 0, res.output
    return res


def _latest(table: str) -> str:
    store = Store()
    try:
        return str(store.db.execute(f"SELECT id FROM {table} ORDER BY created_at DESC LIMIT 1")  # noqa: S608
                   .fetchone()[0])
    finally:
        store.close()


def _calibrate(run_id: str, folder: Path, *, shift: int, annotator: str, quarter: str) -> str:
    template = folder / f"{annotator}.csv"
    _invoke("calibrate", "sample", run_id, "--n", "50", "--seed", "5", "--out", str(template))
    store = Store()
    results = store.load_results(run_id)
    store.close()
    with template.open(encoding="utf-8-sig", newline="") as fh:
        reader = csv.DictReader(fh)
        rows, columns = list(reader), list(reader.fieldnames or [])
    for row in rows:
        result = results[row["item_id"]]
        for rubric in NUMERIC:
            row[rubric] = str(int(np.clip(np.floor(result["scores"][rubric] + 0.5) - shift, 0, 5)))
        row["hallucination"] = result["hallucination"]
        row["annotator"], row["labeled_at"] = annotator, f"{quarter[:4]}-06-30"
    labels = folder / f"{annotator}-filled.csv"
    with labels.open("w", newline="", encoding="utf-8") as fh:
        writer = csv.DictWriter(fh, fieldnames=columns)
        writer.writeheader()
        writer.writerows(rows)
    _invoke("calibrate", "import", str(labels), "--run", run_id)
    res = _invoke("calibrate", "compare", run_id, "--quarter", quarter, "--json")
    return str(json.loads(res.output)["calibration_id"])


def _audit(seed: int) -> str:
    from legal_judge.audit import AuditSettings, load_targets, run_audit
    from legal_judge.dataset import load_dataset, sample_dataset_path

    store = Store()
    try:
        target = load_targets("simulated:demo-openai", store=store)[0]
        settings = AuditSettings(pairs=12, min_sample=5, noise_pairs=5, min_complete_pairs=5,
                                 seed=seed)
        out = asyncio.run(run_audit(target, load_dataset(sample_dataset_path()), settings,
                                    store=store))
        return str(out.audit_id)
    finally:
        store.close()


@pytest.fixture(scope="session")
def demo_store(tmp_path_factory: pytest.TempPathFactory) -> DemoStore:
    """Build the demo store once per session (about fifteen seconds).

    The working directory and ``LEGAL_JUDGE_HOME`` are changed only while the store is built
    (the CLI writes its files into the working directory): every test after this one, in any
    directory of the session, sees the directory and environment it started with.
    """
    home = tmp_path_factory.mktemp("reports-home")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("LEGAL_JUDGE_HOME", str(home))
        mp.chdir(home)
        _invoke("demo", "--quiet")
        run_id = _latest("runs")
        cal_q2 = _calibrate(run_id, home, shift=1, annotator="lawyer_q2", quarter="2026-Q2")
        cal_q3 = _calibrate(run_id, home, shift=0, annotator="lawyer_q3", quarter="2026-Q3")
        audit_1, audit_2 = _audit(0), _audit(1)
        _invoke("debias", "compare", "--judge", "simulated:demo-openai",
                "--modes", "plain,aware,self", "--biases", "authority,position,verbosity",
                "--repeats", "1")
        debias_id = _latest("debias_experiments")
        _invoke("run", str(candidate_dataset(home)), "--ensemble", "demo", "--quiet")
        run_b = _latest("runs")
    return DemoStore(home, run_id, (audit_1, audit_2), (cal_q2, cal_q3), debias_id, run_b)


@pytest.fixture
def demo_home(demo_store: DemoStore, monkeypatch: pytest.MonkeyPatch) -> DemoStore:
    """The demo store as this test's LEGAL_JUDGE_HOME."""
    monkeypatch.setenv("LEGAL_JUDGE_HOME", str(demo_store.home))
    return demo_store


@pytest.fixture
def kind_ids(demo_store: DemoStore) -> dict[str, str]:
    """Kind -> one id of that kind (the second audit and calibration: they have a prior)."""
    return {"run": demo_store.run_id, "audit": demo_store.audit_ids[1],
            "calibration": demo_store.calibration_ids[1], "debias": demo_store.debias_id}
