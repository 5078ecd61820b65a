"""From an id in the store to a report document, and from a document to files."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

from legal_judge.errors import ConfigError
from legal_judge.reports.data import ReportData, load_comparison_data, load_report_data
from legal_judge.reports.html import render_html
from legal_judge.reports.markdown import render_markdown
from legal_judge.reports.model import Report
from legal_judge.store import Store

if TYPE_CHECKING:
    from legal_judge.policy import PolicyInForce

__all__ = ["build_comparison_report", "build_report", "report_from_data", "report_json",
           "write_report"]


def report_from_data(data: ReportData) -> Report:
    """The report document of already loaded data (the view for its kind)."""
    if data.kind == "run":
        from legal_judge.reports.view_run import run_report

        return run_report(data)
    if data.kind == "audit":
        from legal_judge.reports.view_audit import audit_report

        return audit_report(data)
    if data.kind == "comparison":
        from legal_judge.reports.view_compare import comparison_report

        return comparison_report(data)
    if data.kind == "calibration":
        from legal_judge.reports.view_calibration import calibration_report

        return calibration_report(data)
    from legal_judge.reports.view_debias import debias_report

    return debias_report(data)


def build_report(store: Store, entity_id: str) -> Report:
    """The report of a run, audit, calibration or debias experiment (kind detected from the id).

    Raises:
        NotFoundError: the id is in none of the four tables.
    """
    return report_from_data(load_report_data(store, entity_id))


def build_comparison_report(store: Store, run_a: str, run_b: str, *,
                            policy: PolicyInForce | None = None, threshold: float | None = None,
                            alpha: float = 0.05) -> Report:
    """The comparison report of run B against baseline run A: the release decision under
    ``policy`` (bundled defaults when None) and ``compare_runs``' statistics.

    Raises:
        NotFoundError: an id is in the store in no table.
        ConfigError: an id is not a run, or the runs share no scored item.
    """
    return report_from_data(load_comparison_data(store, run_a, run_b, policy=policy,
                                                 threshold=threshold, alpha=alpha))


def report_json(report: Report) -> dict[str, Any]:
    """The JSON form: the same sections and tables (no SVG) plus the stored numbers they show."""
    data = report.to_dict(charts=False)
    return {"format": "legal-judge-report/1", **data}


def write_report(report: Report, *, html: Path | str | None = None,
                 markdown: Path | str | None = None,
                 json_path: Path | str | None = None, home: str | None = None) -> list[Path]:
    """Write the requested forms; returns the paths written (``home``: the HTML page's link back
    to a site's index).

    Raises:
        ConfigError: a file cannot be written (the fix names the folder).
    """
    jobs = [(html, lambda: render_html(report, home=home)), (markdown, lambda: render_markdown(report)),
            (json_path, lambda: json.dumps(report_json(report), indent=2, ensure_ascii=False,
                                           default=str) + "\n")]
    written = []
    for path, render in jobs:
        if path is None:
            continue
        target = Path(path)
        try:
            target.write_text(render(), encoding="utf-8")
        except OSError as exc:
            raise ConfigError(f"cannot write {target}: {exc.strerror or exc}", code="report-write",
                              fix=f"check that {target.parent} exists and is writable") from None
        written.append(target)
    return written
