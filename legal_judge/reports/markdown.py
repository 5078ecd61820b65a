"""The Markdown writer (for pull requests): the same sections and tables, charts named not drawn."""

from __future__ import annotations

import re
from typing import Any

from legal_judge.reports.model import Report

__all__ = ["escape_cell", "render_markdown"]


def escape_cell(text: str) -> str:
    """``text`` as one Markdown table cell (pipes escaped, newlines joined)."""
    return str(text).replace("|", "\\|").replace("\n", " ")


_cell = escape_cell


def _header(column: str, harmful: list[str]) -> str:
    # Markdown has no colour: the harmful error's column says so in words.
    return f"{_cell(column)} (harmful)" if column in harmful else _cell(column)


def _table(b: dict[str, Any]) -> list[str]:
    harmful = b.get("harmful") or []
    out = [f"**{b['caption']}**", "",
           "| " + " | ".join(_header(c, harmful) for c in b["columns"]) + " |",
           "|" + "|".join("---:" if c in b["numeric"] else "---" for c in b["columns"]) + "|"]
    out += ["| " + " | ".join(_cell(c) for c in row) + " |" for row in b["rows"]]
    if not b["rows"]:
        out.append("| " + " | ".join(["none", *[""] * (len(b["columns"]) - 1)]) + " |")
    return [*out, ""]


def _fence(text: str) -> str:
    # A fence longer than any backtick run inside, so untrusted text cannot close it.
    longest = max((len(m) for m in re.findall(r"`+", text)), default=0)
    return "`" * max(3, longest + 1)


def _diff_text(segments: list[Any]) -> str:
    marks = {"delete": ("[-", "-]"), "insert": ("{+", "+}"), "equal": ("", "")}
    return "".join(marks[k][0] + t + marks[k][1] for k, t in segments)


def _block(b: dict[str, Any], level: int) -> list[str]:
    kind = b["type"]
    if kind == "note":
        prefix = {"danger": "**WARNING:** ", "warning": "**Note:** "}.get(b["tone"], "")
        return [f"> {prefix}{b['text']}", ""]
    if kind == "keyvalues":
        return [*(f"- **{k}:** {v}" for k, v in b["items"]), ""]
    if kind == "table":
        return _table(b)
    if kind == "chart":
        return [f"*Chart: {b['title']}* (in the HTML report)" + (f" — {b['caption']}" if b["caption"]
                                                                 else ""), ""]
    if kind == "text":
        fence = _fence(b["text"])
        return [f"{b['label']}:", "", f"{fence}text", b["text"], fence, ""]
    if kind == "diff":
        out = [b["caption"], ""] if b["caption"] else []
        for label, segs in ((b["label_a"], b["segments_a"]), (b["label_b"], b["segments_b"])):
            text = _diff_text(segs)
            fence = _fence(text)
            out += [f"{label} (`[-removed-]` `{{+added+}}`):", "", f"{fence}text", text, fence, ""]
        return out
    if kind == "itemtable":
        return _item_table(b, level)
    if kind == "card":
        badges = " ".join(f"`{label}`" for label, _ in b["badges"])
        out = [f"{'#' * level} {b['title']} {badges}".rstrip(), ""]
        for inner in b["blocks"]:
            out += _block(inner, level + 1)
        return out
    return []


def _item_table(b: dict[str, Any], level: int) -> list[str]:
    labels = {f["key"]: f["label"] for f in b["filters"]}
    table = {"caption": b["caption"], "columns": [*b["columns"], "lists"],
             "numeric": b["numeric"],
             "rows": [[*r["cells"], ", ".join(labels.get(c, c) for c in r["categories"]) or "-"]
                      for r in b["rows"]]}
    counts = "; ".join(f"{f['label']}: {f['count']}" for f in b["filters"])
    out = [counts, "", *_table(table)]
    shown = [r for r in b["rows"] if r["item_id"] in set(b["expanded"])]
    if shown:
        out += ["In full (the HTML report opens every item):", ""]
        for r in shown:
            out += _block(r["detail"], level)
    return out


def render_markdown(report: Report) -> str:
    """Render ``report`` as GitHub-flavoured Markdown."""
    data = report.to_dict(charts=False)
    lines = [f"# {data['title']}", "", data["subtitle"], ""]
    for b in data["banners"]:
        lines += _block(b, 3)
    for section in data["sections"]:
        lines += [f"## {section['title']}", ""]
        for b in section["blocks"]:
            lines += _block(b, 3)
    return "\n".join(lines).rstrip() + "\n"
