"""Journeys of a team's first week with its own ensemble (issue 20 items 1, 2, 9, 10, 13, 15).

Each step names the defect it holds fixed; every one failed on the code before the fix.
"""

from __future__ import annotations

import json
import signal
from pathlib import Path

from legal_judge.dataset import load_dataset, sample_dataset_path

from .conftest import CONTRACT_CODES, Journey

DEMO_TOML = Path(__file__).parents[2] / "legal_judge" / "data" / "ensemble.demo.toml"


def _bench(journey: Journey, n: int) -> Path:
    path = journey.cwd / "bench.jsonl"
    items = load_dataset(sample_dataset_path())[:n]
    path.write_text("".join(i.model_dump_json() + "\n" for i in items), encoding="utf-8")
    return path


def _slow_ensemble(journey: Journey) -> Path:
    judges = "".join(f'\n[[judges]]\nspec = "simulated:{p}?latency_ms=200"\n'
                     for p in ("demo-openai", "demo-google", "demo-mistral"))
    path = journey.cwd / "slow.toml"
    path.write_text(f"name = 'slow'\nconcurrency = 2\nrun_checks = false\n{judges}", encoding="utf-8")
    return path



def _status_of(listing: str, run_id: str) -> str:
    for line in listing.splitlines():
        cells = [c.strip() for c in line.strip("│").split("│")]
        if cells and cells[0] == run_id:
            return cells[2]
    raise AssertionError(f"{run_id} is not listed:\n{listing}")


def test_rename_the_demo_judges_and_run_again(journey: Journey) -> None:
    """Item 1: renamed judges crashed the next run (ZeroDivisionError; KeyError with one name
    kept), because their cached verdicts carried the old display names."""
    journey("demo", "--quiet")
    demo_id = journey.query("SELECT id FROM runs")[0][0]
    text = DEMO_TOML.read_text(encoding="utf-8")
    renamed = (text.replace('"gpt-4o (simulated)"', '"openai"')
               .replace('"gemini-2.5-pro (simulated)"', '"google"')
               .replace('"mistral-large (simulated)"', '"mistral"'))
    (journey.cwd / "mine.toml").write_text(renamed, encoding="utf-8")
    bench = str(sample_dataset_path())
    run = journey("run", bench, "--ensemble", "mine.toml", "--quiet", "--run-id", "renamed")
    assert "Run renamed — completed" in run.out
    # Renaming is free: nothing is paid again.
    assert "reused from the cache: 57 of 57 items (171 of 171 judge verdicts)" in run.out
    # Nothing was paid, so nothing is counted: it read "tokens: 422,019 in" for 0 calls.
    assert "provider calls: 0 " in run.out
    assert "tokens: 0 in / 0 out  cost: $0.0000 (this run's calls only)" in run.out
    names = {r[0] for r in journey.query(
        "SELECT json_extract(verdict_json, '$.judge') FROM verdicts WHERE run_id = 'renamed'")}
    assert names == {"openai", "google", "mistral"}
    # The names changed nothing the verdicts mean: every item scores as in the demo.
    same = journey.query(
        "SELECT COUNT(*) FROM ensemble_results a JOIN ensemble_results b USING (item_id) "
        "WHERE a.run_id = ? AND b.run_id = 'renamed' AND json_extract(a.result_json, '$.scores')"
        " = json_extract(b.result_json, '$.scores') AND a.overall IS b.overall", demo_id)
    assert same == [(57,)]
    kept = text.replace('"gemini-2.5-pro (simulated)"', '"google"').replace(
        '"mistral-large (simulated)"', '"mistral"')
    (journey.cwd / "kept.toml").write_text(kept, encoding="utf-8")
    run = journey("run", bench, "--ensemble", "kept.toml", "--quiet", "--run-id", "kept")
    assert "Run kept — completed" in run.out
    weights = journey.query("SELECT json_extract(result_json, '$.weights') FROM ensemble_results "
                            "WHERE run_id = 'kept' LIMIT 1")[0][0]
    assert {w["judge"] for w in json.loads(weights)} == {"gpt-4o (simulated)", "google", "mistral"}


def test_a_refused_run_leaves_nothing_behind(journey: Journey) -> None:
    """Item 2 (and 9): validation must finish before a run row or a progress bar exists, and
    `run --ensemble default` without keys named only the first of three missing keys."""
    bench = _bench(journey, 8)
    refused = journey("run", str(bench), "--ensemble", "default", expect=2)
    for key in ("OPENAI_API_KEY", "GEMINI_API_KEY", "MISTRAL_API_KEY"):
        assert key in refused.err, refused.describe()
    assert "judging" not in refused.err, refused.describe()  # no progress bar for a refused run
    assert not journey.store_file.exists() or journey.query("SELECT COUNT(*) FROM runs") == [(0,)]


def test_a_killed_run_is_shown_interrupted_and_resumes(journey: Journey) -> None:
    """Item 2: a run whose process died stayed `running` forever in `runs list`."""
    bench = _bench(journey, 8)
    proc = journey.spawn("run", str(bench), "--ensemble", str(_slow_ensemble(journey)),
                  "--run-id", "K", "--quiet")
    journey.wait_for_verdicts(3, proc)
    proc.kill()  # kill -9: the process gets no chance to finish the run
    proc.communicate(timeout=30)
    assert journey.query("SELECT status FROM runs WHERE id = 'K'") == [("running",)]
    listing = journey("runs", "list")
    assert _status_of(listing.out, "K") == "interrupted", listing.describe()
    assert "legal-judge run --resume K" in listing.out
    shown = journey("runs", "show", "K")
    assert "interrupted" in shown.out and "legal-judge run --resume K" in shown.out
    resumed = journey("run", "--resume", "K", "--quiet")
    assert "Run K — completed" in resumed.out
    assert _status_of(journey("runs", "list").out, "K") == "completed"


def test_doctor_and_run_report_the_same_broken_ensemble(journey: Journey) -> None:
    """Item 9: `doctor` said "all checks passed" for `spec = "openia:gpt-4o"`, and told a user
    with a missing ensemble file to "correct the lines listed above"."""
    typo = '[[judges]]\nspec = "openia:gpt-4o"\n[[judges]]\nspec = "simulated:demo-google"\n'
    (journey.cwd / "typo.toml").write_text(
        typo + '[[judges]]\nspec = "simulated:demo-mistral"\n', encoding="utf-8")
    doctor = journey("doctor", "--ensemble", "typo.toml", expect=2)
    flat = " ".join(doctor.out.split())
    assert "unknown provider 'openia' (did you mean 'openai'?)" in flat, doctor.describe()
    assert "use one of: anthropic, gemini" in flat
    assert "all checks passed" not in flat and "1 problem(s) found." in flat
    # The same file with a keyed judge: run and doctor both name every problem at once.
    (journey.cwd / "typo.toml").write_text(
        typo + '[[judges]]\nspec = "mistral:mistral-large-latest"\n', encoding="utf-8")
    run = journey("run", str(_bench(journey, 2)), "--ensemble", "typo.toml", expect=2)
    flat_err = " ".join(run.err.split())
    assert "typo.toml: 2 problems in the ensemble, nothing was run" in flat_err, run.describe()
    assert "unknown provider 'openia'" in flat_err and "MISTRAL_API_KEY" in flat_err
    doctor = journey("doctor", "--ensemble", "typo.toml", expect=2)
    flat = " ".join(doctor.out.split())
    assert "problem key MISTRAL_API_KEY: not set; needed by mistral:mistral-large-latest" in flat
    assert "unknown provider 'openia'" in flat and "2 problem(s) found." in flat
    missing = journey("doctor", "--ensemble", "nofile.toml", expect=2)
    flat = " ".join(missing.out.split())
    assert "ensemble file nofile.toml does not exist" in flat, missing.describe()
    assert "correct the lines" not in flat and "bundled ensemble: default, demo" in flat


def test_malformed_judge_urls_are_refused_before_anything_runs(journey: Journey) -> None:
    """Item 10: bad server URLs ended in `internal error` (exit 70) after other judges were paid,
    or were accepted and failed on every call."""
    urls = ("http://127.0.0.1:notaport/v1", "http://[::1", "http://127.0.0.1:70000/v1",
            "http:///v1")
    judges = "".join(f'\n[[judges]]\nname = "local-{i}"\nspec = "openai-compatible:m@{u}"\n'
                     for i, u in enumerate(urls, start=1))
    (journey.cwd / "urls.toml").write_text(
        f'[[judges]]\nspec = "simulated:demo-google"\n{judges}', encoding="utf-8")
    run = journey("run", str(_bench(journey, 2)), "--ensemble", "urls.toml", expect=2)
    flat = " ".join(run.err.split())
    assert "urls.toml: 4 problems in the ensemble, nothing was run" in flat, run.describe()
    for n, why in ((2, "the port is not a number"), (3, "an IPv6 address must be closed"),
                   (4, "the port is above 65535"), (5, "it names no host")):
        assert f"judge {n} 'local-{n - 1}': judge spec" in flat and why in flat, why
    assert "fix: write the server URL as http://HOST:PORT/v1" in flat
    assert not journey.store_file.exists() or journey.query("SELECT COUNT(*) FROM runs") == [(0,)]
    doctor = journey("doctor", "--ensemble", "urls.toml", expect=2)
    assert "4 problem(s) found." in doctor.out and "names no host" in doctor.out


def test_ctrl_c_during_a_run_exits_130_and_the_run_resumes(journey: Journey) -> None:
    """Item 13: Ctrl-C during `run` exited 0, so a cancelled CI step looked green."""
    bench = _bench(journey, 8)
    proc = journey.spawn("run", str(bench), "--ensemble", str(_slow_ensemble(journey)),
                  "--run-id", "C")
    journey.wait_for_verdicts(3, proc)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode in CONTRACT_CODES and "Traceback" not in err
    assert proc.returncode == 130, (out, err)
    assert "run interrupted" in out and "legal-judge run --resume C" in out
    assert journey.query("SELECT status FROM runs WHERE id = 'C'") == [("interrupted",)]
    assert _status_of(journey("runs", "list").out, "C") == "interrupted"
    resumed = journey("run", "--resume", "C", "--quiet")
    assert "Run C — completed" in resumed.out


def test_a_file_named_like_a_bundled_ensemble_does_not_shadow_it(journey: Journey) -> None:
    """Item 15: an empty file `demo` in the working directory made `legal-judge demo` fail with
    "demo: field 'judges': Field required"."""
    (journey.cwd / "demo").write_text("", encoding="utf-8")
    demo = journey("demo", "--quiet")
    assert "completed" in demo.out
    assert "the file demo in this folder is not read (write ./demo to use it)" in demo.err
    # A path is read as the file it names, and its problem is reported as that file's.
    local = journey("run", str(_bench(journey, 2)), "--ensemble", "./demo", expect=2)
    assert "demo: field 'judges': Field required" in local.err


def test_the_progress_line_of_a_cached_rerun_counts_no_call(journey: Journey) -> None:
    """The progress line of a rerun served from the cache read "calls 171 cached 171 ... tokens
    444,849" while the run sent no request and its summary said "provider calls: 0": it counted
    each cached verdict's original attempts and tokens again."""
    bench = str(_bench(journey, 12))
    first = journey("run", bench, "--ensemble", "demo", "--run-id", "first")
    line = " ".join(first.err.split())
    assert "12/12 calls 36 cached 0 retries 0 failed 0 tokens" in line, first.describe()
    again = journey("run", bench, "--ensemble", "demo", "--run-id", "again")
    line = " ".join(again.err.split())
    assert "12/12 calls 0 cached 36 retries 0 failed 0 tokens 0 cost $0.0000" in line, (
        again.describe())
    assert "provider calls: 0 " in again.out
    assert journey.query("SELECT COUNT(*) FROM judge_calls WHERE run_id = 'again'")[0][0] == 0


def test_real_judges_whose_rationales_say_simulated_are_not_called_simulated(
        journey: Journey) -> None:
    """A run of real judges was labelled "Scored by SIMULATED judges (demo only, never a judge
    of record)" in its output and its JUnit report when a verdict's raw output said "simulated"
    (a rationale about simulated trading): the label came from the verdicts' text, not from the
    judges' specs. A renamed simulated judge is still named as one."""
    from .conftest import openai_stub

    bench = str(_bench(journey, 4))
    with openai_stub("--rationale", "spoofing is simulated trading: 7 U.S.C. 6c(a)(5)(C)") as url:
        toml = journey.cwd / "real.toml"
        toml.write_text("name = 'real'\nrun_checks = false\n" + "".join(
            f'\n[[judges]]\nname = "{m}"\nspec = "openai-compatible:{m}@{url}"\n'
            for m in ("gpt-4o", "gemini-2.5-pro", "mistral-large-latest")), encoding="utf-8")
        real = journey("run", bench, "--ensemble", str(toml), "--quiet", "--run-id", "real",
                       "--junit", "real.xml")
    assert journey.query("SELECT COUNT(*) FROM verdicts WHERE run_id = 'real' "
                         "AND verdict_json LIKE '%simulated trading%'")[0][0] == 12
    assert "SIMULATED" not in real.out, real.describe()
    assert "SIMULATED" not in (journey.cwd / "real.xml").read_text(encoding="utf-8")
    renamed = DEMO_TOML.read_text(encoding="utf-8").replace(" (simulated)", "")
    (journey.cwd / "renamed.toml").write_text(renamed, encoding="utf-8")
    demo = journey("run", bench, "--ensemble", "renamed.toml", "--quiet", "--run-id", "demo")
    assert "Scored by SIMULATED judges" in demo.out, demo.describe()
