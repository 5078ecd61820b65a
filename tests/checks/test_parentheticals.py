"""The year and court of a case citation come from its own parenthetical, never the next one's.

eyecite attaches the next parenthetical to a citation that has none ("See 123 U.S. 99999 and
Okafor v. China Southern Airlines Co., 925 F.3d 1339 (11th Cir. 2019)": its `extra` is
"and Okafor v. China Southern Airlines Co., 925 F.3d 1339"). A parenthetical with another
citation between it and this one belongs to that citation, unless that citation is a parallel
citation of this one (separated only by a comma and pin cites, sharing one parenthetical).
"""

from __future__ import annotations

from legal_judge.checks.citations import check_citations

from ._support import TODAY

OKAFOR = "Okafor v. China Southern Airlines Co."


def _by_cite(text: str) -> dict[str, object]:
    return {f.normalized: f for f in check_citations(text, today=TODAY).findings}


def test_a_bare_citation_does_not_take_the_next_citations_year_and_court() -> None:
    text = f"See 123 U.S. 99999 and {OKAFOR}, 925 F.3d 1339 (11th Cir. 2019)."
    report = check_citations(text, today=TODAY)
    bare, okafor = report.findings
    assert (bare.normalized, bare.year, bare.court) == ("123 U.S. 99999", None, None)
    # Only the true reason: the page is beyond any U.S. volume (not "reports only the Supreme
    # Court, not 11th Cir." nor "cannot hold a 2019 decision").
    assert bare.status == "suspicious"
    assert [h.rule for h in bare.reasons] == ["page_ceiling"]
    assert not report.forces_zero
    assert (okafor.year, okafor.court, okafor.case_name) == (2019, "ca11", OKAFOR)


def test_subsequent_history_keeps_its_parenthetical_to_itself() -> None:
    # "(2d Cir. 2000)" is the affirming court's; F. Supp. 2d was "invalid: reports trial courts".
    found = _by_cite("Smith v. Jones, 100 F. Supp. 2d 1, aff'd, 200 F.3d 5 (2d Cir. 2000).")
    trial, appeal = found["100 F. Supp. 2d 1"], found["200 F.3d 5"]
    assert (trial.status, trial.year, trial.court) == ("unverifiable", None, None)
    assert (appeal.year, appeal.court) == (2000, "ca2")


def test_a_citation_eyecite_does_not_know_also_owns_its_parenthetical() -> None:
    # The regex layer's unknown-reporter citation sits between: the parenthetical is its own.
    found = _by_cite("See 123 U.S. 99999 and Smith v. Jones, 12 Foo. Rptr. 345 (2d Cir. 2001).")
    assert (found["123 U.S. 99999"].year, found["123 U.S. 99999"].court) == (None, None)
    assert found["123 U.S. 99999"].status == "suspicious"
    assert found["12 Foo. Rptr. 345"].year == 2001


def test_parallel_citations_share_one_parenthetical() -> None:
    text = ("Brown v. Board of Education, 347 U.S. 483, 494, 74 S. Ct. 686, 98 L. Ed. 873 (1954).")
    findings = check_citations(text, today=TODAY).findings
    assert [(f.normalized, f.year, f.parallel_to) for f in findings] == [
        ("347 U.S. 483", 1954, None), ("74 S. Ct. 686", 1954, 0), ("98 L. Ed. 873", 1954, 0)]
    assert {f.case_name for f in findings} == {"Brown v. Board of Education"}
    assert {f.status for f in findings} == {"unverifiable"}


def test_two_cases_in_one_sentence_are_not_parallel() -> None:
    # eyecite gives both the same full span (and Brown's name and the 2017 year to both).
    text = ("Under 42 U.S.C. § 2000e-2(a)(1) and Brown v. Board of Education, 347 U.S. 483 "
            "(1954), and Matter of Jones, 150 A.D.3d 1234 (2d Dep't 2017).")
    found = _by_cite(text)
    brown, jones = found["347 U.S. 483"], found["150 A.D.3d 1234"]
    assert (brown.year, brown.parallel_to, brown.case_name) == (
        1954, None, "Brown v. Board of Education")
    assert (jones.year, jones.parallel_to, jones.case_name) == (2017, None, "Matter of Jones")


def test_the_sample_answers_string_cite_keeps_each_year() -> None:
    # The bundled sample item us-fed-003: the Illinois neutral cite showed "D.D.C., 2012".
    text = ("The court followed Haddad v. Egyptair, 2013 IL App (1st) 111279-U, and Lindqvist "
            "v. Iran Air, 905 F. Supp. 2d 121 (D.D.C. 2012), which reached the same result.")
    found = _by_cite(text)
    haddad, lindqvist = found["2013 IL App (1st) 111279-U"], found["905 F. Supp. 2d 121"]
    assert (haddad.year, haddad.court, haddad.case_name) == (None, None, "Haddad v. Egyptair")
    assert (lindqvist.year, lindqvist.court, lindqvist.case_name) == (2012, "dcd",
                                                                   "Lindqvist v. Iran Air")
