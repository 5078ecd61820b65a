"""Journeys: the small defects a new user met (issue 33, point 6 of its Build).

Each test is one defect, through the real CLI at 80 columns, piped; each was run against the code
before its fix and failed there (the comment on a step says what the old code did).
"""

from __future__ import annotations

import json
import signal
from pathlib import Path

from legal_judge.dataset import sample_dataset_path

from .conftest import Journey

SMALL_AUDIT = ("--dimensions", "verbosity", "--pairs", "10", "--noise-pairs", "2",
               "--probes", "none", "--min-sample", "5", "--min-complete-pairs", "5")


def _bench(journey: Journey, n: int, name: str = "bench.jsonl") -> Path:
    lines = sample_dataset_path().read_text(encoding="utf-8").splitlines()[:n]
    path = journey.cwd / name
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def _count(journey: Journey, table: str) -> int:
    if not journey.store_file.exists():
        return 0
    return int(journey.query(f"SELECT COUNT(*) FROM {table}")[0][0])


def test_an_ensemble_audit_audits_every_judge_and_says_so_first(journey: Journey) -> None:
    # `audit run --judge demo` audited the ensemble's first judge only, and did not say so.
    audit = journey("audit", "run", "--judge", "demo", *SMALL_AUDIT, "--out", "rep.json")
    first = audit.err.splitlines()[0]
    assert first.startswith("auditing all 3 judges of demo, one audit each"), audit.describe()
    flat = " ".join(audit.out.split())
    assert "3 judges audited, one audit each" in flat, audit.describe()
    stored = journey.query("SELECT judge_id, status FROM audits ORDER BY created_at")
    assert len({judge_id for judge_id, _ in stored}) == 3
    assert {status for _, status in stored} == {"complete"}
    files = sorted(p.name for p in journey.cwd.glob("rep.*.json"))
    assert files == sorted(f"rep.{judge_id}.json" for judge_id, _ in stored)
    for judge_id, _ in stored:
        assert judge_id in flat or f"rep.{judge_id}.json" in flat  # each audit is in the table
    needed = journey("audit", "needed", "--judge", "demo")
    assert needed.out.count("audited by") == 3


def test_a_refused_option_leaves_no_audit_and_no_run_behind(journey: Journey) -> None:
    # The example: refused before anything (it left an `interrupted` audit before).
    sig = journey("audit", "run", "--judge", "simulated:fair", *SMALL_AUDIT, "--significance",
                  "1", expect=2)
    assert "significance" in sig.err
    # --llm-variants without its key: exit 2 after the audit row existed, an audit whose
    # resume failed the same way.
    keyless = journey("audit", "run", "--judge", "simulated:fair", *SMALL_AUDIT,
                      "--llm-variants", "openai:gpt-4o", expect=2)
    assert "OPENAI_API_KEY" in keyless.err and "--resume" not in keyless.text
    # An unknown --rubric: every pair unscored, "insufficient data", exit 0.
    rubric = journey("audit", "run", "--judge", "simulated:fair", *SMALL_AUDIT,
                     "--rubric", "soundness", expect=2)
    assert "--rubric soundness: not a numeric rubric" in rubric.err
    assert "legal_soundness" in rubric.err
    # An --out that cannot be written: an internal error after the whole audit.
    (journey.cwd / "notes.txt").write_text("a file, not a folder\n", encoding="utf-8")
    out = journey("audit", "run", "--judge", "simulated:fair", *SMALL_AUDIT,
                  "--out", "notes.txt/rep.json", expect=2)
    assert "--out notes.txt/rep.json: cannot write" in " ".join(out.err.split())
    assert _count(journey, "audits") == 0 and _count(journey, "judge_calls") == 0
    assert "no audits yet" in journey("audit", "list").out
    # `run` had the same defect: --junit in a folder that cannot be made failed (exit 2) after
    # the run was judged and stored.
    run = journey("run", str(_bench(journey, 3)), "--ensemble", "demo", "--quiet",
                  "--junit", "notes.txt/junit.xml", expect=2)
    assert "--junit notes.txt/junit.xml: cannot write" in " ".join(run.err.split())
    assert _count(journey, "runs") == 0 and _count(journey, "verdicts") == 0


def _slow_ensemble(journey: Journey) -> Path:
    judges = "".join(f'\n[[judges]]\nspec = "simulated:{p}?latency_ms=200"\n'
                     for p in ("demo-openai", "demo-google", "demo-mistral"))
    path = journey.cwd / "slow.toml"
    path.write_text(f"name = 'slow'\nconcurrency = 2\nrun_checks = false\n{judges}",
                    encoding="utf-8")
    return path


def test_the_resume_of_a_no_cache_run_does_not_read_the_cache(journey: Journey) -> None:
    bench, ensemble = _bench(journey, 8), str(_slow_ensemble(journey))
    journey("run", str(bench), "--ensemble", ensemble, "--run-id", "A", "--quiet")  # the cache
    proc = journey.spawn("run", str(bench), "--ensemble", ensemble, "--run-id", "B",
                         "--no-cache", "--quiet")
    journey.wait_for_verdicts(24 + 3, proc)
    proc.send_signal(signal.SIGINT)
    proc.communicate(timeout=60)
    assert journey.query("SELECT status FROM runs WHERE id = 'B'") == [("interrupted",)]
    # The resume read the cache the run was started without: the rest came from run A.
    resumed = journey("run", "--resume", "B", "--quiet")
    assert "run B was started with --no-cache" in " ".join(resumed.err.split())
    assert "Run B — completed" in resumed.out
    assert journey.query("SELECT COUNT(*) FROM judge_calls WHERE run_id = 'B' AND cached = 1"
                         ) == [(0,)]
    (summary,) = journey.query("SELECT summary_json FROM runs WHERE id = 'B'")[0]
    assert json.loads(summary)["cached_verdicts"] == 0
    assert "reused from the cache: 0 of 8 items" in resumed.out


def test_after_a_rejected_review_the_fix_is_a_new_audit_not_an_approval(
        journey: Journey) -> None:
    (journey.cwd / "judge.yaml").write_text("kind: judge\nspec: simulated:fair\n"
                                            "high_stakes: true\n", encoding="utf-8")
    (journey.cwd / "policy.toml").write_text(
        '[certification]\npairs = 10\ndimensions = ["verbosity"]\nprobes = []\n'
        "min_complete_pairs = 5\nallow_simulated = true\nallow_inconclusive = true\n",
        encoding="utf-8")
    journey("audit", "run", "--judge", "judge.yaml", *SMALL_AUDIT, "--out", "rep.json")
    audit_id = json.loads((journey.cwd / "rep.json").read_text())["extensions"]["audit_id"]
    rejected = journey("audit", "review", audit_id, "--reject", "--reviewer", "A. Lawyer",
                       "--note", "the verbosity pairs are not equivalent")
    assert "rejected by A. Lawyer" in rejected.out and "re-audit" in rejected.out
    gate = journey("audit", "gate", "rep.json", "--policy", "policy.toml", expect=1)
    flat = " ".join(gate.text.split())
    # It said: fix: legal-judge audit review AUDIT --approve ...
    assert f"its latest audit {audit_id} was rejected" in flat, gate.describe()
    assert "--approve" not in flat and "re-audit with `legal-judge audit run`" in flat
    (review,) = journey.query("SELECT payload_json FROM audit_log WHERE kind = 'review'")
    assert json.loads(review[0])["decision"] == "rejected"


def test_a_three_item_run_gives_no_interval_outside_the_scale(journey: Journey) -> None:
    # It printed a 95% CI of -3.32 to 8.26 on a 0-5 scale.
    run = journey("run", str(_bench(journey, 3)), "--ensemble", "demo", "--run-id", "T")
    flat = " ".join(run.out.split())
    assert "too few items" in flat
    assert "95% CI: too few items for an interval (fewer than 5 scored)" in flat
    (summary,) = journey.query("SELECT summary_json FROM runs WHERE id = 'T'")[0]
    rubrics = json.loads(summary)["rubrics"]
    assert rubrics and all(r["ci95"] is None and r["n"] == 3 for r in rubrics.values())
    assert {r["ci_note"] for r in rubrics.values()} == {
        "too few items for an interval (fewer than 5 scored)"}
    shown = journey("runs", "show", "T")
    assert "too few items" in shown.out


def test_a_sample_covering_every_item_is_a_full_run(journey: Journey) -> None:
    # `--sample 500` of 57 items was called "a partial run".
    run = journey("run", str(_bench(journey, 8)), "--ensemble", "demo", "--sample", "50",
                  "--seed", "3", "--run-id", "S", "--quiet")
    flat = " ".join(run.out.split())
    assert "items: all 8 (--sample 50 --seed 3 covers every item): a full run." in flat
    assert "partial" not in flat
    (config,) = journey.query("SELECT config_json FROM runs WHERE id = 'S'")[0]
    selection = json.loads(config)["selection"]
    assert selection["selected"] == selection["of"] == 8
    # A real sample is still a partial run.
    part = journey("run", str(_bench(journey, 8)), "--ensemble", "demo", "--sample", "4",
                   "--seed", "3", "--quiet")
    part_flat = " ".join(part.out.split())
    assert "items: 4 of 8" in part_flat and "A partial run" in part_flat


def test_a_jurisdiction_written_as_a_name_is_read_as_its_code_or_refused(
        journey: Journey) -> None:
    row = {"prompt": "Is a non-compete clause enforceable?", "response": "Generally not."}
    bench = journey.cwd / "names.jsonl"
    bench.write_text(json.dumps({"id": "a", **row, "jurisdiction": "California"}) + "\n"
                     + json.dumps({"id": "b", **row, "jurisdiction": "US-NY"}) + "\n",
                     encoding="utf-8")
    # "California" was accepted without a word and stored as written.
    valid = journey("validate", str(bench))
    flat = " ".join(valid.out.split())
    assert "names.jsonl:1: field 'jurisdiction': 'California' read as US-CA" in flat
    assert "US-CA (1)" in flat and "California" not in flat.split("warning")[0]
    journey("run", str(bench), "--ensemble", "demo", "--run-id", "J", "--quiet")
    stored = {json.loads(i)["id"]: json.loads(i)["jurisdiction"]
              for (i,) in journey.query("SELECT item_json FROM items WHERE run_id = 'J'")}
    assert stored == {"a": "US-CA", "b": "US-NY"}
    # A name no code stands for is refused, with the known codes, and nothing runs.
    bench.write_text(json.dumps({"id": "c", **row, "jurisdiction": "Narnia"}) + "\n",
                     encoding="utf-8")
    refused = journey("validate", str(bench), expect=2)
    flat = " ".join(refused.err.split())
    assert "names.jsonl:1: field 'jurisdiction': unknown jurisdiction 'Narnia'" in flat
    assert "known codes: AE," in flat and "US-FED" in flat and "US-CA" in flat
    journey("run", str(bench), "--ensemble", "demo", "--quiet", expect=2)
    assert journey.query("SELECT COUNT(*) FROM runs") == [(1,)]


def test_an_ensemble_file_s_mistakes_are_named_with_their_lines(journey: Journey) -> None:
    """Defect (walk-score): `run --ensemble my.toml` named a defect's field but not its line
    ("my.toml: field 'judges.1.wieght': unknown key") under "correct the lines listed above",
    and a check of the whole file read "my.toml: Value error, quorum 2 exceeds ...". The
    project and policy files named their lines; the ensemble now reads through the same reader."""
    bench = _bench(journey, 3)
    (journey.cwd / "my.toml").write_text(
        'name = "mine"\nquorum = 2\nweights = 3\n[[judges]]\nspec = "simulated:demo-openai"\n'
        'weight = -1\n[[judges]]\nspec = "simulated:demo-google"\nwieght = 2\n',
        encoding="utf-8")
    bad = journey("run", str(bench), "--ensemble", "my.toml", expect=2)
    said = " ".join(bad.err.split())
    assert "my.toml:3: field 'weights': unknown key" in said
    assert "my.toml:6: field 'judges.0.weight': Input should be greater than 0" in said
    assert "my.toml:9: field 'judges.1.wieght': unknown key" in said
    (journey.cwd / "one.toml").write_text('quorum = 2\n[[judges]]\nspec = "simulated:demo-openai"\n',
                                          encoding="utf-8")
    one = journey("run", str(bench), "--ensemble", "one.toml", expect=2)
    assert "one.toml: quorum 2 exceeds the number of judges (1)" in " ".join(one.err.split())
    assert _count(journey, "runs") == 0
