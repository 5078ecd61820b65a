"""eyecite in one place: whitespace cleaning with an offset map, the memoised court lookup,
and a flat record per citation with the year and court taken from its own parenthetical and
the case name written before it."""

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
    UnknownCitation,
)

from legal_judge.checks.case_names import name_before, previous_end
from legal_judge.checks.designators import designator_tail, spaced_subdivisions
from legal_judge.checks.eyecite_speed import (
    CachedRegexModule,
    fast_court_by_paren,
    windowed_tokenizer,
)

__all__ = [
    "COURT_HELPER_NAME",
    "CleanText",
    "EditionInfo",
    "Extraction",
    "EyeciteRecord",
    "clean_whitespace",
    "extract",
    "install_court_memo",
    "settle",
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
    parallel: bool = False  # a parallel citation of the record before it (one parenthetical)
    paren_start: int | None = None  # where the parenthetical the year and court came from starts
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


def _post_paren(text: str, end: int) -> tuple[str | None, str | None, int | None]:
    """(year, court, where the parenthetical starts) from the parenthetical after the citation.

    eyecite's own metadata.year can come from text before the citation or from a later
    parenthetical (its court group runs lazily across brackets up to the next year), so the
    year and court are read here from the cleaned text after the citation instead; whether the
    parenthetical is this citation's own is settled once every citation is known (:func:`settle`).
    """
    m = _POST.match(text, end, min(len(text), end + 260))
    if not m or _PROSE.search(m["extra"]):
        return None, None, None
    court = (m["court"] or "").strip(" ,") or None
    return m["year"], court, m.end("extra")


# What separates parallel citations of one case: a comma and pin cites ("347 U.S. 483, 494,
# 74 S. Ct. 686"). Anything else (a case name, "aff'd,", "and") starts another citation.
_PARALLEL_GAP = re.compile(
    r",\s*(?:(?:at\s+)?\*?\d+(?:[-–]\d+)?(?:\s*(?:&\s*)?nn?\.\s*\d+)?\s*,\s*)*"
)


def _case_record(cite: FullCaseCitation, previous: EyeciteRecord | None,
                 clean: CleanText) -> EyeciteRecord:
    start, end = cite.span()
    year_text, court_text, paren_start = _post_paren(clean.text, end)
    # eyecite's own grouping (one full_span_start) also joins two cases of one sentence.
    parallel = (
        previous is not None
        and previous.kind == "case"
        and _PARALLEL_GAP.fullmatch(clean.text, previous.clean_span[1], start) is not None
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
        parallel=parallel,
        paren_start=paren_start,
        pin_cite=cite.metadata.pin_cite,
    )


_PUB_L = re.compile(r"Pub\.\s?L\.\s?(?:No\.\s?)?\d+[-–]\d+")
# The annotated editions cite the same code: one canonical form for each.
_CODE_FORMS = {"U.S.C.": "U.S.C.", "U.S.C.A.": "U.S.C.", "U.S.C.S.": "U.S.C.", "C.F.R.": "C.F.R."}


def _canonical_code(groups: dict[str, str | None], reporter: str, sign: str) -> str | None:
    """"42 U.S.C. § 1983" for U.S.C. (and its annotated editions) and C.F.R.; None otherwise."""
    code = _CODE_FORMS.get(reporter)
    title = groups.get("title") or groups.get("chapter")
    section = groups.get("section")
    if code is None or not title or not section:
        return None
    return f"{title} {code} {sign} {section}"


def _law_record(cite: FullLawCitation | FullJournalCitation, clean: CleanText) -> EyeciteRecord:
    start, end = cite.span()
    year_text = cite.metadata.year
    groups = dict(cite.groups)
    normalized = None
    if isinstance(cite, FullLawCitation):
        # eyecite stops a section at its first dot or dash ("17 C.F.R. § 240" for 240.10b-5,
        # "42 U.S.C. § 1397" for 1397.99n–1): the designator is taken whole, never cut down.
        whole = designator_tail(clean.text, end)
        if groups.get("section") and clean.text[start:end].endswith(groups["section"] or ""):
            groups["section"] = (groups["section"] or "") + clean.text[end:whole]
        end, spaced = spaced_subdivisions(clean.text, whole)  # "26 U.S.C. § 7502 (f)(2)"
        if groups.get("section"):
            groups["section"] = (groups["section"] or "") + spaced
        sign = "§§" if "§§" in clean.text[start:end] else "§"
        normalized = _canonical_code(groups, cite.corrected_reporter(), sign)
    pub_l = _PUB_L.match(clean.text, start, end)
    if pub_l:  # eyecite reads "Pub. L. No. 95-555, 92 Stat. 2076" as one cite with section 92
        end = pub_l.end()
        normalized = None
    matched = clean.text[start:end]
    if isinstance(cite, FullLawCitation):
        normalized = normalized or matched
    return EyeciteRecord(
        kind="law" if isinstance(cite, FullLawCitation) else "journal",
        text=matched,
        span=clean.original_span(start, end),
        clean_span=(start, end),
        groups=groups,
        reporter=cite.corrected_reporter(),
        normalized=normalized or cite.corrected_citation(),
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


@dataclass(frozen=True)
class Extraction:
    """What eyecite found: a record per full citation, and the span of every citation."""

    records: list[EyeciteRecord]
    spans: list[tuple[int, int]]  # in the cleaned text: short forms, id. and supra included


def extract(clean: CleanText) -> Extraction:
    """Run eyecite on cleaned text and return one record per full citation, in text order.

    Short forms, id., supra and bare section signs get no record: they point back at a full
    citation that is checked itself. Star-page markers are no citation at all.
    """
    records: list[EyeciteRecord] = []
    spans: list[tuple[int, int]] = []
    for cite in get_citations(clean.text, tokenizer=windowed_tokenizer()):
        if _star_page(cite, clean.text) or isinstance(cite, UnknownCitation):
            continue
        spans.append(cite.span())
        if isinstance(cite, FullCaseCitation):
            if cite.groups.get("page"):
                records.append(_case_record(cite, records[-1] if records else None, clean))
        elif isinstance(cite, FullLawCitation | FullJournalCitation):
            records.append(_law_record(cite, clean))
    return Extraction(records, spans)


def _disown_borrowed(rec: EyeciteRecord, own: set[tuple[int, int]],
                     spans: list[tuple[int, int]], starts: list[int]) -> None:
    """Drop the year and court of a parenthetical that another citation stands in front of.

    "See 123 U.S. 99999 and Varghese ..., 925 F.3d 1339 (11th Cir. 2019)": the parenthetical
    is Varghese's. Only the citation's parallel citations (``own``) may stand between.
    ``spans`` is sorted, ``starts`` its start offsets (a long brief has thousands).
    """
    if rec.paren_start is None:
        return
    end = rec.clean_span[1]
    lo = bisect.bisect_left(starts, end)
    hi = bisect.bisect_left(starts, rec.paren_start)
    if any(b <= rec.paren_start and (a, b) not in own for a, b in spans[lo:hi]):
        rec.year = rec.year_text = rec.court_text = rec.paren_start = None


def settle(records: list[EyeciteRecord], spans: list[tuple[int, int]], text: str) -> None:
    """Give each case record only what is its own, once every citation in ``text`` is known.

    Args:
        records: eyecite's records, in text order.
        spans: every citation's span in the cleaned text (eyecite's and the regex layers').
        text: the cleaned text.
    """
    ends = sorted(b for _, b in spans)
    spans = sorted(spans)
    starts = [a for a, _ in spans]
    name = None
    for i, rec in enumerate(records):
        if rec.kind != "case":
            continue
        own = {rec.clean_span}
        for later in records[i + 1 :]:
            if not later.parallel:
                break
            own.add(later.clean_span)
        _disown_borrowed(rec, own, spans, starts)
        if not rec.parallel:  # a parallel citation shares the first one's name
            found = name_before(text, rec.clean_span[0], previous_end(ends, rec.clean_span[0]))
            name = found.name
            if rec.year is None and found.year is not None:  # "Cochran v. Schwan's (2014) 228"
                rec.year, rec.year_text = found.year, str(found.year)
        rec.case_name = name
