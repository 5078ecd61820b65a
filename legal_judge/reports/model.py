"""The report document: sections of typed blocks, shared by the HTML, Markdown and JSON writers.

A view (``views_*.py``) turns stored numbers into a :class:`Report`; the writers only lay it out.
Every text field is plain, untrusted text (answers under evaluation can contain markup): the HTML
writer escapes it, only ``Chart.svg`` (produced by :mod:`legal_judge.reports.charts`) is inserted as is.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any, Literal

__all__ = [
    "Card",
    "Chart",
    "Diff",
    "Filter",
    "ItemRow",
    "ItemTable",
    "KeyValues",
    "Note",
    "Report",
    "Section",
    "Table",
    "Text",
    "fmt",
    "pct",
    "pts",
]

Tone = Literal["info", "warning", "danger", "ok"]


@dataclass
class Note:
    """A sentence or a banner."""

    text: str
    tone: Tone = "info"
    type: str = "note"


@dataclass
class KeyValues:
    """Label: value lines."""

    items: list[tuple[str, str]]
    type: str = "keyvalues"


@dataclass
class Table:
    """A table of text cells; ``numeric`` names columns to right-align, ``harmful`` the columns
    that count the harmful error (a false pass), drawn in its colour."""

    caption: str
    columns: list[str]
    rows: list[list[str]]
    numeric: list[str] = field(default_factory=list)
    type: str = "table"
    harmful: list[str] = field(default_factory=list)


@dataclass
class Chart:
    """An inline SVG chart with a caption."""

    title: str
    svg: str
    caption: str = ""
    type: str = "chart"


@dataclass
class Text:
    """A block of untrusted text shown verbatim (an answer, a prompt)."""

    label: str
    text: str
    type: str = "text"


@dataclass
class Diff:
    """Two texts side by side; segments are (kind, text) with kind equal, insert or delete."""

    label_a: str
    label_b: str
    segments_a: list[tuple[str, str]]
    segments_b: list[tuple[str, str]]
    caption: str = ""
    type: str = "diff"


@dataclass
class Card:
    """A titled group of blocks (one flagged item, one audit pair)."""

    title: str
    badges: list[tuple[str, Tone]]
    blocks: list[Any]
    type: str = "card"


@dataclass
class Filter:
    """One filter of an item table: rows whose ``categories`` hold ``key``."""

    key: str
    label: str
    count: int


@dataclass
class ItemRow:
    """One row of an item table: its cells, the lists it belongs to, and the item in full."""

    item_id: str
    cells: list[str]
    categories: list[str]
    detail: Card
    tone: Tone = "info"


@dataclass
class ItemTable:
    """Every item of a run, one row each, filterable; each row opens to the item's detail.

    The HTML writer renders the filters as buttons (a small inline script) and prints every row
    of the active filter with its detail expanded; Markdown gets the table plus the details of
    the rows named in ``expanded``; JSON gets everything.
    """

    caption: str
    columns: list[str]
    rows: list[ItemRow]
    filters: list[Filter]
    numeric: list[str] = field(default_factory=list)
    expanded: list[str] = field(default_factory=list)
    type: str = "itemtable"


@dataclass
class Section:
    """A titled part of the report."""

    title: str
    blocks: list[Any]
    anchor: str = ""


@dataclass
class Report:
    """A whole report."""

    kind: Literal["run", "audit", "calibration", "debias", "comparison", "validation"]
    id: str
    title: str
    subtitle: str
    banners: list[Note]
    sections: list[Section]
    source: dict[str, Any] = field(default_factory=dict)

    def to_dict(self, *, charts: bool = True) -> dict[str, Any]:
        """Plain data for templates and JSON (``charts=False`` drops the SVG text)."""
        data = asdict(self)
        if not charts:
            for section in data["sections"]:
                section["blocks"] = [_without_svg(b) for b in section["blocks"]]
        return data

    def charts(self) -> list[Chart]:
        """Every chart, in document order."""
        return [b for s in self.sections for b in _walk(s.blocks) if isinstance(b, Chart)]

    def tables(self) -> list[Table]:
        """Every table, in document order (the tables inside item details included)."""
        return [b for s in self.sections for b in _walk(s.blocks) if isinstance(b, Table)]

    def item_tables(self) -> list[ItemTable]:
        """Every item table, in document order."""
        return [b for s in self.sections for b in _walk(s.blocks) if isinstance(b, ItemTable)]


def _walk(blocks: list[Any]) -> list[Any]:
    out: list[Any] = []
    for b in blocks:
        out.append(b)
        if isinstance(b, Card):
            out.extend(_walk(b.blocks))
        if isinstance(b, ItemTable):
            out.extend(_walk([r.detail for r in b.rows]))
    return out


def _without_svg(block: dict[str, Any]) -> dict[str, Any]:
    if block.get("type") == "chart":
        return {k: v for k, v in block.items() if k != "svg"}
    if block.get("type") == "card":
        return {**block, "blocks": [_without_svg(b) for b in block["blocks"]]}
    if block.get("type") == "itemtable":
        return {**block, "rows": [{**r, "detail": _without_svg(r["detail"])}
                                  for r in block["rows"]]}
    return block


def fmt(value: Any, spec: str = ".2f", *, none: str = "n/a") -> str:
    """A number formatted with ``spec``; None and non-numbers shown as they are or as ``none``."""
    if value is None:
        return none
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int | float):
        return format(value, spec)
    return str(value)


def pct(value: float | None, *, none: str = "n/a") -> str:
    """A share as a percentage with one decimal."""
    return none if value is None else f"{value:.1%}"


def pts(change: float | None, *, none: str = "n/a") -> str:
    """A change between two shares in percentage points: ``+9.6 pts`` (never ``+9.6%``, which
    would be a relative change)."""
    return none if change is None else f"{change * 100:+.1f} pts"


def ci(pair: Any, spec: str = ".2f") -> str:
    """A 95% CI pair as ``lo–hi``."""
    if not pair or any(x is None for x in pair):
        return "n/a"
    return f"{format(pair[0], spec)} to {format(pair[1], spec)}"
