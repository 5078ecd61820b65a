"""The faster eyecite pieces give eyecite's own answers: the court lookup for every court string
(exact, prefix and unknown), and the windowed tokenizer's tokens on real opinions."""

from __future__ import annotations

import random
from pathlib import Path

import pytest
from courts_db import courts
from eyecite.tokenizers import default_tokenizer

from legal_judge.checks.eyecite_layer import clean_whitespace
from legal_judge.checks.eyecite_speed import WindowedTokenizer, fast_court_by_paren

DATA = Path(__file__).parent / "data"


def _original_court_helper():  # noqa: ANN202 - eyecite's own function, kept by the installer
    import eyecite.helpers

    installed = eyecite.helpers.get_court_by_paren
    return getattr(installed, "_legal_judge_original", installed)


def test_fast_court_lookup_equals_eyecites() -> None:
    original = _original_court_helper()
    rng = random.Random(19)
    strings = [c["citation_string"] for c in courts if c["citation_string"]]
    sample = rng.sample(strings, 60)
    probes = sample + [s[: max(1, len(s) // 2)] for s in sample[:30]] + [
        "2d Cir.", "D.", "Cir.", "2d Dep't", "Wakanda Dist. Ct.", "", "  ", "S.D.N.Y.", "CA4"]
    for probe in probes:
        assert fast_court_by_paren(probe) == original(probe), probe


def _tokens(tokenizer: object, text: str) -> list[tuple[object, ...]]:
    _, citation_tokens = tokenizer.tokenize(text)  # type: ignore[attr-defined]
    return [(t.start, t.end, type(t).__name__, str(t), tuple(sorted(getattr(t, "groups", {}).items())))
            for _, t in citation_tokens]


@pytest.mark.parametrize("name", sorted(p.name for p in DATA.glob("*.txt")))
def test_windowed_tokenizer_finds_exactly_eyecites_tokens(name: str) -> None:
    raw = (DATA / name).read_text(encoding="utf-8")
    windowed = WindowedTokenizer()
    for text in (raw, clean_whitespace(raw).text):
        expected = _tokens(default_tokenizer, text)
        assert expected, "the text has citations"
        assert _tokens(windowed, text) == expected


def test_windowed_tokenizer_on_a_dense_brief() -> None:
    parts = [f"Doe v. Roe, {100 + i} F.3d {i * 7 + 1} (2d Cir. 2001); see 42 U.S.C. § {1981 + i}. "
             "Filler text without citations " * (i % 5) for i in range(300)]
    text = "".join(parts)
    assert _tokens(WindowedTokenizer(), text) == _tokens(default_tokenizer, text)


@pytest.mark.parametrize("name", sorted(p.name for p in DATA.glob("*.txt")))
def test_candidate_extractors_equal_eyecites(name: str) -> None:
    text = (DATA / name).read_text(encoding="utf-8")
    ours = WindowedTokenizer().candidates(text)
    assert len(ours) == len({id(e) for e in ours})  # each extractor once
    assert set(ours) == default_tokenizer.get_extractors(text)
    assert WindowedTokenizer().get_extractors(text) == set(ours)


def test_eyecites_extractors_are_all_distinct() -> None:
    # candidates() deduplicates by identity (hashing an extractor formats its whole regex);
    # that equals eyecite's set only while no two extractors are equal.
    from eyecite.tokenizers import EXTRACTORS

    assert len(set(EXTRACTORS)) == len(EXTRACTORS)


def test_eyecite_helpers_use_the_compiled_once_regex_module_with_the_same_answers() -> None:
    import eyecite.helpers
    import regex

    from legal_judge.checks.eyecite_speed import CachedRegexModule

    shim = eyecite.helpers.re
    assert isinstance(shim, CachedRegexModule)
    text = "Smith v. Jones, 123 F.3d 456, 460 (2d Cir. 1999)"
    for pattern in (r"\b\d+\b", r"(?P<a>v\.)\s+", r"^(?i)smith"):
        assert shim.search(pattern, text).span() == regex.search(pattern, text).span()
        assert shim.sub(pattern, "_", text) == regex.sub(pattern, "_", text)
        assert shim.split(pattern, text, maxsplit=1) == regex.split(pattern, text, maxsplit=1)
    assert shim.IGNORECASE == regex.IGNORECASE
