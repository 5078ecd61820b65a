"""The eyecite hot spot is memoised in one place; whitespace cleaning keeps original spans."""

from __future__ import annotations

import eyecite.helpers

from legal_judge.checks import eyecite_layer
from legal_judge.checks.citations import check_citations

from ._support import TODAY


def test_court_helper_still_exists_and_is_memoised() -> None:
    # Fails if eyecite renames the helper: then the memo silently stops applying.
    helper = getattr(eyecite.helpers, eyecite_layer.COURT_HELPER_NAME)
    assert getattr(helper, "_legal_judge_memo", False) is True
    assert helper("2d Cir.") == "ca2"
    before = helper.cache_info().hits
    helper("2d Cir.")
    assert helper.cache_info().hits == before + 1


def test_install_is_idempotent() -> None:
    helper = getattr(eyecite.helpers, eyecite_layer.COURT_HELPER_NAME)
    eyecite_layer.install_court_memo()
    assert getattr(eyecite.helpers, eyecite_layer.COURT_HELPER_NAME) is helper


def test_clean_whitespace_maps_back_to_original() -> None:
    text = "See  539\n   U. S. 306 (2003)."
    clean = eyecite_layer.clean_whitespace(text)
    assert clean.text == "See 539 U. S. 306 (2003)."
    start = clean.text.index("539")
    end = clean.text.index(" (2003)")
    s, e = clean.original_span(start, end)
    assert text[s:e] == "539\n   U. S. 306"


def test_citation_broken_across_lines_is_found_with_original_span() -> None:
    text = "Grutter v. Bollinger, 539\nU. S. 306 (2003)."
    report = check_citations(text, today=TODAY)
    assert len(report.findings) == 1
    f = report.findings[0]
    assert f.year == 2003
    assert text[f.span[0] : f.span[1]] == "539\nU. S. 306"


def test_year_comes_from_the_following_parenthetical_only() -> None:
    # eyecite's own metadata takes years from neighbouring parentheticals.
    text = "Roe v. Doe, 603 U.S. 369 (2034). A v. B, 880 F.3d 144 (2d Cir. 2018)."
    years = [f.year for f in check_citations(text, today=TODAY).findings]
    assert years == [2034, 2018]
