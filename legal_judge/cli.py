"""The ``legal-judge`` command: a thin click group over the library.

Exit codes: 0 success, 1 a gate or check found a failure, 2 bad input or configuration, 3 an external
service failed after retries. Every error message names the fix.
"""

from __future__ import annotations

import difflib
import importlib
import logging
import os
import sys
from typing import Any

import click

from legal_judge import __version__
from legal_judge.errors import LegalJudgeError, said

__all__ = ["cli", "main"]

# Each module defines COMMANDS: list[click.Command]; one module per area, one owner each.
COMMAND_MODULES = (
    "legal_judge.commands.core",
    "legal_judge.commands.judging",
    "legal_judge.commands.compare",
    "legal_judge.commands.runs",
    "legal_judge.commands.check",
    "legal_judge.commands.langfuse",
    "legal_judge.commands.calibrate",
    "legal_judge.commands.audit",
    "legal_judge.commands.debias",
    "legal_judge.commands.report",
    "legal_judge.commands.batches",
    "legal_judge.commands.policy",
    "legal_judge.commands.rules",
    "legal_judge.commands.store",
)

# Command name -> (module, short help). Modules are imported only when one of their commands runs,
# so `legal-judge --help` does not load scipy or eyecite; tests/foundation/test_cli.py checks that
# this table matches the commands the modules really define.
LAZY_COMMANDS: dict[str, tuple[str, str]] = {
    "validate": ("legal_judge.commands.core", "Check a benchmark dataset without running anything."),
    "judge": ("legal_judge.commands.judging",
              "Judge one answer as `run` does (checks, judges, rules) and print the decision."),
    "run": ("legal_judge.commands.core",
            "Score DATASET (a file, or langfuse:NAME) with the three-judge ensemble."),
    "demo": ("legal_judge.commands.core",
             "Score the bundled sample with three simulated judges (no keys, no network)."),
    "runs": ("legal_judge.commands.runs", "List, show and export stored runs."),
    "compare": ("legal_judge.commands.compare",
                "Paired comparison of two runs on the same items (RUN_B against baseline RUN_A)."),
    "check": ("legal_judge.commands.check",
              "Check the legal citations in an answer; exit 1 if any is invalid."),
    "prompts": ("legal_judge.commands.langfuse",
                "Versioned judge prompts and rubrics (the repository is the source of truth)."),
    "sync": ("legal_judge.commands.langfuse",
             "Deliver the outbox (runs, audits, calibrations, labels) to Langfuse."),
    "datasets": ("legal_judge.commands.langfuse", "Benchmark datasets in Langfuse."),
    "calibrate": ("legal_judge.commands.calibrate",
                  "Quarterly calibration of the judges against lawyers' scores."),
    "audit": ("legal_judge.commands.audit",
              "Audit a judge: can it tell good from bad, is it biased, what is ruled out."),
    "debias": ("legal_judge.commands.debias",
               "Bias mitigation inside the judge: measure it, or print the prompts."),
    "report": ("legal_judge.commands.report",
               "Write the report of a run, audit, calibration or debias experiment."),
    "doctor": ("legal_judge.commands.report",
               "Check the setup: versions, keys (never printed), store, ensemble, Langfuse."),
    "policy": ("legal_judge.commands.policy",
               "The gate policy: every threshold the release, audit and run gates apply."),
    "rules": ("legal_judge.commands.rules",
              "Each rule-based finding and its effect on a decision (cap, fail, review, info)."),
    "store": ("legal_judge.commands.store", "Copy a store between SQLite and PostgreSQL."),
    "batches": ("legal_judge.commands.batches",
                "Provider batch jobs of `run --batch` runs and `audit run --batch` audits."),
}


class _Group(click.Group):
    """Lazily loaded commands; maps LegalJudgeError to its exit code and a message naming the fix."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(set(LAZY_COMMANDS) | set(self.commands))

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name not in self.commands and cmd_name in LAZY_COMMANDS:
            module = importlib.import_module(LAZY_COMMANDS[cmd_name][0])
            for command in getattr(module, "COMMANDS", []):
                self.commands.setdefault(command.name or "", command)
        return self.commands.get(cmd_name)

    def resolve_command(self, ctx: click.Context,
                        args: list[str]) -> tuple[str | None, click.Command | None, list[str]]:
        name = args[0] if args else ""
        if (name and not name.startswith("-") and not ctx.resilient_parsing
                and self.get_command(ctx, name) is None):
            # The lazy table is not in self.commands, so click itself would suggest nothing.
            close = difflib.get_close_matches(name, self.list_commands(ctx), n=1, cutoff=0.6)
            hint = f" Did you mean '{close[0]}'?" if close else ""
            raise click.UsageError(f"No such command '{name}'.{hint}", ctx=ctx)
        return super().resolve_command(ctx, args)

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        rows = [(name, LAZY_COMMANDS[name][1] if name in LAZY_COMMANDS
                 else self.commands[name].get_short_help_str(limit=80))
                for name in self.list_commands(ctx)]
        with formatter.section("Commands"):
            formatter.write_dl(rows)

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except LegalJudgeError as exc:
            click.echo(f"error: {said(exc)}", err=True)
            ctx.exit(exc.exit_code)
        except KeyboardInterrupt:
            click.echo("interrupted", err=True)
            ctx.exit(130)


@click.group(cls=_Group)
@click.version_option(__version__, prog_name="legal-judge")
@click.option("-v", "--verbose", count=True, help="More logging (-v info, -vv debug).")
def cli(verbose: int) -> None:
    """Judge legal AI answers with a cross-provider LLM ensemble, and audit the judges."""
    level = logging.WARNING - 10 * min(verbose, 2)
    logging.basicConfig(level=level, format="%(levelname)s %(name)s: %(message)s")
    # eyecite logs parser internals at WARNING; they are not the user's problem.
    logging.getLogger("eyecite").setLevel(max(level, logging.ERROR))


def load_all_commands() -> dict[str, click.Command]:
    """Import every command module (tests and docs use it); the CLI itself loads lazily."""
    for name in COMMAND_MODULES:
        for command in getattr(importlib.import_module(name), "COMMANDS", []):
            cli.commands.setdefault(command.name or "", command)
    return dict(cli.commands)


def main() -> None:
    """Console-script entry point."""
    try:
        cli.main(prog_name="legal-judge", standalone_mode=True)
    except LegalJudgeError as exc:  # raised outside a command (e.g. while parsing)
        click.echo(f"error: {exc}", err=True)
        sys.exit(exc.exit_code)
    except Exception as exc:  # noqa: BLE001 - last resort: no traceback for users unless asked
        if os.environ.get("LEGAL_JUDGE_DEBUG"):
            raise
        click.echo(f"internal error: {type(exc).__name__}: {exc}\n  fix: rerun with "
                   "LEGAL_JUDGE_DEBUG=1 for the traceback and report it", err=True)
        sys.exit(70)
