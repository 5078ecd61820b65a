"""``--junit FILE`` and ``--summary-md FILE`` for ``run``, ``compare`` and ``audit gate``."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click
from rich.console import Console

from legal_judge.commands.tables import wrote
from legal_judge.errors import ConfigError

if TYPE_CHECKING:
    from legal_judge.reports.ci import CiSuite

__all__ = ["check_ci_paths", "ci_options", "write_ci_outputs"]


def ci_options(fn: Callable[..., Any]) -> Callable[..., Any]:
    """Add ``--junit`` and ``--summary-md`` to a command."""
    fn = click.option("--summary-md", "summary_md", type=click.Path(dir_okay=False, path_type=Path),
                      default=None,
                      help="Also write the result as Markdown (appended to $GITHUB_STEP_SUMMARY "
                           "too when that is set).")(fn)
    return click.option("--junit", "junit", type=click.Path(dir_okay=False, path_type=Path),
                        default=None, help="Also write the result as JUnit XML for CI.")(fn)


def check_ci_paths(*, junit: Path | None, summary_md: Path | None) -> None:
    """Check the ``--junit`` and ``--summary-md`` folders can take a file, before a run exists
    (a path that cannot be written failed with exit 2 after the whole run was paid for).

    Raises:
        ConfigError: a folder cannot be made or written to (the message names it).
    """
    from legal_judge.files import check_writable

    for option, path in (("--junit", junit), ("--summary-md", summary_md)):
        if path is not None:
            check_writable(path, option=option)


def write_ci_outputs(console: Console, build: Callable[[], CiSuite], *, junit: Path | None,
                     summary_md: Path | None) -> None:
    """Write the JUnit file, the Markdown summary and the GitHub step summary; say each one.

    Nothing is built when none is wanted (no option given, ``$GITHUB_STEP_SUMMARY`` unset).

    Args:
        console: Where "wrote ..." is said.
        build: Makes the suite (an adapter of :mod:`legal_judge.reports.ci`).
        junit: ``--junit`` file, or None.
        summary_md: ``--summary-md`` file, or None.

    Raises:
        ConfigError: a file cannot be written (the message names it).
    """
    from legal_judge.reports.junit import write_junit
    from legal_judge.reports.summary_md import (
        GITHUB_SUMMARY_VAR,
        append_github_summary,
        write_summary_md,
    )

    if junit is None and summary_md is None and not os.environ.get(GITHUB_SUMMARY_VAR):
        return
    suite = build()

    checks = len(suite.cases)
    try:
        if junit is not None:
            wrote(console, write_junit(suite, junit), checks, "testcases", what="JUnit")
        if summary_md is not None:
            wrote(console, write_summary_md(suite, summary_md), checks, "checks", what="Markdown")
        target = append_github_summary(suite)
    except OSError as exc:
        raise ConfigError(f"cannot write {exc.filename or 'a CI output'}: {exc.strerror or exc}",
                          code="ci-output",
                          fix=f"check the path of --junit / --summary-md / ${GITHUB_SUMMARY_VAR}"
                          ) from None
    if target is not None:
        console.print(f"appended the summary to ${GITHUB_SUMMARY_VAR} ({target})", markup=False,
                      highlight=False, soft_wrap=True)
