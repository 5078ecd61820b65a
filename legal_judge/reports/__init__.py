"""Reports people read: self-contained HTML (inline SVG charts), Markdown and JSON.

The reports render and compute nothing: numbers come from the stored run summaries and the stored
audit, calibration and debias reports, per-item outcomes from :mod:`legal_judge.benchmark.item_outcomes` and
comparisons from :mod:`legal_judge.benchmark.compare`. ``build_report`` picks the kind from the id::

    from legal_judge.reports import build_comparison_report, build_report, write_report
    report = build_report(store, "run-20260101-120000-abc123")
    write_report(report, html="report.html", markdown="report.md", json_path="report.json")
    write_report(build_comparison_report(store, run_a, run_b), html="compare.html")
"""

from __future__ import annotations

from legal_judge.reports.build import (
    build_comparison_report,
    build_report,
    report_json,
    write_report,
)
from legal_judge.reports.data import ReportData, detect_kind, load_comparison_data, load_report_data
from legal_judge.reports.html import render_html
from legal_judge.reports.markdown import render_markdown
from legal_judge.reports.model import Report

__all__ = [
    "Report",
    "ReportData",
    "build_comparison_report",
    "build_report",
    "detect_kind",
    "load_comparison_data",
    "load_report_data",
    "render_html",
    "render_markdown",
    "report_json",
    "write_report",
]
