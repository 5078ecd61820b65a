"""The self-contained HTML writer: one file, inline CSS and SVG, nothing from the network.

A report with an item table carries one small inline script (the filters and the rows that open);
every other report has none. The page's Content-Security-Policy allows that one script by its hash
and nothing else: no request can leave the page, whatever an answer under evaluation contains.
The index of a static site (:mod:`legal_judge.reports.site`) is rendered here too, under the same
rules, with its own script (its filters).
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

__all__ = ["render_html", "render_page"]

_TEMPLATES = Path(__file__).parent / "templates"


@lru_cache(maxsize=1)
def _env() -> SandboxedEnvironment:
    # Autoescape is not optional: answers under evaluation are untrusted text that may hold markup.
    return SandboxedEnvironment(loader=jinja2.FileSystemLoader(_TEMPLATES), autoescape=True,
                                undefined=jinja2.StrictUndefined, trim_blocks=True,
                                lstrip_blocks=True)


@lru_cache(maxsize=4)
def _script(name: str) -> tuple[str, str]:
    """An inline script's text and its CSP hash (the page allows that script and no other)."""
    text = (_TEMPLATES / name).read_text(encoding="utf-8")
    digest = base64.b64encode(hashlib.sha256(text.encode("utf-8")).digest()).decode()
    return text, f"sha256-{digest}"


def _now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")


def render_html(report: Report, *, generated: str | None = None, home: str | None = None) -> str:
    """Render ``report`` as one self-contained HTML page.

    Args:
        report: The report document.
        generated: Timestamp shown in the footer (default: now, UTC).
        home: A relative link back to a site's index (``report --site``), or None.

    Returns:
        The HTML text.
    """
    template = _env().get_template("report.html.j2")
    script, script_hash = _script("items.js") if report.item_tables() else ("", "")
    return template.render(report=report.to_dict(), version=__version__, script=script,
                           script_hash=script_hash, home=home, generated=generated or _now())


def render_page(template_name: str, script_name: str, **context: object) -> str:
    """Render another self-contained page (a site's index) with its one inline script.

    Args:
        template_name: The template in ``reports/templates``.
        script_name: Its script in ``reports/templates`` (allowed by its hash, nothing else).
        **context: The template's data (autoescaped).

    Returns:
        The HTML text.
    """
    script, script_hash = _script(script_name)
    return _env().get_template(template_name).render(
        version=__version__, script=script, script_hash=script_hash, generated=_now(), **context)
