"""How every chart is drawn and exported: matplotlib on the Agg backend, the house style and
palette, figure grids, and the SVG export.

A chart (:mod:`legal_judge.reports.charts`) draws into :func:`figure` or :func:`small_multiples` and
returns :func:`to_svg`: an ``<svg>`` element with no XML prolog, no DOCTYPE, no metadata, no external
reference, text kept as text (``svg.fonttype = none``) so it prints sharply and stays searchable, and
element ids salted per chart so several charts can share one page.
"""

from __future__ import annotations

import io
import re
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import matplotlib

matplotlib.use("Agg")  # no display, no GUI toolkit: reports render on servers and in CI

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402

__all__ = ["PALETTE", "figure", "finite", "slug", "small_multiples", "to_svg"]

PALETTE = ("#1f5f99", "#c2571a", "#2e8b57", "#7a3e9d", "#8c6d1f", "#b03a48", "#4a6b7c", "#6b8e23")
_RC: Any = {
    "svg.fonttype": "none", "font.family": "sans-serif", "font.size": 9,
    "axes.spines.top": False, "axes.spines.right": False, "axes.titlesize": 10,
    "axes.titleweight": "bold", "figure.dpi": 100,
}


@contextmanager
def figure(key: str, width: float, height: float, *, ncols: int = 1,
           nrows: int = 1) -> Iterator[tuple[Figure, Any]]:
    """A figure of ``nrows`` x ``ncols`` axes in the house style, closed on exit.

    Args:
        key: The chart's slug; salts the SVG element ids so charts can share a page.
        width: Width in inches.
        height: Height in inches.
        ncols: Columns of axes.
        nrows: Rows of axes.
    """
    with plt.rc_context({**_RC, "svg.hashsalt": key}):
        fig, axes = plt.subplots(nrows, ncols, figsize=(width, height), squeeze=False)
        try:
            yield fig, axes
        finally:
            plt.close(fig)


@contextmanager
def small_multiples(key: str, names: list[str], panel_w: float,
                    panel_h: float) -> Iterator[tuple[Figure, list[tuple[int, Any, str]]]]:
    """A grid of panels, three a row, one per name (index, axes, name); spare cells hidden."""
    ncols = min(3, max(1, len(names)))
    nrows = max(1, -(-len(names) // ncols))
    with figure(key, panel_w * ncols, panel_h * nrows, ncols=ncols, nrows=nrows) as (fig, axes):
        cells = list(axes.flat)
        for ax in cells[len(names):]:
            ax.axis("off")
        yield fig, [(i, cells[i], name) for i, name in enumerate(names)]


def to_svg(fig: Figure, key: str, title: str) -> str:
    """The figure as an inline ``<svg>`` element: no prolog, no metadata, ``title`` as its
    accessible name."""
    buf = io.StringIO()
    with plt.rc_context({**_RC, "svg.hashsalt": key}):
        fig.savefig(buf, format="svg", bbox_inches="tight", metadata={"Date": None})
    text = buf.getvalue()
    text = text[text.index("<svg"):]
    text = re.sub(r"<metadata>.*?</metadata>", "", text, flags=re.S)
    # Accessible name; the title text is escaped by the caller's data being plain ASCII-safe here.
    safe = title.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    return text.replace("<svg ", f'<svg role="img" aria-label="{safe}" ', 1)


def slug(text: str) -> str:
    """A chart's key from its title (lower-case, dashes)."""
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-") or "chart"


def finite(x: float | None) -> bool:
    """True when ``x`` is a number that can be plotted (not None, NaN or infinite)."""
    return x is not None and bool(np.isfinite(x))
