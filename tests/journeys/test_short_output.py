"""Journeys of issue 33 (points 1, 2, 4, 5): what a user reads is whole and short.

Each step names the defect it holds fixed; every one failed on the code before the fix.
"""

from __future__ import annotations

import csv
import json
import re
import sys
from pathlib import Path

from legal_judge.dataset import load_dataset, sample_dataset_path

from .conftest import Journey, openai_stub

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "sync"))

from standin import LangfuseStandin  # noqa: E402


def _bench(journey: Journey, n: int) -> Path:
    path = journey.cwd / "bench.jsonl"
    items = load_dataset(sample_dataset_path())[:n]
    path.write_text("".join(i.model_dump_json() + "\n" for i in items), encoding="utf-8")
    return path


def test_a_flaky_endpoint_counts_retries_once_and_the_same_everywhere(journey: Journey) -> None:
    """Against an endpoint answering 30% 429 and 10% 5xx, a 15-item run printed 35 ``WARNING ...
    retry 1/6`` lines, and its progress line said "retries 6" (JSON re-asks) while its summary
    said "retries 35" (transport retries)."""
    bench = str(_bench(journey, 15))
    with openai_stub("--rate-429", "0.3", "--rate-5xx", "0.1", "--retry-after-ms", "1",
                     "--seed", "3") as url:
        toml = journey.cwd / "flaky.toml"
        toml.write_text("name = 'flaky'\nrun_checks = false\n" + "".join(
            f'\n[[judges]]\nname = "{m}"\nspec = "openai-compatible:{m}@{url}"\n'
            for m in ("gpt-4o", "mistral-large-latest")), encoding="utf-8")
        run = journey("run", bench, "--ensemble", str(toml), "--run-id", "flaky")
        stored = journey.query("SELECT SUM(retries) FROM judge_calls WHERE run_id = 'flaky'")
        retries = stored[0][0]
        assert retries > 5, run.describe()  # the stub's faults were met and retried
        assert "retry 1/" not in run.text and "WARNING" not in run.text, run.describe()
        progress = re.findall(r"retries (\d+) failed", " ".join(run.err.split()))
        assert progress and int(progress[-1]) == retries, run.describe()
        flat = " ".join(run.out.split())
        assert f"retries {retries}) -- rate limits, server errors, timeouts and refused " \
               "connections are retried; --verbose shows each" in flat, run.describe()
        # --verbose shows each retry, one line per retry made.
        verbose = journey("-v", "run", bench, "--ensemble", str(toml), "--run-id", "again",
                          "--no-cache", "--limit", "5")
        again = journey.query("SELECT SUM(retries) FROM judge_calls WHERE run_id = 'again'")[0][0]
        assert len(re.findall(r"retry \d+/6 in", verbose.err)) == again, verbose.describe()


def test_langfuse_errors_are_one_line_with_the_fix(journey: Journey,
                                                  langfuse: LangfuseStandin) -> None:
    """A Langfuse outage printed the SDK's raw ``ApiError: headers: {'date': ...}, status_code:
    500, body: ...``; now the status, what was asked and the fix, the payload with --verbose."""
    langfuse.fail_status = 500
    push = journey("prompts", "push", expect=3)
    assert "error: Langfuse answered HTTP 500 to prompt push: Internal Server Error" in push.err
    assert "fix: Langfuse failed on its side: run the command again later" in push.err
    assert "headers" not in push.text and "status_code" not in push.text, push.describe()
    assert len(push.err.strip().splitlines()) == 2, push.describe()  # the error and its fix
    verbose = journey("-v", "prompts", "push", expect=3)
    assert "status_code: 500" in verbose.err, verbose.describe()  # the raw payload, when asked

    # The outbox keeps the same one line as its error, for `sync --status`.
    journey("run", str(_bench(journey, 2)), "--ensemble", "demo", "--quiet")
    sync = journey("sync", expect=3)
    assert "headers" not in sync.text and "status_code" not in sync.text, sync.describe()
    assert "HTTP 500" in sync.text, sync.describe()
    errors = {e for (e,) in journey.query("SELECT last_error FROM outbox WHERE last_error IS NOT NULL")}
    assert errors and all(e.startswith("Langfuse answered HTTP 500 to ") for e in errors), errors

    # Issue 33: `prompts diff` was a 60-84 line key:value list at 80 columns; now a table.
    langfuse.fail_status = None
    journey("prompts", "push")
    diff = journey("prompts", "diff")
    assert "name: " not in diff.out and "status: " not in diff.out, diff.describe()
    assert "(narrow terminal: asset, sha256, remote_sha256 not shown" in diff.out
    rows = [line for line in diff.out.splitlines() if line.startswith("│")]
    assert len(rows) >= 8 and all(" same " in r or " changed " in r for r in rows[1:]), \
        diff.describe()


RUBRICS = ("legal_soundness", "citation_quality", "jurisdiction_awareness", "completeness",
           "hallucination")


def _expected() -> dict[str, dict[str, object]]:
    rows = [json.loads(line) for line in sample_dataset_path().read_text("utf-8").splitlines()
            if line.strip()]
    return {r["id"]: r["metadata"]["expected_scores"] for r in rows}


def test_a_lead_reads_labels_estimates_and_runs_at_80_columns(journey: Journey) -> None:
    """Issue 33 at 80 columns, piped: a label file without run_id printed one problem per row
    (55 lines); `calibrate estimate` printed n = 50 as ``5`` and cut both intervals; `runs list`
    had no pass rate, dataset or ensemble and listed calibration samples as 0-item runs."""
    bench = str(_bench(journey, 30))
    demo = "first"
    journey("run", bench, "--ensemble", "demo", "--run-id", demo, "--quiet")
    journey("run", bench, "--ensemble", "demo", "--run-id", "again", "--quiet")
    expected = _expected()
    ids = [i for (i,) in journey.query("SELECT item_id FROM items WHERE run_id = 'again' "
                                       "ORDER BY position")]
    labels = journey.cwd / "labels.csv"
    labels.write_text("item_id,rubric,score,annotator,labeled_at\n" + "".join(
        f"{i},legal_soundness,{expected[i]['legal_soundness']},lawyer,2026-11-20\n" for i in ids),
        encoding="utf-8")
    refused = journey("calibrate", "import", str(labels), expect=2)
    flat = " ".join(refused.err.split())
    assert "30 problems found" in flat and flat.count("run_id missing") == 1, refused.describe()
    assert "labels.csv: 30 rows: run_id missing, and their items are in several runs " \
           "(again, first)" in flat and "(rows 2-31)" in flat, refused.describe()
    assert journey.query("SELECT COUNT(*) FROM human_labels")[0][0] == 0

    journey("calibrate", "sample", demo, "--n", "25", "--seed", "7", "--out", "sheet.csv")
    with (journey.cwd / "sheet.csv").open(encoding="utf-8-sig", newline="") as fh:
        sampled = [r["item_id"] for r in csv.DictReader(fh)]
    labels.write_text("item_id,rubric,score,annotator,labeled_at\n" + "".join(
        f"{i},{r},{expected[i][r]},lawyer,2026-11-20\n" for i in sampled for r in RUBRICS),
        encoding="utf-8")
    journey("calibrate", "import", str(labels), "--run", demo)
    shown = journey("calibrate", "estimate", demo)
    pr = json.loads(journey("calibrate", "estimate", demo, "--json").out)
    pr = pr.get("estimate", pr)["pass_rate"]
    row = next(line for line in shown.out.splitlines() if line.strip("│ ").startswith("pass rate "))
    assert [c.strip() for c in row.strip("│").split("│")][-1] == "25", shown.describe()
    for lo, hi in (pr["raw_ci95"], pr["corrected_ci95"]):
        assert f"[{lo:.1%}–{hi:.1%}]" in shown.out, shown.describe()

    listing = journey("runs", "list")
    assert " sample " not in listing.out and "assertions: --all" in listing.out, listing.describe()
    (summary,) = journey.query("SELECT summary_json FROM runs WHERE id = ?", demo)[0]
    assert f"{json.loads(summary)['pass_rate']:.1%}" in listing.out, listing.describe()
    every = json.loads(journey("runs", "list", "--all", "--json").out)
    kinds = {r["id"]: r["kind"] for r in every}
    stored = dict(journey.query("SELECT id, kind FROM runs"))
    assert sorted(kinds.values()) == ["run", "run", "sample"] and kinds.keys() == stored.keys()
    assert next(r for r in every if r["id"] == demo)["ensemble"] == "demo"


def test_debias_compare_of_four_modes_fits_one_screen(journey: Journey) -> None:
    """`debias compare` printed about 280 lines of ``bias: / mode: / n:`` blocks at 80 columns,
    ``bias:`` blank in five of every six; now one table per bias, its modes as rows."""
    step = journey("debias", "compare", "--judge", "simulated:demo-openai", "--modes",
                   "plain,aware,self,swap")
    lines = step.out.splitlines()
    assert len(lines) <= 60 and "bias: " not in step.out, step.describe()
    assert "authority: use aware (" in step.out and "verbosity: use self (" in step.out
    (report,) = journey.query("SELECT report_json FROM debias_experiments")[0]
    assert set(json.loads(report)["biases"]["authority"]["modes"]) == {"plain", "aware", "self",
                                                                       "swap"}
