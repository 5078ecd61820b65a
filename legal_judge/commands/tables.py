"""Every table the CLI prints, laid out once: ids, paths, verdicts and numbers are never cut.

A column marked ``keep`` (an id, a path, a verdict, a judge name) is always printed whole, on one
line; in every other column a word holding a digit (a figure, an interval, an n) is never folded
inside, only wrapped between words (``50`` was once printed as ``5``). When the terminal (or
``COLUMNS`` for piped output) is too narrow for the natural layout, the other columns are wrapped
first; then columns marked ``optional`` are dropped, last first, and the table says which in one
line that fits the width; then the table loses its rules (two spaces between cells); when even
that does not fit, each row is printed as a block of ``header: value`` lines, which fits any
width. Cells are plain text (never rich markup: a rationale or an item id
with brackets is printed as written); :func:`styled` gives a cell a colour.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import click
from rich.console import Console, Group, RenderableType
from rich.table import Table
from rich.text import Text

__all__ = ["Cell", "Col", "SECTION", "ci_cell", "dropped_line", "echo_json", "layout",
           "print_table", "styled", "wrote"]

Cell = str | Text | None
#: A row equal to this starts a new section (a rule between row groups).
SECTION: tuple[str, ...] = ("__section__",)

_MIN_TOKEN = 16   # a non-kept cell may fold inside words longer than this
# Headers are first kept unbroken (up to 14 characters a word), dropping optional columns if need
# be; only when that cannot fit may header words fold after 8 characters.
_HEADER_CAPS = (14, 8)


@dataclass(frozen=True)
class Col:
    """One column: its header and how it may give way at narrow widths."""

    header: str
    keep: bool = False
    optional: bool = False
    numeric: bool = False


def ci_cell(pair: list[float] | None, spec: str, sep: str) -> str:
    """A confidence interval as ``lo{sep}hi`` formatted with ``spec``; ``n/a`` when there is none."""
    # A single item or pair has no confidence interval (stats return None), not a zero-width one.
    return "n/a" if not pair else f"{pair[0]:{spec}}{sep}{pair[1]:{spec}}"


def styled(text: str, style: str) -> Text:
    """A cell printed in ``style`` (e.g. ``"red"``); the text is not parsed as markup."""
    return Text(text, style=style)


def _text(cell: Cell) -> Text:
    if cell is None:
        return Text("")
    return cell if isinstance(cell, Text) else Text(str(cell))


def _natural(text: Text) -> int:
    return max((line.cell_len for line in text.split("\n")), default=0)


def _longest_token(text: str, cap: int) -> int:
    return min(cap, max((len(t) for t in text.split()), default=0))


def _unbreakable(text: str, cap: int) -> int:
    """The narrowest width that cuts no figure: a word with a digit is never folded ("5" of 50)."""
    return max((len(t) if any(c.isdigit() for c in t) else min(cap, len(t))
                for t in text.split()), default=0)


@dataclass
class _Plan:
    columns: list[int]           # indexes of the columns shown
    widths: list[int] | None     # None: the narrow (block) layout
    dropped: list[str]


def _overhead(n: int, compact: bool = False) -> int:
    if compact:
        return 2 * (n - 1)  # no rules: two spaces between cells, none at the edges
    return 3 * n + 1  # one space each side of a cell, a rule between and around cells


def _widths(cols: Sequence[Col], rows: Sequence[Sequence[Text]], shown: list[int],
            width: int, header_cap: int, compact: bool = False) -> list[int] | None:
    natural, minimum = [], []
    for i in shown:
        texts = [r[i] for r in rows]
        nat = max([len(cols[i].header), *(_natural(t) for t in texts)])
        if cols[i].keep:
            low = nat
        else:
            low = max([min(_longest_token(cols[i].header, header_cap), nat), 1,
                       *(_unbreakable(t.plain, _MIN_TOKEN) for t in texts)])
        natural.append(nat)
        minimum.append(min(low, nat))
    room = width - _overhead(len(shown), compact)
    if sum(natural) <= room:
        return natural
    if sum(minimum) > room:
        return None
    # Give the spare room to the folded columns, widest shortfall first, one cell at a time.
    out = list(minimum)
    spare = room - sum(out)
    while spare > 0:
        short = [(natural[k] - out[k], k) for k in range(len(out)) if out[k] < natural[k]]
        if not short:
            break
        _, k = max(short)
        out[k] += 1
        spare -= 1
    return out


def layout(cols: Sequence[Col], rows: Sequence[Sequence[Cell]], width: int, *,
           compact: bool = False) -> _Plan:
    """Which columns to show and their widths at ``width`` (``widths=None``: block layout)."""
    texts = [[_text(c) for c in r] for r in rows if tuple(r) != SECTION]
    for cap in _HEADER_CAPS:
        shown = list(range(len(cols)))
        dropped: list[str] = []
        while True:
            widths = _widths(cols, texts, shown, width, cap, compact)
            if widths is not None:
                return _Plan(shown, widths, dropped)
            optional = [i for i in shown if cols[i].optional]
            if not optional:
                break
            shown.remove(optional[-1])
            dropped.insert(0, cols[optional[-1]].header)
    return _Plan(list(range(len(cols))), None, [])


def _table(title: str | None, cols: Sequence[Col], rows: Sequence[Sequence[Cell]],
           plan: _Plan, compact: bool = False) -> Table:
    assert plan.widths is not None
    table = (Table(title=title, highlight=False, box=None, pad_edge=False, padding=(0, 1),
                   title_justify="left", title_style="bold", show_edge=False)
             if compact else Table(title=title, highlight=False))
    for i, w in zip(plan.columns, plan.widths, strict=True):
        col = cols[i]
        table.add_column(col.header, width=w, no_wrap=col.keep, overflow="fold",
                         justify="right" if col.numeric else "left")
    for row in rows:
        if tuple(row) == SECTION:
            table.add_section()
            continue
        table.add_row(*(_text(row[i]) for i in plan.columns))
    return table


def _blocks(title: str | None, cols: Sequence[Col], rows: Sequence[Sequence[Cell]]) -> Group:
    parts: list[RenderableType] = [Text(title, style="italic")] if title else []
    for row in rows:
        if tuple(row) == SECTION:
            continue
        if parts:
            parts.append(Text(""))
        parts.append(Text(f"{cols[0].header}: ", style="bold") + _text(row[0]))
        for col, cell in zip(cols[1:], row[1:], strict=True):
            parts.append(Text(f"  {col.header}: ") + _text(cell))
    return Group(*parts)


def print_table(console: Console, title: str | None, cols: Sequence[Col],
                rows: Sequence[Sequence[Cell]], *, empty: str | None = None,
                compact: bool = False) -> None:
    """Print rows under ``cols`` at the console's width (see the module docstring).

    Args:
        console: Where to print.
        title: The table's title (None: none).
        cols: The columns.
        rows: One sequence of cells per row, in column order; :data:`SECTION` starts a group.
        empty: Printed instead of an empty table (None: print the headers anyway).
        compact: No rules (one line per row, for many small tables in one screen).
    """
    if not [r for r in rows if tuple(r) != SECTION] and empty is not None:
        console.print(empty, markup=False, highlight=False, soft_wrap=True)
        return
    plan = layout(cols, rows, console.width, compact=compact)
    if plan.widths is None and not compact:
        # Rules cost three columns a cell: without them a table often still fits as a table.
        compact = True
        plan = layout(cols, rows, console.width, compact=True)
    if plan.widths is None:
        console.print(_blocks(title, cols, rows), soft_wrap=True)
        return
    console.print(_table(title, cols, rows, plan, compact))
    if plan.dropped:
        console.print(dropped_line(plan.dropped, console.width), markup=False, highlight=False,
                      soft_wrap=True, style="dim")


def dropped_line(dropped: Sequence[str], width: int) -> str:
    """The one line naming the columns left out; it fits ``width`` (at most 80) itself."""
    fits = min(width, 80)
    line = f"(narrow terminal: {', '.join(dropped)} not shown; --json shows all)"
    if len(line) > fits:
        line = f"(narrow terminal: {len(dropped)} columns not shown; --json shows all)"
    return line


def echo_json(data: Any) -> None:
    """Print ``data`` as indented JSON on stdout (for scripts: nothing else is printed)."""
    click.echo(json.dumps(data, indent=2, ensure_ascii=False, default=str))


def wrote(console: Console, path: Path | str, count: int | None = None,
          unit: str = "rows", *, what: str | None = None) -> None:
    """Say that a file was written: ``wrote results.csv (57 rows)``; the path is never cut."""
    detail = [] if count is None else [f"{count} {unit if count != 1 else unit.rstrip('s')}"]
    if what:
        detail.insert(0, what)
    console.print(f"wrote {path}" + (f" ({', '.join(detail)})" if detail else ""),
                  markup=False, highlight=False, soft_wrap=True)
