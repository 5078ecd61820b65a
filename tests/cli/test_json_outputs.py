"""``--json`` on every command that reports (issue 33, Build 3): one JSON document on stdout, in
the shape its shipped JSON Schema describes.

The click tree is walked: a command either has ``--json`` and a schema file, or is named in
:data:`NON_REPORTING` with the reason. Then every reporting command runs with ``--json`` against a
populated store (a demo run, a second run, a comparison, an audit, a calibration with its
correction, a debias experiment, the Langfuse stand-in for the prompts and the sync) and its
stdout is validated against its schema.

Set ``LEGAL_JUDGE_JSON_SAMPLES=DIR`` to keep each command's document in DIR (input of
``scripts/json_schemas.py`` when a shape changes on purpose).
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import click
import jsonschema
import pytest
from click.testing import CliRunner

from legal_judge.cli import cli
from legal_judge.commands.json_out import schema_name, schema_path
from legal_judge.dataset import sample_dataset_path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "sync"))

from journeys.test_calibration import _fill  # noqa: E402  (the journeys' lawyers fill the sheet)
from standin import PUBLIC_KEY, SECRET_KEY, LangfuseStandin  # noqa: E402

SCHEMAS = schema_path("run").parent

#: Commands that print no report of their own, with the reason.
NON_REPORTING = {
    "report": "writes report files (--html, --md, --json FILE): the file is the document",
    "runs export": "writes a run's rows to a file (--format jsonl for JSON rows)",
    "calibrate promote": "an action (moves the production label; exit 1 when refused): "
                         "`calibrate validate --json` holds the decision it applies",
}

#: How a command asks for its JSON on stdout when it is not the ``--json`` flag.
JSON_ARGS = {"debias compare": ("--json", "-")}


def _leaves(group: click.Group, ctx: click.Context, path: tuple[str, ...] = ()) \
        -> Iterator[tuple[str, click.Command]]:
    for name in group.list_commands(ctx):
        command = group.get_command(ctx, name)
        assert command is not None
        if isinstance(command, click.Group):
            yield from _leaves(command, ctx, (*path, name))
        else:
            yield " ".join((*path, name)), command


def _commands() -> dict[str, click.Command]:
    return dict(_leaves(cli, click.Context(cli)))


def _json_flag(command: click.Command) -> click.Parameter | None:
    return next((p for p in command.params if "--json" in getattr(p, "opts", ())), None)


def test_every_command_that_reports_has_json_and_a_shipped_schema() -> None:
    commands = _commands()
    assert set(NON_REPORTING) <= set(commands), "a listed command no longer exists"
    problems = []
    for name, command in commands.items():
        if name in NON_REPORTING:
            continue
        param = _json_flag(command)
        if param is None:
            problems.append(f"{name}: no --json (or list it in NON_REPORTING with the reason)")
        elif name not in JSON_ARGS and not getattr(param, "is_flag", False):
            problems.append(f"{name}: --json takes a value; say how in JSON_ARGS")
        if not schema_path(name).is_file():
            problems.append(f"{name}: no schema {schema_name(name)} in {SCHEMAS}")
    assert not problems, "\n".join(problems)
    expected = {schema_name(n) for n in commands if n not in NON_REPORTING}
    shipped = {p.name for p in SCHEMAS.glob("*.schema.json")}
    assert shipped == expected, f"schemas of no command: {sorted(shipped - expected)}"
    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text("utf-8")
    for path in SCHEMAS.glob("*.schema.json"):
        assert f"`{path.name.removesuffix('.schema.json')}`" in readme, \
            f"{path.name}: list it in the README's --json section"
        schema = json.loads(path.read_text("utf-8"))
        jsonschema.Draft202012Validator.check_schema(schema)
        assert schema.get("description"), f"{path.name}: say what the document is"


class Session:
    """The CLI in-process against one home; each ``--json`` document is checked against its
    schema as it is printed."""

    def __init__(self, home: Path, cwd: Path, env: dict[str, str]) -> None:
        self.env = {"LEGAL_JUDGE_HOME": str(home), "COLUMNS": "80", "NO_COLOR": "1", **env}
        self.cwd = cwd
        self.checked: dict[str, Any] = {}
        self.samples = os.environ.get("LEGAL_JUDGE_JSON_SAMPLES")

    def __call__(self, *args: str, expect: int | tuple[int, ...] = 0) -> Any:
        """Run ``legal-judge ARGS`` (words before options name the command) with ``--json``."""
        command = self._command(args)
        json_args = JSON_ARGS.get(command, ("--json",))
        prev = Path.cwd()
        os.chdir(self.cwd)
        try:
            res = CliRunner().invoke(cli, [*args, *json_args], env=self.env,
                                     catch_exceptions=False)
        finally:
            os.chdir(prev)
        allowed = (expect,) if isinstance(expect, int) else expect
        shown = f"$ legal-judge {' '.join(args)} --json\n{res.stdout}\n--- stderr ---\n{res.stderr}"
        assert res.exit_code in allowed, f"exit {res.exit_code}\n{shown}"
        # stdout is one JSON document, nothing before or after it.
        doc = json.loads(res.stdout)
        # Collecting samples for a new command: nothing to validate against yet.
        schema = ({} if self.samples and not schema_path(command).is_file()
                  else json.loads(schema_path(command).read_text("utf-8")))
        errors = sorted(jsonschema.Draft202012Validator(schema).iter_errors(doc), key=str)
        assert not errors, f"{schema_name(command)}: " + "; ".join(
            f"{'/'.join(map(str, e.absolute_path))}: {e.message}" for e in errors[:5]) + f"\n{shown}"
        self.checked.setdefault(command, doc)
        if self.samples:
            folder = Path(self.samples)
            folder.mkdir(parents=True, exist_ok=True)
            stem = schema_name(command).removesuffix(".schema.json")
            n = len(list(folder.glob(f"{stem}.*.json")))
            (folder / f"{stem}.{n}.json").write_text(json.dumps(doc, indent=1), "utf-8")
        return doc

    @staticmethod
    def _command(args: tuple[str, ...]) -> str:
        commands = _commands()
        words = []
        for a in args:
            if " ".join((*words, a)) not in commands and not any(
                    c.startswith(" ".join((*words, a)) + " ") for c in commands):
                break
            words.append(a)
        return " ".join(words)


@pytest.fixture
def session(tmp_path: Path) -> Iterator[Session]:
    server = LangfuseStandin().start()
    cwd = tmp_path / "work"
    cwd.mkdir()
    try:
        yield Session(tmp_path / "home", cwd, {
            "LANGFUSE_PUBLIC_KEY": PUBLIC_KEY, "LANGFUSE_SECRET_KEY": SECRET_KEY,
            "LANGFUSE_BASE_URL": server.base_url, "LANGFUSE_TIMEOUT": "5"})
    finally:
        server.stop()


def _pairs(path: Path) -> Path:
    rows = [{"dimension": "verbosity", "pair_id": f"v{i}", "variant_a_input": f"long {i}",
             "variant_a_score": 4.0 + (i % 3) * 0.1, "variant_b_input": f"short {i}",
             "variant_b_score": 3.0 + (i % 4) * 0.1, "error": None} for i in range(12)]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), "utf-8")
    return path


def test_every_reporting_command_prints_one_document_in_its_schema(session: Session) -> None:
    sample = str(sample_dataset_path())
    s = session
    # Datasets and runs.
    s("validate", sample)
    run_a = s("demo")["id"]
    assert s("runs", "show", run_a)["id"] == run_a
    run_b = s("run", sample, "--ensemble", "demo")["id"]
    s("runs", "list")
    s("compare", run_a, run_b)
    # A sharded run: the last shard merges it; `runs finish` then shows it; a shard store merged.
    s("run", sample, "--ensemble", "demo", "--run-id", "sh", "--shard", "1/2", "--quiet")
    s("run", sample, "--ensemble", "demo", "--run-id", "sh", "--shard", "2/2", "--quiet")
    assert s("runs", "finish", "sh")["id"] == "sh"
    other = {**s.env, "LEGAL_JUDGE_HOME": str(s.cwd / "other")}
    for part in ("1/2", "2/2"):
        CliRunner().invoke(cli, ["run", sample, "--ensemble", "demo", "--run-id", "sm",
                                 "--shard", part, "--quiet"], env=other, catch_exceptions=False)
    merged = s("runs", "merge", "sm", str(s.cwd / "other" / "store.sqlite3"))
    assert merged["id"] == "sm" and merged["merged_shard_runs"] == 2
    copied = s("store", "copy", str(Path(s.env["LEGAL_JUDGE_HOME"]) / "store.sqlite3"),
               str(s.cwd / "copy.sqlite3"))
    assert copied["passed"] is True
    s("judge", "--judge", "simulated:demo-openai", "--item", "us-fed-004", "--dataset", sample)
    # check has three documents (one answer, a dataset's answers, --about): one schema, anyOf.
    s("check", "--text", "Roe v. Wade, 999 U.S. 1 (2020).", "--today", "2026-11-29", expect=1)
    s("check", "--dataset", sample, "--today", "2026-11-29", expect=1)
    s("check", "--about")
    s("rules")
    s("policy", "show")
    s("doctor", "--ensemble", "demo", expect=(0, 2))
    s("batches", "status")
    # An audit and its decisions.
    s("audit", "dimensions")
    audit = s("audit", "run", "--judge", "simulated:demo-openai", "--pairs", "12",
              "--dimensions", "verbosity,authority",
              "--probe-pairs", "12", "--noise-pairs", "4", expect=(0, 1))
    audit_id = audit["audits"][0]["audit_id"]
    gate = s("audit", "gate", audit_id, expect=1)
    assert gate["passed"] is False  # a simulated judge is never a judge of record
    s("audit", "needed", "--judge", "simulated:demo-openai")
    s("audit", "list")
    s("audit", "diff", audit_id, audit_id)
    s("audit", "review", audit_id, "--approve", "--reviewer", "A. Lawyer")
    s("audit", "verify-log")
    s("audit", "stats", str(_pairs(s.cwd / "pairs.jsonl")))
    s("audit", "traffic", "--attribute", "jurisdiction", "--since", "30d", expect=(0, 1))
    # A calibration, its correction and the escalation.
    sampled = s("calibrate", "sample", run_a, "--n", "50", "--seed", "7", "--out",
                str(s.cwd / "sheet.csv"), "--no-langfuse-queue")
    _fill(Path(sampled["out"]), s.cwd / "filled.csv")
    s("calibrate", "import", str(s.cwd / "filled.csv"), "--run", run_a)
    cal = s("calibrate", "compare", run_a, "--quarter", "2026-Q4")
    correction = s("calibrate", "fit", cal["calibration_id"])
    s("calibrate", "apply", run_a, correction["id"], "--out", str(s.cwd / "corrected.jsonl"))
    s("calibrate", "estimate", run_a)
    s("calibrate", "history")
    s("calibrate", "plan", run_a)
    s("calibrate", "escalate", run_a, "--target", "0.85", "--no-langfuse-queue",
      "--out", str(s.cwd / "esc.csv"), expect=(0, 1, 2))
    s("calibrate", "validate", "--calibration", cal["calibration_id"], "--candidate", "simulated:fair",
      expect=(0, 1))
    # Pushed to the stand-in as staging: its "Langfuse: ..." line went into the JSON.
    s("calibrate", "align", "--calibration", cal["calibration_id"], "--judge",
      "simulated:demo-openai", "--folds", "2", "--out", str(s.cwd / "aligned"), expect=(0, 1))
    # Bias mitigation.
    s("debias", "prompt", "--bias", "authority")
    s("debias", "compare", "--judge", "simulated:demo-openai", "--biases", "authority",
      "--modes", "plain,aware", "--repeats", "1")
    # Langfuse (the stand-in).
    listed = s("prompts", "list")
    pushed = s("prompts", "push", "--label", "production")
    diff = s("prompts", "diff")
    s("prompts", "pull", "llm-judge-v2", "--label", "production")
    judge_version = next(r["version"] for r in pushed if r["name"] == "llm-judge-v2")
    s("prompts", "promote", "llm-judge-v2", str(judge_version), "--label", "production")
    s("datasets", "push", sample, "--name", "bench")
    s("sync", "--status")
    s("sync", expect=(0, 2))
    # One sha256 per asset: prompts list, push and diff agree (they showed different hashes).
    by_asset = {f"{r['name']}@{r['version']}": r["sha256"] for r in listed}
    for row in [*pushed, *diff]:
        assert by_asset[row["asset"]] == row["sha256"], row
    assert all(r["remote_sha256"] == r["sha256"] for r in diff)

    untested = set(_commands()) - set(NON_REPORTING) - set(s.checked)
    assert not untested, f"reporting commands this test does not run: {sorted(untested)}"
