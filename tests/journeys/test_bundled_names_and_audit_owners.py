"""Journeys of the commands that name an ensemble, and of an audit whose process is killed.

Each step names the defect it holds fixed; every one failed on the code before the fix.
"""

from __future__ import annotations

import json

from .conftest import Journey

SMALL_AUDIT = ("--dimensions", "verbosity", "--pairs", "10", "--noise-pairs", "2",
               "--probes", "none", "--min-sample", "5", "--min-complete-pairs", "5")


def test_audit_and_debias_read_the_bundled_demo_beside_a_file_named_demo(
        journey: Journey) -> None:
    """`run --ensemble demo` reads the bundled demo beside an empty file `demo` (issue 20 item
    15), but `audit run --judge demo` said "cannot read the judge 'demo'" (exit 2) and
    `debias compare --judge demo` read the empty file as a judge and refused it."""
    (journey.cwd / "demo").write_text("", encoding="utf-8")
    audit = journey("audit", "run", "--judge", "demo", *SMALL_AUDIT,
                    "--out", str(journey.cwd / "audit.json"))
    assert "judge gpt-4o (simulated)" in audit.out, audit.describe()
    assert audit.err.count("the file demo in this folder is not read") == 1, audit.describe()
    report = json.loads((journey.cwd / "audit.json").read_text(encoding="utf-8"))
    assert report["extensions"]["judge"] == "gpt-4o (simulated)"
    # The stored --judge value is the name, so a resume reads the bundled demo too.
    (config,) = journey.query("SELECT config_json FROM audits")
    assert json.loads(config[0])["source"]["judge"] == "demo"
    debias = journey("debias", "compare", "--judge", "demo", "--biases", "authority",
                     "--modes", "plain,aware", "--repeats", "1")
    assert "Accuracy on known-answer pairs: gpt-4o (simulated)" in debias.out, debias.describe()
    assert "the file demo in this folder is not read" in debias.err
    # A path is a path: ./demo reads the local, empty file, and says so.
    local = journey("audit", "run", "--judge", "./demo", *SMALL_AUDIT, expect=2)
    assert "field 'judges'" in local.err, local.describe()
