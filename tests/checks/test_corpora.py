"""Issue 19, item 5: the regression corpora.

- real public-domain opinions checked whole: no `invalid` or `suspicious` finding, star-page
  markers ignored, at least 95% of the full citations counted by reading them found;
- at least 300 real citations of varied forms: each found, none `invalid` or `suspicious`;
- at least 60 impossible or fabricated citations: each gets its status and its reason, and no
  fabricated one is `verified` offline.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
import yaml

from legal_judge.checks.citations import check_citations

from ._support import TODAY

DATA = Path(__file__).parent / "data"
OPINIONS: list[dict[str, Any]] = yaml.safe_load(
    (DATA / "real_opinions.yaml").read_text(encoding="utf-8")
)["documents"]
REAL_GROUPS: list[dict[str, Any]] = yaml.safe_load(
    (DATA / "real_citations.yaml").read_text(encoding="utf-8")
)["groups"]
REAL = [(g["source"], c) for g in REAL_GROUPS for c in g["cites"]]
IMPOSSIBLE: list[dict[str, Any]] = yaml.safe_load(
    (DATA / "impossible_citations.yaml").read_text(encoding="utf-8")
)["cases"]


def _squash(text: str) -> str:
    return " ".join(text.split())


def _bad(report: Any) -> list[tuple[str, str, list[str]]]:
    return [(f.status, f.text, [h.message for h in f.reasons])
            for f in report.findings if f.status in {"invalid", "suspicious"}]


def test_corpus_sizes() -> None:
    assert len(OPINIONS) >= 4 and len(REAL) >= 300 and len(IMPOSSIBLE) >= 60


@pytest.mark.parametrize("doc", OPINIONS, ids=[d["file"] for d in OPINIONS])
def test_real_opinion_checked_whole(doc: dict[str, Any]) -> None:
    text = (DATA / doc["file"]).read_text(encoding="utf-8")
    report = check_citations(text, today=TODAY)
    assert _bad(report) == []
    found = [_squash(f.text) for f in report.findings] + [f.normalized for f in report.findings]
    missed = [c for c in doc["citations"] if not any(_squash(c) in f for f in found)]
    share = 1 - len(missed) / len(doc["citations"])
    assert share >= 0.95, f"{share:.0%} found; missed {missed}"


def _with_star_pages(text: str) -> str:
    """The text as a reprint prints it: a star-page marker of another reporter before each
    paragraph ("[512 F.Supp.3d 104]", "[*105]"), as court websites and CourtListener do."""
    paragraphs = text.split("\n\n")
    marked = [f"[{512 + i % 3} F.Supp.3d {104 + i}] {p}" if i % 2 else f"[*{104 + i}] {p}"
              for i, p in enumerate(paragraphs)]
    return "\n\n".join(marked)


@pytest.mark.parametrize("doc", OPINIONS[1:], ids=[d["file"] for d in OPINIONS[1:]])
def test_star_page_markers_are_not_citations(doc: dict[str, Any]) -> None:
    text = (DATA / doc["file"]).read_text(encoding="utf-8")
    plain = check_citations(text, today=TODAY)
    marked = check_citations(_with_star_pages(text), today=TODAY)
    assert [f.normalized for f in marked.findings] == [f.normalized for f in plain.findings]
    assert [f.year for f in marked.findings] == [f.year for f in plain.findings]
    assert _bad(marked) == []


@pytest.mark.parametrize(("source", "cite"), REAL, ids=[c for _, c in REAL])
def test_real_citation_is_found_and_not_flagged(source: str, cite: str) -> None:
    report = check_citations(cite, today=TODAY)
    assert report.findings, f"not found ({source})"
    assert _bad(report) == [], source
    assert not report.forces_zero


@pytest.mark.parametrize("case", IMPOSSIBLE, ids=[c["cite"] for c in IMPOSSIBLE])
def test_impossible_citation_gets_its_status_and_reason(case: dict[str, Any]) -> None:
    report = check_citations(case["cite"], today=TODAY)
    assert report.findings, "not found"
    statuses = {f.status for f in report.findings}
    assert "verified" not in statuses
    if case["status"] == "unverifiable":
        assert statuses == {"unverifiable"}, [f.reasons for f in report.findings]
        return
    flagged = [f for f in report.findings if f.status == case["status"]]
    assert flagged, [(f.status, f.reasons) for f in report.findings]
    rules = {h.rule for f in flagged for h in f.reasons if h.severity != "info"}
    assert case["rule"] in rules, [h.message for f in flagged for h in f.reasons]
    assert all(re.search(r"\w", h.message) for f in flagged for h in f.reasons)
