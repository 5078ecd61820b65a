"""A team's journeys: a run split across two CI runners' shards, a shared store that is down."""

from __future__ import annotations

import json
import shlex
import sqlite3
from typing import Any

import jsonschema

from legal_judge.benchmark.ensemble_config import resolve_ensemble_path
from legal_judge.commands.json_out import schema_path
from legal_judge.dataset import sample_dataset_path

from .conftest import Journey

SAMPLE = str(sample_dataset_path())
DEMO_ENSEMBLE = resolve_ensemble_path("demo")


def _valid(out: str, command: str) -> Any:
    """A ``--json`` document, checked against the command's shipped schema."""
    document = json.loads(out)
    jsonschema.validate(document, json.loads(schema_path(command).read_text("utf-8")))
    return document


def test_a_run_in_two_shards_completes_once_when_the_last_shard_does(journey: Journey) -> None:
    first = journey("run", SAMPLE, "--ensemble", "demo", "--run-id", "R", "--shard", "1/2",
                    "--quiet")
    assert "shards of R: 1/2 done; pending: 2 (not started)" in " ".join(first.out.split())
    assert "run gate:" not in first.out  # no summary or gate before the run is whole
    pending = journey("runs", "show", "R")
    assert "pending: 2 (not started)" in pending.out
    assert "shard 1/2: R~shard-1-of-2 completed, 29 of 29 items judged" in pending.out
    assert "shard 2/2: not started" in pending.out
    # Each shard was listed as a run of its own; one row per run id, with its shards' state.
    listed = journey("runs", "list")
    assert "~shard" not in listed.out and "shards 1/2 done, 1 pending" in listed.out
    # The pending shard's command names the ensemble too (without it the shard was refused).
    assert (f"legal-judge run {SAMPLE} --ensemble demo --run-id R --shard 2/2"
            in " ".join(listed.out.split()))
    rows = _valid(journey("runs", "list", "--json").out, "runs list")
    assert [(r["id"], r["status"], r["items"], r["results"]) for r in rows] == [
        ("R", "pending", 57, 29)]
    assert rows[0]["shards"]["done"] == [1] and rows[0]["shards"]["pending"][0]["shard"] == 2
    # `runs show R --json` printed the shard lines as text, not a JSON document.
    shown_json = _valid(journey("runs", "show", "R", "--json").out, "runs show")
    assert shown_json["status"] == "pending" and shown_json["summary"] is None
    early = journey("runs", "finish", "R", expect=2)
    assert "fix:" in early.err and "--shard K/N" in " ".join(early.err.split())
    # Defect: `report R` said "no run ... 'R'" of the run `runs list` lists, and the site left
    # it out until its last shard completed; now both say it is pending and what completes it.
    early_report = journey("report", "R", "--md", "r.md", expect=2)
    assert "run 'R' is judged in shards" in " ".join(early_report.err.split())
    assert "no run, audit" not in early_report.err
    journey("report", "--site", str(journey.cwd / "early-site"))
    early_index = (journey.cwd / "early-site" / "index.html").read_text("utf-8")
    assert 'data-id="R"' in early_index and "shards 1/2 done, 1 pending" in early_index
    wrong = journey("run", SAMPLE, "--ensemble", "demo", "--run-id", "R", "--shard", "2/3",
                    "--quiet", expect=2)
    assert "N (the number of shards): stored 2, given 3" in " ".join(wrong.err.split())
    # Issue 35: "a shard started with a different dataset, ensemble or N is refused naming the
    # difference"; the ensemble was the one difference no test refused.
    other = journey.cwd / "other.toml"
    other.write_text(DEMO_ENSEMBLE.read_text("utf-8").replace("quorum = 2", "quorum = 3"),
                     "utf-8")
    changed = journey("run", SAMPLE, "--ensemble", str(other), "--run-id", "R", "--shard", "2/2",
                      "--quiet", expect=2)
    assert "differs from the stored shard 1/2 (R~shard-1-of-2) in its ensemble" in " ".join(
        changed.err.split())
    assert journey.query("SELECT id FROM runs") == [("R~shard-1-of-2",)]  # nothing stored
    # The last shard runs exactly as `runs list --json` printed it.
    printed = rows[0]["shards"]["pending"][0]["command"]
    assert printed.startswith("legal-judge run ")
    last = journey(*shlex.split(printed)[1:], "--quiet")
    assert "run gate: passed" in last.out and "over 57 scored items" in " ".join(last.out.split())
    shown = journey("runs", "show", "R")
    assert "shards of R: 2/2 done" in shown.out
    assert "shard 2/2: R~shard-2-of-2 completed, 28 of 28 items judged" in shown.out
    listed = journey("runs", "list")
    assert "~shard" not in listed.out and "completed (2 shards)" in listed.out
    rows = _valid(journey("runs", "list", "--json").out, "runs list")
    assert [(r["id"], r["status"], r["items"], r["shards"]["done"]) for r in rows] == [
        ("R", "completed", 57, [1, 2])]
    merged = _valid(journey("runs", "show", "R", "--json").out, "runs show")
    assert [r["id"] for r in merged["shards"]["runs"]] == ["R~shard-1-of-2", "R~shard-2-of-2"]
    assert journey.query("SELECT COUNT(*) FROM runs") == [(3,)]  # stored: R and its two shards
    # The static site listed (and reported) each shard as a run of its own too.
    journey("report", "--site", str(journey.cwd / "site"))
    assert (journey.cwd / "site" / "runs" / "R.html").is_file()
    assert "~shard" not in (journey.cwd / "site" / "index.html").read_text("utf-8")
    assert not list((journey.cwd / "site").rglob("*shard*"))
    assert journey.query("SELECT status FROM runs WHERE id = 'R'") == [("completed",)]
    assert journey.query("SELECT COUNT(*) FROM verdicts WHERE run_id = 'R'") == [(171,)]
    assert journey.query("SELECT COUNT(*) FROM items WHERE run_id = 'R'") == [(57,)]
    again = journey("run", SAMPLE, "--ensemble", "demo", "--run-id", "R", "--shard", "1/2",
                    "--quiet", expect=2)  # the run is whole: a shard of it is refused
    assert "already exists" in again.err


def test_a_shared_store_that_is_down_exits_3_without_printing_the_password(
        journey: Journey) -> None:
    journey.env["LEGAL_JUDGE_STORE"] = "postgresql://team:hunter2@127.0.0.1:1/judging"
    step = journey("runs", "list", expect=3)
    assert "hunter2" not in step.text
    assert "postgresql://team:***@127.0.0.1:1/judging" in " ".join(step.err.split())
    assert not journey.store_file.exists()  # nothing was written on the side


def test_a_project_file_points_the_team_at_its_store_and_refuses_a_password(
        journey: Journey) -> None:
    """Issue 35: ``[store] url`` in ``./legal-judge.toml`` (there was no project file)."""
    project = journey.cwd / "legal-judge.toml"
    team = journey.cwd / "team" / "shared.sqlite3"
    project.write_text('[store]\nurl = "team/shared.sqlite3"\n', "utf-8")
    ran = journey("run", SAMPLE, "--ensemble", "demo", "--run-id", "T1", "--quiet")
    assert f"store: {team} (from {project} [store] url)" in " ".join(ran.out.split())
    assert team.is_file() and not journey.store_file.exists()  # nothing in the default store
    doctor = journey("doctor", "--ensemble", "demo")
    assert f"from {project} [store] url" in " ".join(doctor.out.split())
    # The environment wins over the file (a CI job points one runner elsewhere).
    elsewhere = journey.cwd / "ci.sqlite3"
    listed = journey("runs", "list", env={"LEGAL_JUDGE_STORE": str(elsewhere)})
    assert "T1" not in listed.out and elsewhere.is_file()
    # A password in the committed file is refused, named, masked, and nothing is written.
    before = team.stat().st_mtime_ns
    project.write_text('[store]\nurl = "postgresql://team:hunter2@db.internal/judging"\n', "utf-8")
    refused = journey("runs", "list", expect=2)
    said = " ".join(refused.err.split())
    assert f"{project}:2: field '[store] url': holds a password" in said
    assert "hunter2" not in refused.text and "PGPASSWORD" in said and "~/.pgpass" in said
    # A typo is refused naming it, not silently ignored for the default store.
    project.write_text('[store]\nulr = "team/shared.sqlite3"\n', "utf-8")
    typo = journey("run", SAMPLE, "--ensemble", "demo", "--run-id", "T2", "--quiet", expect=2)
    assert f"{project}:2: field 'store.ulr': unknown key 'ulr'" in " ".join(typo.err.split())
    project.write_text('[store]\nurl = team/shared.sqlite3\n', "utf-8")
    broken = journey("runs", "list", expect=2)
    assert f"{project}:2: invalid TOML" in " ".join(broken.err.split())
    # A store the file points at that cannot be opened: the fix names the file, not
    # LEGAL_JUDGE_HOME (which the user never set).
    (journey.cwd / "blocked").write_text("a file, not a folder", "utf-8")
    project.write_text('[store]\nurl = "blocked/s.sqlite3"\n', "utf-8")
    unopened = journey("runs", "list", expect=2)
    said = " ".join(unopened.err.split())
    assert f"point {project} [store] url at one" in said and "LEGAL_JUDGE_HOME" not in said
    assert team.stat().st_mtime_ns == before and not journey.store_file.exists()
    db = sqlite3.connect(f"file:{team}?mode=ro", uri=True)
    try:
        assert db.execute("SELECT id FROM runs WHERE kind = 'run'").fetchall() == [("T1",)]
    finally:
        db.close()


def test_a_shared_store_url_naming_a_missing_schema_or_database_is_the_user_s_to_fix(
        journey: Journey, postgres_url: str) -> None:
    """Both were an "internal error" (the schema) or "cannot be reached, run again" (exit 3, the
    database): a rerun cannot help, the URL must change. Then the corrected URL runs on the server,
    its commits made off the run's event loop (legal_judge/store/writes.py)."""
    from pg_server import new_schema_url

    journey.env["LEGAL_JUDGE_STORE"] = f"{postgres_url}?options=-csearch_path%3Djudgin"
    schema = journey("runs", "list", expect=2)
    said = " ".join(schema.err.split())
    assert "names a schema that does not exist" in said and "CREATE SCHEMA judgin" in said
    assert "internal error" not in schema.text
    database = journey("runs", "list", expect=2,
                       env={"LEGAL_JUDGE_STORE": postgres_url.rsplit("/", 1)[0] + "/judging"})
    said = " ".join(database.err.split())
    assert 'database "judging" does not exist' in said and "createdb" in said
    journey.env["LEGAL_JUDGE_STORE"] = new_schema_url(postgres_url)
    journey("run", SAMPLE, "--ensemble", "demo", "--run-id", "P1", "--quiet")
    rows = _valid(journey("runs", "list", "--json").out, "runs list")
    assert [(r["id"], r["status"], r["items"], r["results"]) for r in rows] == [
        ("P1", "completed", 57, 57)]
    assert not journey.store_file.exists()  # nothing was written on the side
    # A laptop takes the team's store home. At 80 columns the two addresses were a centred table
    # title, cut mid-URL (`...postgres?o` / `ptions=...`): now one line of their own.
    laptop = journey.cwd / "laptop.sqlite3"
    copied = journey("store", "copy", journey.env["LEGAL_JUDGE_STORE"], str(laptop))
    assert f"copy: {journey.env['LEGAL_JUDGE_STORE']} -> {laptop}" in copied.out.splitlines()
    assert "holds every row" in copied.out
    listed = journey("runs", "list", env={"LEGAL_JUDGE_STORE": str(laptop)})
    assert "P1" in listed.out and "completed" in listed.out
