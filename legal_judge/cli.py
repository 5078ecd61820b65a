"""The ``legal-judge`` command: a thin click group over the library.

Exit codes: 0 success, 1 a gate or check found a failure, 2 bad input or configuration, 3 an external
service failed after retries. Every error message names the fix.
"""

from __future__ import annotations

import importlib
import logging
import os
import sys
from typing import Any

import click

from legal_judge import __version__
from legal_judge.errors import LegalJudgeError

__all__ = ["cli", "main"]

# Each module defines COMMANDS: list[click.Command]; one module per area, one owner each.
COMMAND_MODULES = (
    "legal_judge.commands.core",
    "legal_judge.commands.check",
    "legal_judge.commands.langfuse",
    "legal_judge.commands.calibrate",
    "legal_judge.commands.audit",
    "legal_judge.commands.debias",
    "legal_judge.commands.report",
    "legal_judge.commands.batches",
)


class _Group(click.Group):
    """Maps LegalJudgeError to its exit code and a message that names the fix."""

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except LegalJudgeError as exc:
            click.echo(f"error: {exc}", err=True)
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


def _register() -> None:
    for name in COMMAND_MODULES:
        try:
            module = importlib.import_module(name)
        except ModuleNotFoundError as exc:
            if exc.name == name:  # that area is not built in this version
                continue
            raise
        for command in getattr(module, "COMMANDS", []):
            cli.add_command(command)


_register()


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
