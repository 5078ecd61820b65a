"""Every example in issue 19's "Why", with the status it must get and the text it must show."""

from __future__ import annotations

import pytest

from legal_judge.checks.citations import check_citations

from ._support import TODAY

# (text, expected findings as (status, shown citation text), a phrase the reasons must contain)
WHY = [
    ("42 U.S.C. § 2000e-2(a)(1)", [("unverifiable", "42 U.S.C. § 2000e-2(a)(1)")], None),
    ("28 U.S.C. § 1332.", [("unverifiable", "28 U.S.C. § 1332")], None),
    ("Matter of Jones, 150 A.D.3d 1234 (2d Dep't 2017)", [("unverifiable", "150 A.D.3d 1234")],
     None),
    ("Smith v. Jones, 150 A.D.3d 1234 (1st Dept 2017)", [("unverifiable", "150 A.D.3d 1234")], None),
    ("123 U.S. 99999", [("suspicious", "123 U.S. 99999")], "far beyond any U.S. volume"),
    ("999 U.S. 1 (2020)", [("invalid", "999 U.S. 1")], "cannot exist yet"),
    ("Fed. R. Civ. P. 12(b)(6)", [("unverifiable", "Fed. R. Civ. P. 12(b)(6)")], None),
    ("Pub. L. No. 95-555, 92 Stat. 2076.",
     [("unverifiable", "Pub. L. No. 95-555"), ("unverifiable", "92 Stat. 2076")], None),
    ("Smith v. Jones, 700 F. Supp. 100 (S.D.N.Y. 1990)", [("unverifiable", "700 F. Supp. 100")],
     "published 1932-1998"),
    ("Smith v. Jones, 200 S.W.2d 100 (Ky. 1950)", [("unverifiable", "200 S.W.2d 100")],
     "may have had another name"),
    ("Smith v. Jones, 200 A.2d 100 (Del. 1940)", [("unverifiable", "200 A.2d 100")], None),
    ("Smith v. Jones, 40 Haw. 100 (Haw. 1950)", [("unverifiable", "40 Haw. 100")], None),
    ("Smith v. Jones, 9 Ariz. 100 (Ariz. 1905)", [("unverifiable", "9 Ariz. 100")], None),
    ("Smith v. Jones, 800 So. 2d 100 (Fla. 4th DCA 2001)", [("unverifiable", "800 So. 2d 100")],
     None),
    ("KRS 186.020(1)", [("unverifiable", "KRS 186.020(1)")], None),
    ("G.S. 15A-1340.14", [("unverifiable", "G.S. 15A-1340.14")], None),
    ("O.C.G.A. § 16-13-30", [("unverifiable", "O.C.G.A. § 16-13-30")], None),
    ("21 O.S. § 1283", [("unverifiable", "21 O.S. § 1283")], None),
    ("ALA. CODE § 13A-5-40(a)", [("unverifiable", "ALA. CODE § 13A-5-40(a)")], None),
    ("Ala. Code § 13A-5-40(a)", [("unverifiable", "Ala. Code § 13A-5-40(a)")], None),
    ("N.C. Const. art. I, § 19", [("unverifiable", "N.C. Const. art. I, § 19")], None),
    ("1999 N.C. Sess. Laws 237", [("unverifiable", "1999 N.C. Sess. Laws 237")], None),
    ("1978 U.S.C.C.A.N. 4749", [("unverifiable", "1978 U.S.C.C.A.N. 4749")], None),
    ("H.R. Rep. No. 95-948, at 2 (1978)", [("unverifiable", "H.R. Rep. No. 95-948")], None),
    ("Smith v. Jones, 12 Foo. Rptr. 345 (2d Cir. 2001)", [("suspicious", "12 Foo. Rptr. 345")],
     "in no reporter database"),
    ("Cal. Wizardry Code § 12", [("invalid", "Cal. Wizardry Code § 12")], "closed list"),
    ("N.Y. Gen. Oblig. Law § 7-108(1-a)", [("unverifiable", "N.Y. Gen. Oblig. Law § 7-108(1-a)")],
     None),
    ("Cal. Lab. Code § 2802", [("unverifiable", "Cal. Lab. Code § 2802")], None),
    ("42 U.S.C. §§ 1981-1988", [("unverifiable", "42 U.S.C. §§ 1981-1988")], None),
    ("42 U.S.C. § 12112(b)(5)(A)", [("unverifiable", "42 U.S.C. § 12112(b)(5)(A)")], None),
    ("Fed. R. Evid. 803(6)", [("unverifiable", "Fed. R. Evid. 803(6)")], None),
    ("Doe v. Roe, 100 S.W.3d 200 (Tex. App.—Houston [14th Dist.] 2003, pet. denied)",
     [("unverifiable", "100 S.W.3d 200")], None),
    ("People v. X, 100 Ill. App. 3d 200 (Ill. App. Ct. 1981)", [("unverifiable", "100 Ill. App. 3d 200")],
     None),
    ("People v. X, 100 Cal. App. 4th 200 (Cal. Ct. App. 2002)",
     [("unverifiable", "100 Cal. App. 4th 200")], None),
    ("People v. X, 100 A.D.2d 200 (App. Div. 1984)", [("unverifiable", "100 A.D.2d 200")], None),
]


@pytest.mark.parametrize(("text", "expected", "phrase"), WHY, ids=[w[0] for w in WHY])
def test_why_example(text: str, expected: list[tuple[str, str]], phrase: str | None) -> None:
    report = check_citations(text, today=TODAY)
    assert [(f.status, f.text) for f in report.findings] == expected
    if phrase:
        assert phrase in " ".join(h.message for f in report.findings for h in f.reasons)
    for f in report.findings:
        if f.status == "unverifiable":
            assert f.verify, "an unverifiable row says what would verify it"


def test_star_page_marker_takes_no_year_and_is_not_a_citation() -> None:
    text = ("the court held [512 F.Supp.3d 104] that the claim failed. Doe v. Roe, 600 F.3d 1 "
            "(2d Cir. 2010).")
    report = check_citations(text, today=TODAY)
    assert [(f.normalized, f.year) for f in report.findings] == [("600 F.3d 1", 2010)]


def test_varghese_and_brown_print_differently_offline() -> None:
    report = check_citations(
        "Okafor v. China Southern Airlines Co., 925 F.3d 1339 (11th Cir. 2019). "
        "Brown v. Board of Education, 347 U.S. 483 (1954).", today=TODAY)
    varghese, brown = report.findings
    assert varghese.case_name == "Okafor v. China Southern Airlines Co."
    assert brown.case_name == "Brown v. Board of Education"
    assert (varghese.year, brown.year) == (2019, 1954)
    assert varghese.court_name and "Eleventh Circuit" in varghese.court_name
    assert brown.court_name == "Supreme Court of the United States"
    assert varghese.verify == brown.verify == (
        "existence not checked offline: run with --lookup (CourtListener)")


@pytest.mark.parametrize(("text", "expected"), [
    ("Title VII: 42 U.S.C. § 2000e-2(a)(1) and 28 U.S.C. § 1332.",
     ["42 U.S.C. § 2000e-2(a)(1)", "28 U.S.C. § 1332"]),
    ("O.C.G.A. § 16-13-30 and 42 U.S.C. § 1983.", ["O.C.G.A. § 16-13-30", "42 U.S.C. § 1983"]),
    ("21 O.S. § 1283 and 42 U.S.C. § 1983.", ["21 O.S. § 1283", "42 U.S.C. § 1983"]),
    ("Cal. Lab. Code § 2802, 29 U.S.C. § 207(a)(1).",
     ["Cal. Lab. Code § 2802", "29 U.S.C. § 207(a)(1)"]),
])
def test_a_section_list_stops_before_the_next_citations_title(
        text: str, expected: list[str]) -> None:
    # "§ 2000e-2(a)(1) and 28" was read as a list of two sections, overlapped 28 U.S.C. § 1332
    # and was dropped: Title VII was "not detected at all" again, beside another statute.
    assert [f.text for f in check_citations(text, today=TODAY).findings] == expected
