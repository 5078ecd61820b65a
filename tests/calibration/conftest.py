"""Fixtures of the calibration tests: a temp store with judged runs built from a known truth."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import click
import numpy as np
import pytest
from click.testing import CliRunner, Result
from pg_server import load_into_test_store

from legal_judge.models import EnsembleResult, Verdict
from legal_judge.store import Store

NUMERIC = ("legal_soundness", "citation_quality", "jurisdiction_awareness", "completeness")
JUDGES = (("judge_a", "openai"), ("judge_b", "anthropic"), ("judge_c", "google"))


@dataclass
class Truth:
    """What the lawyers would say about each item of a synthetic run."""

    run_id: str
    scores: dict[str, dict[str, float]] = field(default_factory=dict)
    hallucination: dict[str, str] = field(default_factory=dict)


def _overall(scores: dict[str, float], hallucination: str) -> str:
    failed = (hallucination == "hallucinated" or scores["legal_soundness"] <= 1
              or scores["jurisdiction_awareness"] == 0)
    return "fail" if failed else "pass"


def make_run(store: Store, run_id: str, *, n_items: int = 60, bias: float = 1.0, seed: int = 0,
             prefix: str = "item") -> Truth:
    """Write a judged run whose three judges score ``bias`` points above the truth on average."""
    rng = np.random.default_rng(seed)
    store.create_run(run_id, kind="run", config={
        "rubric_set": "legal_judge_set@1",
        "judge_ids": {name: f"jid-{name}" for name, _ in JUDGES}})
    truth = Truth(run_id)
    items = []
    for i in range(n_items):
        item_id = f"{prefix}-{i:03d}"
        items.append({"id": item_id, "prompt": f"Question {i} about notice periods?",
                      "response": f"Answer {i}.", "jurisdiction": "US-CA"})
        truth.scores[item_id] = {r: float(rng.integers(1, 5)) for r in NUMERIC}
        truth.hallucination[item_id] = "hallucinated" if rng.random() < 0.1 else "clean"
    store.save_items(run_id, items)
    for item in items:
        _judge_item(store, run_id, item["id"], truth, bias, rng)
    store.finish_run(run_id, status="completed", summary=None)
    return truth


def _judge_item(store: Store, run_id: str, item_id: str, truth: Truth, bias: float,
                rng: np.random.Generator) -> None:
    per_judge = []
    for name, family in JUDGES:
        scores = {r: float(np.clip(q + bias + rng.choice([-1, 0, 0, 0, 1]), 0, 5))
                  for r, q in truth.scores[item_id].items()}
        hall = truth.hallucination[item_id]
        verdict = Verdict(judge_id=f"jid-{name}", judge=name, family=family, status="ok",
                          scores=scores, hallucination=hall, overall=_overall(scores, hall))  # type: ignore[arg-type]
        store.save_verdict(run_id, item_id, name, verdict.model_dump())
        per_judge.append(verdict)
    means = {r: round(float(np.mean([v.scores[r] for v in per_judge])), 4) for r in NUMERIC}
    ranges = {r: max(v.scores[r] for v in per_judge) - min(v.scores[r] for v in per_judge)
              for r in NUMERIC}
    votes = sum(v.overall == "pass" for v in per_judge)
    result = EnsembleResult(
        item_id=item_id, status="ok", scores=means, raw_scores=dict(means),
        hallucination=truth.hallucination[item_id],  # type: ignore[arg-type]
        overall="pass" if votes >= 2 else "fail",
        valid_judges=3, disagreement={r: {"range": ranges[r], "sd": 0.0} for r in NUMERIC},
        flagged_for_review=max(ranges.values()) >= 2,
    )
    store.save_result(run_id, item_id, result.model_dump())


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """LEGAL_JUDGE_HOME and the working directory in a temp folder."""
    monkeypatch.setenv("LEGAL_JUDGE_HOME", str(tmp_path / "home"))
    monkeypatch.chdir(tmp_path)
    return tmp_path


@pytest.fixture
def store(home: Path) -> Iterator[Store]:
    """A fresh store in the temp home."""
    s = Store()
    yield s
    s.close()


def _group() -> click.Group:
    from legal_judge.cli import cli

    return cli


@pytest.fixture
def invoke(home: Path) -> Any:
    """Run ``legal-judge <args>`` in-process; returns click's Result."""
    runner = CliRunner()
    group = _group()

    def run(*args: str) -> Result:
        return runner.invoke(group, list(args), catch_exceptions=False)

    return run


@pytest.fixture(name="make_run")
def make_run_fixture() -> Any:
    """The :func:`make_run` builder (test modules here are not a package)."""
    return make_run


# --- the tour: the demo run, a 50-item sample, two lawyers' scores -----------------------------

TOUR_RUBRICS = ("legal_soundness", "citation_quality", "jurisdiction_awareness", "completeness",
                "hallucination")


def expected_scores() -> dict[str, dict[str, Any]]:
    """What careful lawyers concluded on the bundled sample (its ``metadata.expected_scores``)."""
    import json

    from legal_judge.dataset import sample_dataset_path

    rows = [json.loads(line) for line in sample_dataset_path().read_text("utf-8").splitlines()
            if line.strip()]
    return {r["id"]: {**r["metadata"]["expected_scores"], "language": r["metadata"]["language"]}
            for r in rows}


def fill_sheet(template: Path, out: Path, *, language_quality_items: int = 2,
               pass_fail: bool = False) -> list[str]:
    """Two lawyers fill the sheet: lawyer_a writes the expected scores, lawyer_b the same but one
    point lower on legal_soundness every fourth row; language_quality only on a few rows."""
    import csv

    expected = expected_scores()
    with template.open(encoding="utf-8-sig", newline="") as fh:
        reader = csv.DictReader(fh)
        rows, columns = list(reader), list(reader.fieldnames or [])
    filled = []
    foreign = [r["item_id"] for r in rows if expected[r["item_id"]]["language"] != "en"]
    for annotator in ("lawyer_a", "lawyer_b"):
        for k, row in enumerate(rows):
            new = dict(row)
            e = expected[row["item_id"]]
            for rubric in TOUR_RUBRICS:
                new[rubric] = str(e[rubric])
            if annotator == "lawyer_b" and k % 4 == 0 and int(e["legal_soundness"]) > 0:
                new["legal_soundness"] = str(int(e["legal_soundness"]) - 1)
            if "language_quality" in new:
                new["language_quality"] = ("4" if row["item_id"] in foreign[:language_quality_items]
                                           else "")
            if pass_fail:
                new["pass_fail"] = "fail" if e["hallucination"] == "hallucinated" or \
                    int(e["legal_soundness"]) <= 1 or int(e["jurisdiction_awareness"]) == 0 \
                    else "pass"
            new["annotator"], new["labeled_at"] = annotator, "2026-11-20"
            filled.append(new)
    with out.open("w", newline="", encoding="utf-8") as fh:
        writer = csv.DictWriter(fh, fieldnames=columns)
        writer.writeheader()
        writer.writerows(filled)
    return [r["item_id"] for r in rows]


@dataclass
class Tour:
    """A home holding the demo run with a filled 50-item sample imported."""

    home: Path
    run_id: str
    items: list[str]


@pytest.fixture(scope="session")
def _tour_home(tmp_path_factory: pytest.TempPathFactory) -> Tour:
    import os

    base = tmp_path_factory.mktemp("tour")
    old = os.environ.get("LEGAL_JUDGE_HOME"), os.environ.get("LEGAL_JUDGE_STORE")
    os.environ["LEGAL_JUDGE_HOME"] = str(base / "home")
    # Built once on SQLite, whichever backend the first test is on; `tour` copies it over.
    os.environ.pop("LEGAL_JUDGE_STORE", None)
    try:
        runner = CliRunner()
        cli = _group()
        res = runner.invoke(cli, ["demo", "--quiet"], catch_exceptions=False)
        assert res.exit_code == 0, res.output
        store = Store()
        run_id = str(next(r["id"] for r in store.list_runs() if r["kind"] == "run"))
        store.close()
        sheet = base / "sheet.csv"
        res = runner.invoke(cli, ["calibrate", "sample", run_id, "--n", "50", "--seed", "7",
                                  "--out", str(sheet)], catch_exceptions=False)
        assert res.exit_code == 0, res.output
        items = fill_sheet(sheet, base / "filled.csv")
        res = runner.invoke(cli, ["calibrate", "import", str(base / "filled.csv"), "--run",
                                  run_id], catch_exceptions=False)
        assert res.exit_code == 0, res.output
    finally:
        for name, value in zip(("LEGAL_JUDGE_HOME", "LEGAL_JUDGE_STORE"), old, strict=True):
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
    return Tour(base / "home", run_id, items)


@pytest.fixture
def tour(_tour_home: Tour, home: Path) -> Tour:
    """A copy of the tour's home as this test's LEGAL_JUDGE_HOME."""
    import shutil

    target = home / "home"
    shutil.copytree(_tour_home.home, target, dirs_exist_ok=True)
    load_into_test_store(target / "store.sqlite3")
    return Tour(target, _tour_home.run_id, _tour_home.items)
