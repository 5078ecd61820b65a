"""Court parentheticals (issue 19, item 2): no standard form is unknown, and the intermediate
appellate courts resolve by department, district or division."""

from __future__ import annotations

import pytest

from legal_judge.checks.courts import resolve_court_ref
from legal_judge.checks.rules_data import load_rules

RESOLVES = [
    ("2d Dep't", "nyappdiv"), ("1st Dept", "nyappdiv"), ("3d Dept.", "nyappdiv"),
    ("App. Div.", "nyappdiv"), ("N.Y. App. Div. 2d Dep't", "nyappdiv"),
    ("App. Div. 1st Dep't", "nyappdiv"), ("Cal. Ct. App.", "calctapp"),
    ("Cal. Ct. App. 2d Dist.", "calctapp"), ("Tex. App.—Houston [14th Dist.]", "texapp"),
    ("Tex. App.-Dallas", "texapp"), ("Tex. App.—Corpus Christi", "texapp"),
    ("Ill. App. Ct.", "illappct"), ("Ill. App. 1st Dist.", "illappct"),
    ("Fla. 4th DCA", "fladistctapp"), ("Fla. 1st DCA", "fladistctapp"),
    ("Fla. Dist. Ct. App.", "fladistctapp"), ("La. Ct. App. 4th Cir.", "lactapp"),
    ("Ariz. Ct. App. Div. 1", "arizctapp"), ("Ohio Ct. App. 8th Dist.", "ohioctapp"),
    ("N.J. Super. Ct. App. Div.", "njsuperctappdiv"), ("N.Y. Sup. Ct. N.Y. Cnty.", "nysupct"),
    ("Ky.", "ky"), ("2d Cir.", "ca2"), ("CA4", "ca4"), ("WD Tex.", "txwd"), ("D. Md.", "mdd"),
    ("M.D. Pa.", "pamd"), ("B.A.P. 9th Cir.", "bap9"), ("BIA", "bia"),
]


@pytest.mark.parametrize(("text", "court_id"), RESOLVES)
def test_court_resolves(text: str, court_id: str) -> None:
    assert resolve_court_ref(text, load_rules()).id == court_id


_COURT_FORMS = ["", " Ct. App.", " App.", " Super. Ct.", " Dist. Ct.", " Ch.", " Cir. Ct.",
                " Fam. Ct.", " Prob. Ct.", " Crim. App.", " Civ. App.", " Sup. Ct.", " Ct. Cl.",
                " Tax Ct.", " Juv. Ct.", " Mun. Ct.", " Cnty. Ct.", " Ct. Com. Pl.", " Commw. Ct.",
                " Land Ct.", " Workers' Comp. App. Bd."]


def test_every_state_court_shape_is_known() -> None:
    rules = load_rules()
    forms = [s + f for s in rules.get("state_abbreviations") for f in _COURT_FORMS]
    assert [f for f in forms if not resolve_court_ref(f, rules).known] == []


@pytest.mark.parametrize("text", ["Wakanda Dist. Ct.", "Wakanda Cnty. Ct.", "13th Cir.", "Narnia"])
def test_made_up_courts_stay_unknown(text: str) -> None:
    assert not resolve_court_ref(text, load_rules()).known
