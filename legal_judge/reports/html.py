"""The self-contained HTML writer: one file, inline CSS and SVG, no script, nothing from the network."""

from __future__ import annotations

from datetime import UTC, datetime
from functools import lru_cache
from pathlib import Path

import jinja2
from jinja2.sandbox import SandboxedEnvironment

from legal_judge import __version__
from legal_judge.reports.model import Report

__all__ = ["render_html"]

_TEMPLATES = Path(__file__).parent / "templates"


@lru_cache(maxsize=1)
def _env() -> SandboxedEnvironment:
    # Autoescape is not optional: answers under evaluation are untrusted text that may hold markup.
    return SandboxedEnvironment(loader=jinja2.FileSystemLoader(_TEMPLATES), autoescape=True,
                                undefined=jinja2.StrictUndefined, trim_blocks=True,
                                lstrip_blocks=True)


def render_html(report: Report, *, generated: str | None = None) -> str:
    """Render ``report`` as one self-contained HTML page.

    Args:
        report: The report document.
        generated: Timestamp shown in the footer (default: now, UTC).

    Returns:
        The HTML text.
    """
    template = _env().get_template("report.html.j2")
    return template.render(report=report.to_dict(), version=__version__,
                           generated=generated or datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"))
