"""``runs export`` (= ``run --out``) and try-before-you-pay (``--limit``, ``--sample``, ``--ids``)."""

from __future__ import annotations

import csv
import json
import os
from collections import Counter
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from legal_judge.benchmark.export import short_judge_names
from legal_judge.benchmark.inputs import ItemSelection, select_items
from legal_judge.cli import cli
from legal_judge.dataset import load_dataset, sample_dataset_path
from legal_judge.store import Store

SAMPLE = str(sample_dataset_path())
ITEMS = load_dataset(sample_dataset_path())
JUDGES = ("gemini-2.5-pro (simulated)", "gpt-4o (simulated)", "mistral-large (simulated)")


def _cli(*args: str) -> Result:
    return CliRunner().invoke(cli, list(args), env={"COLUMNS": "80"})


def _only_run() -> str:
    (run,) = Store().list_runs()
    return str(run["id"])


def test_runs_export_equals_run_out_with_per_judge_columns(tmp_path: Path) -> None:
    out_csv, out_jsonl = tmp_path / "results.csv", tmp_path / "results.jsonl"
    res = _cli("run", SAMPLE, "--ensemble", "demo", "--quiet", "--out", str(out_csv))
    assert res.exit_code == 0, res.output
    assert f"wrote {out_csv} (57 rows)" in res.output
    run_id = _only_run()
    exported = tmp_path / "exported.csv"
    res = _cli("runs", "export", run_id, "--out", str(exported))
    assert res.exit_code == 0 and f"wrote {exported} (57 rows)" in res.output
    assert exported.read_bytes() == out_csv.read_bytes()
    umask = os.umask(0)
    os.umask(umask)
    assert exported.stat().st_mode & 0o777 == 0o666 & ~umask  # not mkstemp's owner-only 0600
    assert [p.name for p in tmp_path.iterdir() if p.name.endswith(".tmp")] == []
    res = _cli("runs", "export", run_id, "--format", "jsonl", "--out", str(out_jsonl))
    assert res.exit_code == 0, res.output
    rows = [json.loads(line) for line in out_jsonl.read_text(encoding="utf-8").splitlines()]
    with out_csv.open(encoding="utf-8", newline="") as fh:
        header = next(csv.reader(fh))
    assert list(rows[0]) == header and len(rows) == 57
    for column in ("item_id", "status", "overall", "hallucination", "ensemble.legal_soundness",
                   "flagged_for_review", "flags", "overrides"):
        assert column in header
    for judge in JUDGES:
        for suffix in ("status", "overall", "legal_soundness", "legal_soundness.rationale",
                       "hallucination", "hallucination.rationale", "rule_fail_reasons", "reason"):
            assert f"{judge}.{suffix}" in header
    bad = next(r for r in rows if r["item_id"] == "us-fed-004")
    assert bad["overall"] == "fail" and bad["hallucination"] == "hallucinated"
    assert bad["gpt-4o (simulated).hallucination"] == "hallucinated"
    assert "hallucination = hallucinated" in bad["gpt-4o (simulated).rule_fail_reasons"]
    assert bad["gpt-4o (simulated).legal_soundness.rationale"].startswith("simulated")
    assert bad["overrides"].startswith("fabricated_source")


def test_export_refuses_what_it_cannot_write(tmp_path: Path) -> None:
    assert _cli("demo", "--quiet").exit_code == 0
    run_id = _only_run()
    for args, text in ((["--out", str(tmp_path / "r.xlsx")], "cannot tell the export format"),
                       (["--format", "jsonl", "--out", str(tmp_path / "r.csv")],
                        "r.csv is named .csv but the format is jsonl"),
                       (["--out", str(tmp_path / "nope" / "r.csv")], "does not exist")):
        res = _cli("runs", "export", run_id, *args)
        assert res.exit_code == 2 and text in res.output, res.output
    res = _cli("runs", "export", "run-nope")
    assert res.exit_code == 2 and "legal-judge runs list" in res.output
    try:
        import pyarrow  # noqa: F401
    except ImportError:
        res = _cli("runs", "export", run_id, "--format", "parquet", "--out", str(tmp_path / "r.pq"))
        assert res.exit_code == 2 and "pyarrow" in res.output and "legal-judge[parquet]" in res.output
    # A bad --out is refused before the run pays for anything.
    res = _cli("run", SAMPLE, "--ensemble", "demo", "--quiet", "--out", str(tmp_path / "r.txt"))
    assert res.exit_code == 2 and len(Store().list_runs()) == 1


def test_short_judge_names_drop_the_endpoint_url_when_unique() -> None:
    got = short_judge_names(["openai-compatible:llama@http://127.0.0.1:8080/v1", "reviewer A",
                             "openai:gpt-4o@http://a/v1", "openai:gpt-4o@http://b/v1"])
    assert got == {"openai-compatible:llama@http://127.0.0.1:8080/v1": "openai-compatible:llama",
                   "reviewer A": "reviewer A", "openai:gpt-4o@http://a/v1": "openai:gpt-4o@http://a/v1",
                   "openai:gpt-4o@http://b/v1": "openai:gpt-4o@http://b/v1"}


def test_limit_then_full_run_reuses_the_verdicts_and_says_so() -> None:
    res = _cli("run", SAMPLE, "--ensemble", "demo", "--quiet", "--limit", "5")
    assert res.exit_code == 0, res.output
    assert "items: 5 of 57 (--limit 5)" in res.output
    first = _only_run()
    assert Store().get_run(first)["config"]["selection"] == {"options": "--limit 5", "selected": 5,
                                                             "of": 57}
    res = _cli("run", SAMPLE, "--ensemble", "demo", "--quiet")
    assert res.exit_code == 0, res.output
    assert "reused from the cache: 5 of 57 items (15 of 171 judge verdicts), not paid again" in res.output
    assert "A partial run" not in res.output  # a full run is not called partial
    full = next(r["id"] for r in Store().list_runs() if r["id"] != first)
    summary = Store().get_run(full)["summary"]
    assert summary["cached_items"] == 5 and summary["cached_verdicts"] == 15


def test_sample_is_stratified_by_jurisdiction_and_reproducible() -> None:
    chosen, record = select_items(ITEMS, ItemSelection(sample=19, seed=7))
    again, _ = select_items(ITEMS, ItemSelection(sample=19, seed=7))
    other, _ = select_items(ITEMS, ItemSelection(sample=19, seed=8))
    assert [i.id for i in chosen] == [i.id for i in again] != [i.id for i in other]
    assert record is not None and record["selected"] == 19 and record["of"] == 57
    sizes = Counter(i.jurisdiction or "(no jurisdiction)" for i in ITEMS)
    got = Counter(i.jurisdiction or "(no jurisdiction)" for i in chosen)
    assert got == Counter(record["strata"])
    for stratum, n in sizes.items():  # proportional: within one item of 19 * share
        assert abs(got[stratum] - 19 * n / 57) < 1
    order = [i.id for i in ITEMS]
    assert [i.id for i in chosen] == sorted((i.id for i in chosen), key=order.index)
    no_jurisdiction = [i.model_copy(update={"jurisdiction": None}) for i in ITEMS]
    plain, rec = select_items(no_jurisdiction, ItemSelection(sample=10, seed=7))
    assert len(plain) == 10 and rec is not None and rec["strata"] == {"(no jurisdiction)": 10}


def test_sample_and_ids_on_the_command_line() -> None:
    res = _cli("run", SAMPLE, "--ensemble", "demo", "--quiet", "--sample", "6", "--seed", "3")
    assert res.exit_code == 0, res.output
    assert "items: 6 of 57 (--sample 6 --seed 3) stratified by jurisdiction:" in res.output
    res = _cli("run", SAMPLE, "--ensemble", "demo", "--quiet", "--ids", "fr-002,us-fed-004")
    assert res.exit_code == 0, res.output
    runs = Store().list_runs()
    ids = [r["id"] for r in runs if Store().get_run(r["id"])["config"]["selection"]["options"]
           == "--ids fr-002,us-fed-004"]
    assert [i["id"] for i in Store().load_items(ids[0])] == ["us-fed-004", "fr-002"]


@pytest.mark.parametrize(("args", "text"), [
    (["--limit", "5", "--ids", "a"], "--limit and --ids choose items in different ways"),
    (["--seed", "3"], "--seed only applies to --sample"),
    (["--limit", "0"], "--limit 0: at least one item"),
    (["--ids", "us-fed-001,no-such-item"], "--ids: 1 id(s) not in the dataset: no-such-item"),
    (["--ids", " , "], "--ids names no item"),
])
def test_selection_mistakes_are_exit_2_before_any_call(args: list[str], text: str) -> None:
    res = _cli("run", SAMPLE, "--ensemble", "demo", "--quiet", *args)
    assert res.exit_code == 2 and text in res.output, res.output
    assert Store().list_runs() == []


def test_a_resumed_run_keeps_its_items() -> None:
    assert _cli("run", SAMPLE, "--ensemble", "demo", "--quiet", "--limit", "2").exit_code == 0
    run_id = _only_run()
    res = _cli("run", "--resume", run_id, "--limit", "3", "--quiet")
    assert res.exit_code == 2 and "--limit 3 cannot change them" in res.output
