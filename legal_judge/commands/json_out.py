"""``--json`` for every command that reports: one JSON document on stdout, nothing else there.

Each command's document has one shape, described by a JSON Schema shipped in the package
(``legal_judge/data/schemas/<command words joined by ->.schema.json``; :func:`schema_path`).
While a command runs under :func:`json_output`, whatever it would print on stdout (tables, the
policy line, "wrote ..." lines, warnings) goes to stderr instead, so a script reads stdout whole;
the document is written when the command ends, also when it then exits 1 (a failed gate's
document says why).
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Callable, Iterator
from importlib import resources
from pathlib import Path
from typing import Any, TypeVar

import click

from legal_judge.commands.tables import echo_json

__all__ = ["SHARED_SHAPES", "JsonDocument", "json_option", "json_output", "schema_name", "schema_path"]

F = TypeVar("F", bound=Callable[..., Any])


#: Commands whose document is another command's shape (``demo`` is a ``run``).
SHARED_SHAPES = {"demo": "run"}


def schema_name(command: str) -> str:
    """The schema file of ``command`` (its words, e.g. ``"audit run"`` -> ``audit-run.schema.json``)."""
    command = SHARED_SHAPES.get(command, command)
    return "-".join(command.split()) + ".schema.json"


def schema_path(command: str) -> Path:
    """The shipped JSON Schema of ``command``'s ``--json`` document (it may not exist)."""
    return Path(str(resources.files("legal_judge") / "data" / "schemas" / schema_name(command)))


def json_option(fn: F) -> F:
    """Add ``--json`` (parameter ``as_json``) to a command, naming where its shape is described."""
    return click.option(
        "--json", "as_json", is_flag=True,
        help="Print one JSON document on stdout (shape: legal_judge/data/schemas/; text goes "
             "to stderr).")(fn)


class JsonDocument:
    """The document a command sets once it knows its result."""

    def __init__(self) -> None:
        self.data: Any = None
        self.ready = False

    def set(self, data: Any) -> None:
        """Make ``data`` the command's document (a later call replaces it)."""
        self.data, self.ready = data, True


@contextlib.contextmanager
def json_output(enabled: bool) -> Iterator[JsonDocument]:
    """Run a command's body with stdout reserved for its JSON document when ``enabled``.

    Everything printed on stdout meanwhile (rich consoles and ``click.echo`` both look
    ``sys.stdout`` up when they print) goes to stderr; the document set on the yielded
    :class:`JsonDocument` is written on the real stdout at the end, also when the body raises
    (a gate failing after it set its document). Without ``enabled`` nothing is redirected and
    nothing is written.
    """
    doc = JsonDocument()
    if not enabled:
        yield doc
        return
    stdout = sys.stdout
    try:
        with contextlib.redirect_stdout(sys.stderr):
            yield doc
    finally:
        if doc.ready:
            with contextlib.redirect_stdout(stdout):
                echo_json(doc.data)
