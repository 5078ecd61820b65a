"""A team's CI week on its infrastructure: runners that merge their shard stores, a store address
with a typo, Langfuse keys that are wrong, and flags given out of range.

Defects, as a team met them (each is a step below, its comment naming it):

* ``runs merge`` (and ``runs finish``) completed a sharded run whose INCONCLUSIVE share failed
  the ``[run]`` gate with exit 0 and no gate line, while ``run`` over the same items exits 1;
* Langfuse keys that Langfuse refuses (HTTP 401) made ``sync``, ``prompts push`` and ``datasets
  push`` exit 3 ("check Langfuse is reachable, then run again"), the code of an outage a rerun
  resolves, though ``doctor`` calls it a problem for the user (exit 2) and no rerun delivers
  until the keys are fixed; a missing secret key said "not configured";
* a store address of another URL scheme (``postgresql+psycopg://``, ``mysql://``,
  ``sqlite:///``) in ``legal-judge.toml`` or ``LEGAL_JUDGE_STORE`` was read as a file path: a new
  empty SQLite store in ``./postgresql+psycopg:/...``, "no runs yet" and exit 0, the runner
  silently on a store of its own (and a password in the URL printed in the path);
* flags out of range said false things: ``doctor --ping --timeout 0`` pinged no judge, printed
  no reach line and "all checks passed." (exit 0) for a dead endpoint; ``runs list --limit 0``
  said "no runs yet" of a store holding runs; ``sync --timeout 0`` blamed Langfuse (exit 3).
"""

from __future__ import annotations

import json
from pathlib import Path

from .conftest import Journey, LangfuseStandin
from .test_no_green_without_judging import _bench, _flaky

GATE_FAILED = ("run gate: FAILED: inconclusive share 33.3% (4 of 12 items) > policy limit 10.0% "
               "(run.max_inconclusive_share)")


def test_runners_merge_their_shard_stores_and_the_run_gate_still_decides(
        journey: Journey, tmp_path: Path) -> None:
    bench = _bench(journey, 12)
    flaky = _flaky(journey.cwd / "flaky.toml")  # 4 of these 12 items are INCONCLUSIVE
    # Two CI runners, each with a store of its own (no server): one shard each.
    stores = []
    for k in (1, 2):
        home = tmp_path / f"runner{k}"
        journey("run", str(bench), "--ensemble", str(flaky), "--run-id", "nightly", "--shard",
                f"{k}/2", "--quiet", env={"LEGAL_JUDGE_HOME": str(home)})
        stores.append(str(home / "store.sqlite3"))

    # Defect: `runs merge` printed the merged run and exited 0 without a gate line, although a
    # third of the items were INCONCLUSIVE; `run` over the same items exits 1 (the [run] gate).
    merged = journey("runs", "merge", "nightly", *stores, expect=1)
    assert GATE_FAILED in " ".join(merged.out.split()), merged.describe()
    assert "policy: bundled default (sha256" in merged.out
    assert journey.query("SELECT status FROM runs WHERE id = 'nightly'") == [("completed",)]
    # Rerun (the CI job retried): decided again, the same way; its JSON says why.
    again = journey("runs", "merge", "nightly", *stores, "--json", expect=1)
    doc = json.loads(again.out)
    assert doc["gate"]["passed"] is False and doc["gate"]["inconclusive"] == 4
    # `runs finish` of the merged run decides it the same way too.
    finish = journey("runs", "finish", "nightly", expect=1)
    assert GATE_FAILED in " ".join(finish.out.split())
    # Loosened on purpose: passes, and says so.
    loose = journey("runs", "finish", "nightly", "--override", "max_inconclusive_share=0.4",
                    "--override", "min_judge_coverage=0")
    assert "policy override: run.max_inconclusive_share=0.4 (policy 0.1)" in loose.out


def test_a_ci_job_with_a_wrong_langfuse_secret_is_told_to_fix_the_keys(
        journey: Journey, langfuse: LangfuseStandin) -> None:
    journey("demo", "--quiet", env={"LANGFUSE_SECRET_KEY": "sk-lf-rotated"})
    assert journey.query("SELECT COUNT(*) FROM outbox WHERE synced_at IS NULL") == [(1,)]
    # doctor names the problem (exit 2)...
    doctor = journey("doctor", "--ensemble", "demo", env={"LANGFUSE_SECRET_KEY": "sk-lf-rotated"},
                     expect=2)
    assert "refused the keys (HTTP 401)" in doctor.out
    # Defect: ...and sync, prompts push and datasets push exited 3 ("check Langfuse is
    # reachable"): the same problem is the user's to fix everywhere, exit 2 with the keys' fix.
    for args in (("sync",), ("prompts", "push"),
                 ("datasets", "push", str(_bench(journey, 2)), "--name", "bench")):
        step = journey(*args, env={"LANGFUSE_SECRET_KEY": "sk-lf-rotated"}, expect=2)
        said = " ".join(step.err.split())
        assert "HTTP 401" in said and "check LANGFUSE_PUBLIC_KEY and LANGFUSE_SECRET_KEY" in said
        assert "reachable" not in said
    # Defect: a secret key left out said "Langfuse is not configured"; it names the variable.
    partial = journey("sync", env={"LANGFUSE_SECRET_KEY": ""}, expect=2)
    assert "partly configured: LANGFUSE_SECRET_KEY missing" in partial.err
    # Nothing was lost: with the right keys the outbox is delivered.
    journey("sync")
    assert journey.query("SELECT COUNT(*) FROM outbox WHERE synced_at IS NULL") == [(0,)]


def test_a_store_url_with_a_typo_in_its_scheme_never_leaves_a_runner_on_its_own_store(
        journey: Journey) -> None:
    journey("demo", "--quiet")  # the runner's own default store holds a run
    project = journey.cwd / "legal-judge.toml"
    # Defect: the SQLAlchemy-style scheme was read as a file path: a new empty store in
    # ./postgresql+psycopg:/..., "no runs yet", exit 0; now refused naming file, line and fix.
    project.write_text('[store]\nurl = "postgresql+psycopg://judge@db.internal/lj"\n', "utf-8")
    step = journey("runs", "list", expect=2)
    said = " ".join(step.err.split())
    assert f"{project}:2: field '[store] url'" in said and "postgresql+psycopg:// URL" in said
    assert "no runs yet" not in step.text
    project.unlink()
    # The same in the environment, with a password: refused, and the password never printed.
    step = journey("runs", "list", env={"LEGAL_JUDGE_STORE": "mysql://judge:s3cret@db/lj"},
                   expect=2)
    assert "LEGAL_JUDGE_STORE: mysql://judge:***@db/lj is a mysql:// URL" in " ".join(
        step.err.split())
    assert "s3cret" not in step.text
    step = journey("store", "copy", str(journey.store_file), "sqlite:///team.sqlite3", expect=2)
    assert "TARGET: sqlite:///team.sqlite3 is a sqlite:// URL" in " ".join(step.err.split())
    assert not list(journey.cwd.rglob("*:*"))  # no folder named after a scheme, no new store


def test_flags_out_of_range_are_refused_instead_of_saying_false_things(journey: Journey) -> None:
    journey("demo", "--quiet")
    dead = journey.cwd / "dead.toml"
    dead.write_text('name = "dead"\nquorum = 1\n[[judges]]\n'
                    'spec = "openai-compatible:m@http://127.0.0.1:9/v1"\n', encoding="utf-8")
    # Defect: exit 0 and "all checks passed." without a single request to the dead endpoint.
    ping = journey("doctor", "--ping", "--ensemble", str(dead), "--timeout", "0", expect=2)
    assert "Invalid value for '--timeout'" in ping.err and "all checks passed" not in ping.text
    pinged = journey("doctor", "--ping", "--ensemble", str(dead), "--timeout", "2", expect=2)
    assert "http://127.0.0.1:9/v1 unreachable" in pinged.out
    # Defect: "no runs yet: `legal-judge demo` makes one", of a store holding the demo's run.
    listed = journey("runs", "list", "--limit", "0", expect=2)
    assert "no runs yet" not in listed.text and "Invalid value for '--limit'" in listed.err
    # Defect: blamed Langfuse (exit 3) for a delivery given no time at all.
    synced = journey("sync", "--timeout", "0", expect=2,
                     env={"LANGFUSE_PUBLIC_KEY": "pk", "LANGFUSE_SECRET_KEY": "sk",
                          "LANGFUSE_BASE_URL": "http://127.0.0.1:9"})
    assert "reachable" not in synced.text and "Invalid value for '--timeout'" in synced.err
