"""Jurisdiction codes from text, courts and citations; mismatch findings."""

from __future__ import annotations

import pytest

from legal_judge.checks.jurisdiction import (
    CODES,
    compatible,
    declared_codes,
    detect_jurisdictions,
    jurisdiction_mismatch,
    known_codes,
    normalise_jurisdiction,
)

CASES = [
    ("Under California law, can a landlord keep the deposit?", {"US-CA"}),
    ("Is this enforceable in New York and West Virginia?", {"US-NY", "US-WV"}),
    ("A federal court applying 42 U.S.C. § 1983", {"US-FED"}),
    ("Under English law the contract is void.", {"GB-EAW"}),
    ("In Scotland, the Court of Session held...", {"GB-SCT"}),
    ("Selon le droit français et l'article 1240 du Code civil", {"FR"}),
    ("The GDPR applies across the European Union.", {"EU"}),
    ("Under UAE Federal Law No. 5 of 1985", {"AE"}),
    ("في لبنان، القانون رقم 81", {"LB"}),
    ("Nach deutschem Recht (BGB § 823)", {"DE"}),
    ("Washington, D.C. courts", {"US-DC"}),
]


@pytest.mark.parametrize(("text", "expected"), CASES)
def test_detect(text: str, expected: set[str]) -> None:
    assert detect_jurisdictions(text) == expected


def test_courts_and_citations_add_codes() -> None:
    assert detect_jurisdictions("See the case.", court_ids=["ca9", "texapp"]) == {"US-FED", "US-TX"}
    assert detect_jurisdictions("", citations=["9 Cal. 4th 738", "347 U.S. 483"]) == {
        "US-CA",
        "US-FED",
    }
    assert detect_jurisdictions("", citations=["W. Va. Code § 1"]) == {"US-WV"}


def test_normalise_declared() -> None:
    assert normalise_jurisdiction("US-CA") == {"US-CA"}
    assert normalise_jurisdiction("GB-EWS") == {"GB-EAW"}
    assert normalise_jurisdiction("England & Wales") == {"GB-EAW"}
    assert normalise_jurisdiction("fr") == {"FR"}
    assert normalise_jurisdiction("California / federal") == {"US-CA", "US-FED"}
    assert normalise_jurisdiction(None) == set()
    assert "US-TX" in CODES and "GB-EAW" in CODES


def test_compatible() -> None:
    assert compatible("US-CA", "US") and compatible("US", "US-FED")
    assert compatible("FR", "EU") and compatible("EU", "DE")
    assert compatible("US-FED", "US-NY") and compatible("US-CA", "US-FED")
    assert not compatible("US-CA", "US-NY")
    assert not compatible("GB-EAW", "US")


def test_mismatch_when_answer_applies_another_system() -> None:
    f = jurisdiction_mismatch(
        "Under French law, is the clause valid?",
        "Under California law, Cal. Civ. Code § 1668 voids it.",
        None,
    )
    assert f.expected == ["FR"] and f.expected_source == "prompt"
    assert f.mismatch is True
    assert "US-CA" in f.response_codes and "asked about FR" in f.message


def test_declared_wins_and_compatible_answer_is_fine() -> None:
    f = jurisdiction_mismatch(
        "Can my landlord keep my deposit?",
        "Under California law the deposit must be returned.",
        "US-CA",
    )
    assert f.expected == ["US-CA"] and f.expected_source == "declared"
    assert f.mismatch is False and f.unaddressed is False


def test_unaddressed_and_foreign_extras() -> None:
    f = jurisdiction_mismatch("Under French law?", "It depends on the contract.", None)
    assert f.unaddressed is True and f.mismatch is False
    f = jurisdiction_mismatch(
        "Under French law?", "Under French law and the GDPR (EU), and in New York...", None
    )
    assert f.mismatch is False and f.foreign == ["US-NY"]


def test_no_expectation_no_finding() -> None:
    f = jurisdiction_mismatch("Is this legal?", "Under Texas law it is.", None)
    assert f.expected == [] and f.mismatch is False and f.message == ""


def test_a_declared_name_becomes_its_code_and_an_unknown_one_none() -> None:
    # Issue 33: `jurisdiction: "California"` was accepted without a word.
    assert declared_codes("California") == "US-CA"
    assert declared_codes("England and Wales") == "GB-EAW"
    assert declared_codes("France; US-NY") == "FR, US-NY"
    # Codes and aliases stay exactly as written (no spurious rewrite).
    assert declared_codes("GB-EWS") == "GB-EWS"
    assert declared_codes("US-CA,US-NY") == "US-CA,US-NY"
    assert declared_codes("fr") == "fr"
    assert declared_codes("Narnia") is None
    assert declared_codes("US-CA, Narnia") is None
    listed = known_codes()
    assert "US-FED" in listed and "GB-EAW" in listed and "US-XX" in listed
    assert "US-TX" not in listed  # the states are summarised, not listed one by one
