"""UK neutral citations, ECLI, CELEX, EU acts, Law No. (English/Arabic), French articles, pourvois."""

from __future__ import annotations

import pytest

from legal_judge.checks.citations import check_citations

from ._support import TODAY


def _only(text: str):  # noqa: ANN202 - test helper
    findings = check_citations(text, today=TODAY).findings
    assert len(findings) == 1, [f.text for f in findings]
    return findings[0]


INVALID = [
    ("uk_neutral", "uk_court_year", "[1850] UKSC 1"),
    ("uk_neutral", "uk_court_year", "[2005] UKSC 12"),
    ("uk_neutral", "uk_court_year", "[2015] UKHL 3"),
    ("uk_neutral", "uk_division_year", "[2023] EWHC 123 (QB)"),
    ("uk_neutral", "uk_division_year", "[2019] EWHC 55 (KB)"),
    ("uk_neutral", "uk_division", "[2020] EWCA 5"),
    ("uk_neutral", "uk_division", "[2020] EWHC 5"),
    ("uk_neutral", "future_year", "[2031] EWCA Civ 5"),
    ("ecli", "ecli_eu_court", "ECLI:EU:X:2014:317"),
    ("ecli", "ecli_syntax", "ECLI:EU:C:14:317"),
    ("ecli", "ecli_syntax", "ECLI:eu:c:2014:317"),
    ("ecli", "ecli_eu_year", "ECLI:EU:T:1985:12"),
    ("ecli", "ecli_eu_year", "ECLI:EU:F:2019:12"),
    ("ecli", "future_year", "ECLI:EU:C:2031:1"),
    ("celex", "future_year", "CELEX 32031R0001"),
    ("eu_act", "eu_act_label", "Regulation (EC) 2016/679"),
    ("eu_act", "eu_act_label", "Regulation (EU) No 1049/2001"),
    ("law_no", "law_no_year", "UAE Federal Law No. 7 of 1965"),
    ("law_no", "law_no_year", "مرسوم بقانون اتحادي رقم (5) لسنة 1960"),
    ("law_no", "future_year", "Lebanese Law No. 12 of 2031"),
    ("pourvoi", "pourvoi_year", "Cass. soc., 5 janvier 2015, n° 19-12.345"),
]


@pytest.mark.parametrize(("kind", "rule", "text"), INVALID)
def test_invalid_foreign_citations(kind: str, rule: str, text: str) -> None:
    finding = _only(text)
    assert finding.kind == kind
    assert finding.status == "invalid"
    assert rule in {h.rule for h in finding.reasons}


VALID = [
    ("uk_neutral", "[1932] UKHL 100", "[1932] UKHL 100"),
    ("uk_neutral", "[2009] UKSC 1", "[2009] UKSC 1"),
    ("uk_neutral", "[2020] EWCA Crim 12", "[2020] EWCA Crim 12"),
    ("uk_neutral", "[2021] EWHC 2 (QB)", "[2021] EWHC 2 (QB)"),
    ("uk_neutral", "[2020] UKUT 123 (IAC)", "[2020] UKUT 123 (IAC)"),
    ("ecli", "ECLI:EU:C:2014:317.", "ECLI:EU:C:2014:317"),
    (
        "ecli",
        "ECLI:DE:BVERFG:2020:RK20200501.1BVR099620",
        "ECLI:DE:BVERFG:2020:RK20200501.1BVR099620",
    ),
    ("celex", "CELEX 62012CJ0131", "62012CJ0131"),
    ("eu_act", "Regulation (EC) No 1049/2001", "Regulation (EC) No 1049/2001"),
    ("eu_act", "Directive (EU) 2019/790", "Directive (EU) 2019/790"),
    ("law_no", "Federal Law No. 5 of 1985 (UAE Civil Transactions Law)", "AE Law No. 5 of 1985"),
    ("law_no", "القانون رقم ٨١ تاريخ 10/10/2018 (لبنان)", "LB Law No. 81 of 2018"),
    ("law_no", "مرسوم اشتراعي رقم 112 لسنة 1959", "LB Law No. 112 of 1959"),
    ("fr_code", "article L. 1234-5 du Code du travail", "art. L. 1234-5 C. du travail"),
    ("fr_code", "l'article 1240 du Code civil", "art. 1240 C. civil"),
    ("pourvoi", "Cass. civ. 1re, 3 mai 2018, n° 17-12.345", "n° 17-12.345"),
]


@pytest.mark.parametrize(("kind", "text", "normalized"), VALID)
def test_valid_foreign_citations(kind: str, text: str, normalized: str) -> None:
    finding = _only(text)
    assert finding.kind == kind
    assert finding.status == "unverifiable", finding.reasons
    assert finding.normalized == normalized


SUSPICIOUS = [
    ("fr_code_name", "article 12 du Code de la sorcellerie"),
    ("fr_article", "article 9999 du Code civil"),
    ("eu_act_number", "Regulation (EU) No 5/2016"),
    ("ecli_country", "ECLI:ZZ:ABC:2020:1"),
    ("pourvoi_format", "Cass. civ. 2e, 3 mai 2018, n° 171-2345"),
]


@pytest.mark.parametrize(("rule", "text"), SUSPICIOUS)
def test_heuristic_foreign_rules_are_warnings(rule: str, text: str) -> None:
    finding = _only(text)
    assert finding.status == "suspicious"
    assert [h.rule for h in finding.reasons] == [rule]


def test_law_jurisdiction_takes_the_nearest_country_word() -> None:
    text = "UAE Federal Law No. 7 of 1985 differs from Lebanese Law No. 81 of 2018."
    assert [f.court for f in check_citations(text, today=TODAY).findings] == ["AE", "LB"]


def test_pourvoi_needs_court_context() -> None:
    assert check_citations("Référence produit n° 17-12.345.", today=TODAY).findings == []


def test_spans_point_into_the_original_text() -> None:
    text = "Voir\n\nECLI:EU:C:2014:317 et [2017]   UKSC 5."
    for f in check_citations(text, today=TODAY).findings:
        assert text[f.span[0] : f.span[1]].split() == f.text.split()
