"""eyecite in one place: whitespace cleaning with an offset map, the memoised court lookup,
and a flat record per citation with the year and court taken from the right parenthetical."""

from __future__ import annotations

import bisect
import logging
import re
from dataclasses import dataclass, field
from typing import Any

import eyecite.helpers as _eyecite_helpers
import regex
from eyecite import get_citations
from eyecite.models import (
    CitationBase,
    FullCaseCitation,
    FullJournalCitation,
    FullLawCitation,
)

from legal_judge.checks.eyecite_speed import (
    CachedRegexModule,
    fast_court_by_paren,
    windowed_tokenizer,
)

__all__ = [
    "COURT_HELPER_NAME",
    "CleanText",
    "EditionInfo",
    "EyeciteRecord",
    "clean_whitespace",
    "extract",
    "install_court_memo",
]

# The eyecite helper that maps "2d Cir." to a court id. It regex-substitutes over all 2,809
# courts on every call (~73% of eyecite's time on a long brief), so it is memoised here and
# nowhere else; tests/checks/test_eyecite_layer.py fails if eyecite renames it.
COURT_HELPER_NAME = "get_court_by_paren"
_WS = re.compile(r"\s+")


def install_court_memo() -> None:
    """Replace eyecite's court lookup with :func:`fast_court_by_paren` (identical output,
    tested against the original; the original costs ~60 ms per new court string).

    Raises:
        RuntimeError: eyecite no longer has the helper; update COURT_HELPER_NAME.
    """
    original = getattr(_eyecite_helpers, COURT_HELPER_NAME, None)
    if original is None:
        raise RuntimeError(
            f"eyecite.helpers.{COURT_HELPER_NAME} is gone; update legal_judge/checks/eyecite_layer.py"
        )
    if getattr(original, "_legal_judge_memo", False):
        return
    fast: Any = fast_court_by_paren
    fast._legal_judge_memo = True
    fast._legal_judge_original = original
    setattr(_eyecite_helpers, COURT_HELPER_NAME, fast)


install_court_memo()
if isinstance(getattr(_eyecite_helpers, "re", None), type(regex)):  # eyecite's helpers use `regex`
    _eyecite_helpers.re = CachedRegexModule(_eyecite_helpers.re)
# eyecite logs parser quirks ("Unknown overlap case ...") as warnings; they are not the user's to
# read in `check` output.
logging.getLogger("eyecite").setLevel(logging.ERROR)


@dataclass(frozen=True)
class CleanText:
    """Text with whitespace runs collapsed, and the map back to offsets in the original.

    The map is one entry per collapsed run (clean offset where a stretch starts, and how far
    the original is ahead there), not one per character.
    """

    text: str
    starts: list[int]
    shifts: list[int]
    original_length: int

    def original_offset(self, index: int) -> int:
        """The offset in the original text of the cleaned character at ``index``."""
        return index + self.shifts[bisect.bisect_right(self.starts, index) - 1]

    def original_span(self, start: int, end: int) -> tuple[int, int]:
        """Map a [start, end) span of the cleaned text back to the original text."""
        if end <= start:
            return (self.original_offset(start),) * 2 if self.text else (0, 0)
        return self.original_offset(start), self.original_offset(end - 1) + 1


def clean_whitespace(text: str) -> CleanText:
    """Collapse whitespace (a citation broken across lines is missed otherwise), keep offsets.

    Args:
        text: the original text.

    Returns:
        The cleaned text with an offset map into ``text``.
    """
    starts, shifts = [0], [0]
    shift = 0
    for m in _WS.finditer(text):
        shift += m.end() - m.start() - 1
        starts.append(m.end() - shift)
        shifts.append(shift)
    return CleanText(
        text=_WS.sub(" ", text), starts=starts, shifts=shifts, original_length=len(text)
    )


@dataclass(frozen=True)
class EditionInfo:
    """One reporters-db edition a citation may belong to."""

    short_name: str
    reporter: str
    cite_type: str
    start_year: int | None
    end_year: int | None


@dataclass
class EyeciteRecord:
    """The facts the rules need about one full citation eyecite found."""

    kind: str  # case | law | journal
    text: str
    span: tuple[int, int]
    clean_span: tuple[int, int]
    groups: dict[str, str | None]
    reporter: str
    normalized: str
    editions: list[EditionInfo] = field(default_factory=list)
    year: int | None = None
    year_text: str | None = None
    court_text: str | None = None
    case_name: str | None = None
    parallel: bool = False
    publisher: str | None = None
    pin_cite: str | None = None


def _editions(cite: Any) -> list[EditionInfo]:
    result = []
    for ed in cite.exact_editions or cite.variation_editions or ():
        result.append(
            EditionInfo(
                short_name=ed.short_name,
                reporter=ed.reporter.short_name,
                cite_type=ed.reporter.cite_type,
                start_year=ed.start.year if ed.start else None,
                end_year=ed.end.year if ed.end else None,
            )
        )
    return result


_MONTH = r"(?:Jan|Feb|Mar|Apr|May|June?|July?|Aug|Sept?|Oct|Nov|Dec)[a-z]*\.?"
# The parenthetical right after a citation: pin cites and parallel citations may come first
# (never a parenthesis or a semicolon), then "(court month day, year)".
# Texas cites subsequent history inside the parenthetical: "(Tex. App.—Dallas 2003, pet. denied)".
_POST = re.compile(
    rf"(?P<extra>[^(;]{{0,160}}?)\((?:(?P<court>[^()]{{0,60}}?)\s+)?(?:{_MONTH}\s+\d{{1,2}},?\s+)?"
    r"(?P<year>1[6-9]\d\d|20\d\d)(?:[-–]\d{2})?(?:,\s*[a-z][^()]{0,60})?\)"
)
_PROSE = re.compile(
    r"\b(?!cert\b|denied\b|dismissed\b|granted\b|modified\b|aff'd\b|rev'd\b)[a-z]{4,}\b"
)


def _post_paren(text: str, end: int) -> tuple[str | None, str | None]:
    """(year, court) from the parenthetical right after the citation, or (None, None).

    eyecite's own metadata.year can come from text before the citation or from a later
    parenthetical (its court group runs lazily across brackets up to the next year), so the
    year and court are read here from the cleaned text after the citation instead.
    """
    m = _POST.match(text, end, min(len(text), end + 260))
    if not m or _PROSE.search(m["extra"]):
        return None, None
    court = (m["court"] or "").strip(" ,") or None
    return m["year"], court


_ONE_PARTY = re.compile(
    r"(?:^|[.;:]\s|\bSee\s|\bsee\s|\bcf\.\s|\bIn\s)"
    r"(?P<name>(?:In re|Matter of|Ex parte|Estate of|Application of|Petition of)\s+[^,;()]{1,60}),\s*$"
)


def _case_name(cite: FullCaseCitation, clean: CleanText) -> str | None:
    plaintiff = (cite.metadata.plaintiff or "").strip()
    defendant = (cite.metadata.defendant or "").strip()
    if plaintiff and defendant:
        return f"{plaintiff} v. {defendant}"
    # "Matter of Jones, 150 A.D.3d 1234": one party, which eyecite does not report.
    start = cite.span()[0]
    m = _ONE_PARTY.search(clean.text[max(0, start - 90) : start])
    return m["name"].strip() if m else None


def _case_record(cite: FullCaseCitation, previous: Any, clean: CleanText) -> EyeciteRecord:
    start, end = cite.span()
    year_text, court_text = _post_paren(clean.text, end)
    parallel = (
        isinstance(previous, FullCaseCitation)
        and cite.full_span_start is not None
        and previous.full_span_start == cite.full_span_start
    )
    reporter = cite.corrected_reporter()
    return EyeciteRecord(
        kind="case",
        text=clean.text[start:end],
        span=clean.original_span(start, end),
        clean_span=(start, end),
        groups=dict(cite.groups),
        reporter=reporter,
        normalized=" ".join(
            p for p in (cite.groups.get("volume"), reporter, cite.groups.get("page")) if p
        ),
        editions=_editions(cite),
        year=int(year_text) if year_text else None,
        year_text=year_text,
        court_text=court_text,
        case_name=_case_name(cite, clean),
        parallel=parallel,
        pin_cite=cite.metadata.pin_cite,
    )


_PUB_L = re.compile(r"Pub\.\s?L\.\s?(?:No\.\s?)?\d+[-–]\d+")
# Subdivisions written right after a section: "§ 2000e-2(a)(1)", "§ 7-108(1-a)", "803(6)".
SUBDIVISIONS = re.compile(r"(?:\([0-9A-Za-z]{1,6}(?:[-.][0-9A-Za-z]{1,4})?\))+")


def _law_record(cite: FullLawCitation | FullJournalCitation, clean: CleanText) -> EyeciteRecord:
    start, end = cite.span()
    year_text = cite.metadata.year
    sub = SUBDIVISIONS.match(clean.text, end) if isinstance(cite, FullLawCitation) else None
    if sub:
        end = sub.end()
    pub_l = _PUB_L.match(clean.text, start, end)
    if pub_l:  # eyecite reads "Pub. L. No. 95-555, 92 Stat. 2076" as one cite with section 92
        end = pub_l.end()
    matched = clean.text[start:end]
    return EyeciteRecord(
        kind="law" if isinstance(cite, FullLawCitation) else "journal",
        text=matched,
        span=clean.original_span(start, end),
        clean_span=(start, end),
        groups=dict(cite.groups),
        reporter=cite.corrected_reporter(),
        normalized=matched if isinstance(cite, FullLawCitation) else cite.corrected_citation(),
        editions=_editions(cite),
        year=int(year_text[:4]) if year_text and year_text[:4].isdigit() else None,
        year_text=year_text,
        publisher=getattr(cite.metadata, "publisher", None),
    )


def _star_page(cite: CitationBase, text: str) -> bool:
    """A page marker of a reprinted opinion ("[512 F.Supp.3d 104]"), not a citation."""
    start, end = cite.span()
    before = text[:start].rstrip()[-1:]
    after = text[end:].lstrip()[:1]
    return before == "[" and after == "]"


def extract(clean: CleanText) -> list[EyeciteRecord]:
    """Run eyecite on cleaned text and return one record per full citation, in text order.

    Short forms, id., supra and bare section signs are skipped: they point back at a full
    citation that is checked itself.
    """
    records: list[EyeciteRecord] = []
    previous: CitationBase | None = None
    for cite in get_citations(clean.text, tokenizer=windowed_tokenizer()):
        if _star_page(cite, clean.text):
            continue
        if isinstance(cite, FullCaseCitation):
            if cite.groups.get("page"):
                records.append(_case_record(cite, previous, clean))
            previous = cite
        elif isinstance(cite, FullLawCitation | FullJournalCitation):
            records.append(_law_record(cite, clean))
    return records
