"""The self-contained HTML writer: one file, inline CSS and SVG, nothing from the network.

A report with an item table carries one small inline script (the filters and the rows that open);
every other report has none. The page's Content-Security-Policy allows that one script by its hash
and nothing else: no request can leave the page, whatever an answer under evaluation contains.
"""

from __future__ import annotations

import base64
import hashlib
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


@lru_cache(maxsize=1)
def _items_script() -> tuple[str, str]:
    text = (_TEMPLATES / "items.js").read_text(encoding="utf-8")
    digest = base64.b64encode(hashlib.sha256(text.encode("utf-8")).digest()).decode()
    return text, f"sha256-{digest}"


def render_html(report: Report, *, generated: str | None = None) -> str:
    """Render ``report`` as one self-contained HTML page.

    Args:
        report: The report document.
        generated: Timestamp shown in the footer (default: now, UTC).

    Returns:
        The HTML text.
    """
    template = _env().get_template("report.html.j2")
    script, script_hash = _items_script() if report.item_tables() else ("", "")
    return template.render(report=report.to_dict(), version=__version__, script=script,
                           script_hash=script_hash,
                           generated=generated or datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"))
