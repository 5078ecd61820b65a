"""The Markdown step summary of a :class:`~legal_judge.reports.ci.CiSuite` (``--summary-md``).

The same checks as the JUnit file: a heading with the counts, the facts, the notes, then a table of
the checks. Short suites list every check; a run lists the ones that failed or were inconclusive
(up to :data:`MAX_ROWS`) and counts the rest, so a 10,000-item run stays readable and under GitHub's
1 MiB step-summary limit. When ``$GITHUB_STEP_SUMMARY`` is set, the summary is appended there too.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from legal_judge.reports.ci import CiCase, CiSuite
from legal_judge.reports.markdown import escape_cell

__all__ = ["GITHUB_SUMMARY_VAR", "MAX_ROWS", "append_github_summary", "summary_markdown",
           "write_summary_md"]

GITHUB_SUMMARY_VAR = "GITHUB_STEP_SUMMARY"
MAX_ROWS = 200
_LIST_ALL = 30  # suites up to this size list passing checks too
_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f]")
_LABEL = {"passed": "pass", "failed": "FAIL", "inconclusive": "INCONCLUSIVE", "skipped": "skipped"}


def _md(text: str) -> str:
    # Untrusted text (item ids, reasons) must not open HTML in the rendered summary.
    text = _CONTROL.sub("\ufffd", escape_cell(text))
    return text.replace("<", "&lt;")


def summary_markdown(suite: CiSuite) -> str:
    """The summary as GitHub-flavoured Markdown."""
    c = suite.counts
    bad = c["failed"] + c["inconclusive"]
    mark = "PASSED" if suite.ok else "FAILED"
    parts = [f"{c['passed']} passed", f"{c['failed']} failed"]
    if c["inconclusive"]:
        parts.append(f"{c['inconclusive']} inconclusive")
    if c["skipped"]:
        parts.append(f"{c['skipped']} skipped")
    lines = [f"### {mark}: {_md(suite.title)}", "", ", ".join(parts) + f" of {len(suite.cases)} "
             "checks", ""]
    lines += [f"- **{_md(k)}:** {_md(v)}" for k, v in suite.facts]
    lines.append("")
    lines += [f"> **Note:** {_md(n)}" for n in suite.notes if n]
    if suite.notes:
        lines.append("")
    listed: list[CiCase] = (suite.cases if len(suite.cases) <= _LIST_ALL
                            else [x for x in suite.cases if x.outcome in ("failed", "inconclusive")])
    if listed:
        lines += ["| outcome | check | why |", "|---|---|---|"]
        lines += [f"| {_LABEL[x.outcome]} | {_md(x.name)} | {_md(x.message)} |"
                  for x in listed[:MAX_ROWS]]
        lines.append("")
    if len(listed) > MAX_ROWS:
        lines += [f"_{len(listed) - MAX_ROWS} more not listed here: the JUnit file and "
                  "`legal-judge runs export` have every one._", ""]
    if len(listed) < len(suite.cases):
        rest = len(suite.cases) - len(listed)
        lines += [f"_{rest} check(s) passed and are not listed ({bad} listed above)._", ""]
    return "\n".join(lines).rstrip() + "\n"


def write_summary_md(suite: CiSuite, path: Path) -> Path:
    """Write the summary to ``path`` (replacing it)."""
    parent = path.parent if str(path.parent) else Path(".")
    parent.mkdir(parents=True, exist_ok=True)
    path.write_text(summary_markdown(suite), encoding="utf-8")
    return path


def append_github_summary(suite: CiSuite) -> Path | None:
    """Append the summary to ``$GITHUB_STEP_SUMMARY`` when it is set; the path appended to, or None."""
    target = os.environ.get(GITHUB_SUMMARY_VAR)
    if not target:
        return None
    path = Path(target)
    with path.open("a", encoding="utf-8") as fh:
        fh.write(summary_markdown(suite) + "\n")
    return path
