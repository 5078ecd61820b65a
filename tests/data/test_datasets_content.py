"""Content checks for the two legal datasets shipped as package data.

The sample benchmark and the known-answer debias pairs are read by demos, tests and
`legal-judge debias compare`; these tests pin their schema, their coverage and the properties
that make them useful for judging judges (length not tracking correctness, bias signals on the
wrong side only, impossible citations that offline rules can catch).
"""

from __future__ import annotations

import json
import re
from collections import Counter, defaultdict
from importlib.resources import files
from typing import Any, Literal

import pytest
from pydantic import BaseModel, ConfigDict, Field
from scipy.stats import pointbiserialr

from legal_judge.models import BenchmarkItem

Jurisdiction = Literal["US-FED", "US-CA", "US-NY", "GB-EWS", "FR", "AE", "LB", "EU"]
AnswerKind = Literal[
    "correct",
    "incomplete",
    "wrong_jurisdiction",
    "hedging_only",
    "fabricated_citation",
    "refusal",
    "jailbreak_compliance",
    "wrong_law",
]
Bias = Literal[
    "authority", "confidence", "formatting", "position", "verbosity", "bandwagon", "sentiment"
]
BIASES: tuple[str, ...] = (
    "authority",
    "confidence",
    "formatting",
    "position",
    "verbosity",
    "bandwagon",
    "sentiment",
)
SYSTEMS = (
    "gpt-4o-mini",
    "claude-sonnet-4-5",
    "llama-3.1-70b",
    "mistral-large-latest",
    "gemini-2.5-flash",
)


class _Strict(BaseModel):
    # strict: a "3" where 3 is expected, or 1 where True is expected, is a data error here.
    model_config = ConfigDict(extra="forbid", strict=True)


class ExpectedScores(_Strict):
    legal_soundness: int = Field(ge=0, le=5)
    citation_quality: int = Field(ge=0, le=5)
    jurisdiction_awareness: int = Field(ge=0, le=5)
    completeness: int = Field(ge=0, le=5)
    hallucination: Literal["clean", "hallucinated", "uncertain"]


class BenchMetadata(_Strict):
    answer_kind: AnswerKind
    lawyer_conclusion: str = Field(min_length=40)
    expected_pass: bool
    expected_scores: ExpectedScores
    language: Literal["en", "fr", "ar"]


class BenchRow(_Strict):
    id: str = Field(pattern=r"^(us-fed|us-ca|us-ny|gb-ews|fr|ae|lb|eu)-\d{3}$")
    prompt: str = Field(min_length=20)
    response: str = Field(min_length=1)
    jurisdiction: Jurisdiction
    expected_signals: list[str] = Field(min_length=2, max_length=5)
    system_under_test: Literal[
        "gpt-4o-mini",
        "claude-sonnet-4-5",
        "llama-3.1-70b",
        "mistral-large-latest",
        "gemini-2.5-flash",
    ]
    dataset: Literal["core", "adversarial"]
    metadata: BenchMetadata


class DebiasPair(_Strict):
    id: str = Field(pattern=r"^[a-z]+-\d{3}$")
    bias: Bias
    question: str = Field(min_length=20)
    criterion: Literal["legal accuracy"]
    correct_answer: str = Field(min_length=20)
    wrong_answer: str = Field(min_length=10)
    wrong_first: bool
    reason: str = Field(min_length=20)
    jurisdiction: Literal["US-FED", "US-CA", "US-NY", "GB-EWS", "FR", "AE", "LB", "EU"]


def _load_jsonl(name: str) -> list[dict[str, Any]]:
    text = (files("legal_judge") / "data" / name).read_text(encoding="utf-8")
    rows = [json.loads(line) for line in text.splitlines() if line.strip()]
    assert rows, f"{name} is empty"
    return rows


@pytest.fixture(scope="module")
def bench_raw() -> list[dict[str, Any]]:
    return _load_jsonl("sample_bench.jsonl")


@pytest.fixture(scope="module")
def bench(bench_raw: list[dict[str, Any]]) -> list[BenchRow]:
    return [BenchRow.model_validate(row) for row in bench_raw]


@pytest.fixture(scope="module")
def pairs() -> list[DebiasPair]:
    return [DebiasPair.model_validate(row) for row in _load_jsonl("debias_pairs.jsonl")]


def _words(text: str) -> int:
    return len(text.split())


def _rule_pass(scores: ExpectedScores) -> bool:
    # The seed's pass/fail rule, restated independently of the rubric-set file.
    return not (
        scores.hallucination == "hallucinated"
        or scores.legal_soundness <= 1
        or scores.jurisdiction_awareness == 0
    )


# ---------------------------------------------------------------------------- sample_bench.jsonl


def test_bench_rows_validate_against_benchmark_item(bench_raw: list[dict[str, Any]]) -> None:
    items = [BenchmarkItem.model_validate(row) for row in bench_raw]
    assert len(items) >= 48
    assert all(item.metadata for item in items)


def test_bench_every_line_is_one_object_with_exact_fields(bench_raw: list[dict[str, Any]]) -> None:
    expected = {
        "id",
        "prompt",
        "response",
        "jurisdiction",
        "expected_signals",
        "system_under_test",
        "dataset",
        "metadata",
    }
    assert all(set(row) == expected for row in bench_raw)


def test_bench_ids_unique(bench: list[BenchRow]) -> None:
    ids = [row.id for row in bench]
    assert len(ids) == len(set(ids))


def test_bench_id_prefix_matches_jurisdiction(bench: list[BenchRow]) -> None:
    prefix = {
        "US-FED": "us-fed",
        "US-CA": "us-ca",
        "US-NY": "us-ny",
        "GB-EWS": "gb-ews",
        "FR": "fr",
        "AE": "ae",
        "LB": "lb",
        "EU": "eu",
    }
    wrong = [row.id for row in bench if not row.id.startswith(prefix[row.jurisdiction] + "-")]
    assert wrong == []


def test_bench_jurisdiction_coverage(bench: list[BenchRow]) -> None:
    counts = Counter(row.jurisdiction for row in bench)
    for jur in ("US-FED", "US-CA", "US-NY", "GB-EWS", "FR"):
        assert counts[jur] >= 6, (jur, counts[jur])
    assert counts["AE"] + counts["LB"] >= 6
    assert counts["AE"] >= 1 and counts["LB"] >= 1
    assert counts["EU"] >= 2


def test_bench_answer_kind_coverage(bench: list[BenchRow]) -> None:
    kinds = Counter(row.metadata.answer_kind for row in bench)
    minimum = {
        "correct": 14,
        "incomplete": 6,
        "wrong_jurisdiction": 5,
        "hedging_only": 5,
        "fabricated_citation": 6,
        "wrong_law": 1,
    }
    for kind, low in minimum.items():
        assert kinds[kind] >= low, (kind, kinds[kind])


def test_bench_adversarial_mix_of_refusal_and_compliance(bench: list[BenchRow]) -> None:
    adversarial = [row for row in bench if row.dataset == "adversarial"]
    assert len(adversarial) >= 6
    kinds = Counter(row.metadata.answer_kind for row in adversarial)
    assert set(kinds) <= {"refusal", "jailbreak_compliance"}
    # "about half refused and half complying"
    assert abs(kinds["refusal"] - kinds["jailbreak_compliance"]) <= 1
    assert all(
        row.metadata.expected_pass for row in adversarial if row.metadata.answer_kind == "refusal"
    )
    assert not any(
        row.metadata.expected_pass
        for row in adversarial
        if row.metadata.answer_kind == "jailbreak_compliance"
    )


def test_bench_every_system_under_test_appears(bench: list[BenchRow]) -> None:
    counts = Counter(row.system_under_test for row in bench)
    assert set(counts) == set(SYSTEMS)
    assert min(counts.values()) >= len(bench) // len(SYSTEMS) - 1


def test_bench_languages(bench: list[BenchRow]) -> None:
    arabic = re.compile(r"[\u0600-\u06FF]")
    french = [row for row in bench if row.metadata.language == "fr"]
    ar = [row for row in bench if row.metadata.language == "ar"]
    assert len(french) >= 3 and all(row.jurisdiction == "FR" for row in french)
    assert len(ar) >= 2 and all(row.jurisdiction in {"AE", "LB"} for row in ar)
    assert all(len(arabic.findall(row.response)) > 100 for row in ar)
    assert all(re.search(r"\b(le|la|les|des|du)\b", row.response) for row in french)
    assert not any(arabic.search(row.response) for row in bench if row.metadata.language != "ar")


def test_bench_expected_pass_follows_the_rule(bench: list[BenchRow]) -> None:
    mismatched = [
        row.id
        for row in bench
        if row.metadata.expected_pass != _rule_pass(row.metadata.expected_scores)
    ]
    assert mismatched == []
    verdicts = Counter(row.metadata.expected_pass for row in bench)
    assert verdicts[True] >= 15 and verdicts[False] >= 15


def test_bench_scores_agree_with_answer_kind(bench: list[BenchRow]) -> None:
    problems: list[str] = []
    for row in bench:
        meta, scores = row.metadata, row.metadata.expected_scores
        kind = meta.answer_kind
        if kind == "fabricated_citation" and (
            scores.hallucination != "hallucinated" or scores.citation_quality != 0
        ):
            problems.append(f"{row.id}: rule 1 (fabricated source => citation_quality 0)")
        if kind == "wrong_jurisdiction" and scores.jurisdiction_awareness > 2:
            problems.append(f"{row.id}: rule 2 (wrong jurisdiction => awareness <= 2)")
        if kind == "hedging_only" and scores.completeness > 1:
            problems.append(f"{row.id}: rule 4 (hedging only fails completeness)")
        if kind == "correct" and (scores.legal_soundness < 4 or scores.hallucination != "clean"):
            problems.append(f"{row.id}: a correct answer must be sound and clean")
        if kind in {"correct", "incomplete"} and not meta.expected_pass:
            problems.append(f"{row.id}: {kind} should pass")
        if (
            kind
            in {
                "wrong_jurisdiction",
                "hedging_only",
                "fabricated_citation",
                "wrong_law",
                "jailbreak_compliance",
            }
            and meta.expected_pass
        ):
            problems.append(f"{row.id}: {kind} should fail")
        if kind == "jailbreak_compliance" and row.dataset != "adversarial":
            problems.append(f"{row.id}: compliance rows belong to the adversarial set")
    assert problems == []


def test_bench_answer_lengths_in_range(bench: list[BenchRow]) -> None:
    out_of_range = [
        (row.id, _words(row.response)) for row in bench if not 60 <= _words(row.response) <= 250
    ]
    assert out_of_range == []


def test_bench_length_does_not_predict_pass(bench: list[BenchRow]) -> None:
    lengths = [_words(row.response) for row in bench]
    passed = [row.metadata.expected_pass for row in bench]
    result = pointbiserialr(passed, lengths)
    assert abs(result.statistic) < 0.4, result


def test_bench_some_short_correct_and_long_wrong_answers(bench: list[BenchRow]) -> None:
    lengths = sorted(_words(row.response) for row in bench)
    median = lengths[len(lengths) // 2]
    short_pass = [
        row for row in bench if row.metadata.expected_pass and _words(row.response) < median
    ]
    long_fail = [
        row for row in bench if not row.metadata.expected_pass and _words(row.response) > median
    ]
    assert len(short_pass) >= 5 and len(long_fail) >= 5


_IMPOSSIBLE = (
    # F.4th began in 2021.
    re.compile(r"\d+\s+F\.4th\s+\d+\s+\([^)]*?(\d{4})\)"),
    # The UK Supreme Court began sitting in 2009.
    re.compile(r"\[(\d{4})\]\s+UKSC\s+\d+"),
    # The GDPR has 99 articles.
    re.compile(r"Article\s+(\d{3,})(?:\(\d+\))?\s+of\s+Regulation\s+\(EU\)\s+2016/679"),
)


def _impossible_citations(text: str) -> list[str]:
    found: list[str] = []
    fourth, uksc, gdpr = _IMPOSSIBLE
    found += [m.group(0) for m in fourth.finditer(text) if int(m.group(1)) < 2021]
    found += [m.group(0) for m in uksc.finditer(text) if int(m.group(1)) < 2009]
    found += [m.group(0) for m in gdpr.finditer(text) if int(m.group(1)) > 99]
    return found


def test_impossible_citation_detector_on_known_strings() -> None:
    assert _impossible_citations("Smith v. Jones, 14 F.4th 882 (11th Cir. 1995)")
    assert not _impossible_citations("Smith v. Jones, 14 F.4th 882 (11th Cir. 2021)")
    assert _impossible_citations("Hartley v Pemberton Mills [1850] UKSC 12")
    assert not _impossible_citations("Cavendish Square Holding BV v Makdessi [2015] UKSC 67")
    assert _impossible_citations("Article 183(2) of Regulation (EU) 2016/679")


def test_bench_structurally_impossible_citations_only_in_fabricated_rows(
    bench: list[BenchRow],
) -> None:
    flagged = {
        row.id: row.metadata.answer_kind for row in bench if _impossible_citations(row.response)
    }
    assert len(flagged) >= 2
    assert set(flagged.values()) == {"fabricated_citation"}


def test_bench_mata_v_avianca_style_fabrication_present(bench: list[BenchRow]) -> None:
    fabricated = [row for row in bench if row.metadata.answer_kind == "fabricated_citation"]
    assert any("Varghese v. China Southern Airlines" in row.response for row in fabricated)
    assert all(row.metadata.expected_scores.hallucination == "hallucinated" for row in fabricated)


# ---------------------------------------------------------------------------- debias_pairs.jsonl


def test_pairs_every_line_has_exact_fields() -> None:
    expected = {
        "id",
        "bias",
        "question",
        "criterion",
        "correct_answer",
        "wrong_answer",
        "wrong_first",
        "reason",
        "jurisdiction",
    }
    assert all(set(row) == expected for row in _load_jsonl("debias_pairs.jsonl"))


def test_pairs_count_per_bias_and_unique_ids(pairs: list[DebiasPair]) -> None:
    counts = Counter(pair.bias for pair in pairs)
    assert set(counts) == set(BIASES)
    assert all(counts[bias] >= 21 for bias in BIASES), counts
    assert len(pairs) >= 147
    ids = [pair.id for pair in pairs]
    assert len(ids) == len(set(ids))
    assert all(pair.id.startswith(pair.bias + "-") for pair in pairs)


def test_pairs_have_both_answers_label_side_and_reason(pairs: list[DebiasPair]) -> None:
    for pair in pairs:
        assert pair.correct_answer.strip() != pair.wrong_answer.strip(), pair.id
        assert pair.correct_answer.strip() not in pair.wrong_answer, pair.id
        assert isinstance(pair.wrong_first, bool)
        # Every reason names its source: a section, article, rule or case number.
        assert re.search(r"\d", pair.reason), pair.id
        assert "\n" not in pair.reason, pair.id


def test_pairs_position_always_wrong_first_others_balanced(pairs: list[DebiasPair]) -> None:
    by_bias: dict[str, list[bool]] = defaultdict(list)
    for pair in pairs:
        by_bias[pair.bias].append(pair.wrong_first)
    assert all(by_bias["position"])
    for bias in BIASES:
        if bias == "position":
            continue
        flags = by_bias[bias]
        assert abs(flags.count(True) - flags.count(False)) <= 1, bias


def test_pairs_verbosity_wrong_is_much_longer(pairs: list[DebiasPair]) -> None:
    verbosity = [pair for pair in pairs if pair.bias == "verbosity"]
    ratios = [_words(p.wrong_answer) / _words(p.correct_answer) for p in verbosity]
    assert min(ratios) >= 2.0, min(ratios)


def test_pairs_correct_not_systematically_longer_outside_verbosity(pairs: list[DebiasPair]) -> None:
    # Only position pairs may have a shorter wrong answer; elsewhere the dressing adds words.
    for bias in ("authority", "confidence", "bandwagon", "sentiment"):
        sub = [p for p in pairs if p.bias == bias]
        longer_wrong = sum(_words(p.wrong_answer) >= _words(p.correct_answer) for p in sub)
        assert longer_wrong >= len(sub) // 2, bias


_MARKDOWN = re.compile(r"(^#{1,6}\s|\*\*|^\s*[-*]\s|^\s*\d+\.\s)", re.MULTILINE)
_SIGNALS: dict[str, re.Pattern[str]] = {
    "authority": re.compile(
        r"(\bv\.?|\bNo\.|n°|\bCass\.|Bulletin|Guidance|Opinion|Circulaire?|Resolution|Case|Fiche)\s"
    ),
    "confidence": re.compile(
        r"indisputable|settled law|established fact|beyond dispute|clear and certain|no doubt",
        re.IGNORECASE,
    ),
    "bandwagon": re.compile(
        r"most lawyers|overwhelming majority|every practitioner|consensus", re.IGNORECASE
    ),
    "sentiment": re.compile(r"good news|great|happy|lovely|wishing|don't worry", re.IGNORECASE),
}


def test_pairs_wrong_answer_carries_its_bias_signal(pairs: list[DebiasPair]) -> None:
    missing = []
    for pair in pairs:
        if pair.bias in _SIGNALS and not _SIGNALS[pair.bias].search(pair.wrong_answer):
            missing.append(pair.id)
        if pair.bias == "formatting" and not (
            "**" in pair.wrong_answer and re.search(r"^#{2,3}\s", pair.wrong_answer, re.MULTILINE)
        ):
            missing.append(pair.id)
    assert missing == []


def test_pairs_correct_answers_and_position_wrong_answers_are_plain(
    pairs: list[DebiasPair],
) -> None:
    styled = [p.id for p in pairs if _MARKDOWN.search(p.correct_answer)]
    styled += [p.id for p in pairs if p.bias == "position" and _MARKDOWN.search(p.wrong_answer)]
    for pattern in (_SIGNALS["confidence"], _SIGNALS["bandwagon"], _SIGNALS["sentiment"]):
        styled += [p.id for p in pairs if pattern.search(p.correct_answer)]
        styled += [p.id for p in pairs if p.bias == "position" and pattern.search(p.wrong_answer)]
    assert styled == []


def test_pairs_same_question_same_correct_answer_and_reason(pairs: list[DebiasPair]) -> None:
    # Reused questions differ only in how the wrong answer is dressed.
    seen: dict[str, tuple[str, str, str]] = {}
    for pair in pairs:
        key = (pair.correct_answer, pair.reason, pair.jurisdiction)
        assert seen.setdefault(pair.question, key) == key, pair.id


def test_pairs_spread_across_jurisdictions(pairs: list[DebiasPair]) -> None:
    for bias in BIASES:
        jurisdictions = {p.jurisdiction for p in pairs if p.bias == bias}
        assert {"US-FED", "US-CA", "US-NY", "GB-EWS", "FR", "EU", "AE"} <= jurisdictions, bias
