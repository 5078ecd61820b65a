"""Closed code lists (issue 19, item 3): a code name that is not one of California's 29 codes,
New York's consolidated laws or Texas's codes is `invalid`; every real one, in its usual
abbreviations, passes (a false `invalid` forces citation_quality = 0 on a correct answer)."""

from __future__ import annotations

import pytest

from legal_judge.checks.rules_data import load_rules
from legal_judge.checks.statute_regex import closed_code_hit

REAL = """N.Y. Not-for-Profit Corp. Law|N.Y. Fin. Serv. Law|N.Y. Ltd. Liab. Co. Law|
N.Y. Real Prop. Tax Law|N.Y. Alco. Bev. Cont. Law|N.Y. Arts & Cult. Aff. Law|N.Y. Soc. Serv. Law|
N.Y. Priv. Hous. Fin. Law|N.Y. Workers' Comp. Law|N.Y. Correct. Law|N.Y. Pub. Off. Law|
N.Y. Est. Powers & Trusts Law|N.Y. Bus. Corp. Law|N.Y. Envtl. Conserv. Law|N.Y. Mental Hyg. Law|
N.Y. Jud. Law|N.Y. Elec. Law|N.Y. Penal Law|N.Y. Gen. Mun. Law|N.Y. Veh. & Traf. Law|
N.Y. Dom. Rel. Law|N.Y. Civ. Rights Law|N.Y. Civ. Serv. Law|N.Y. Debt. & Cred. Law|
N.Y. Retire. & Soc. Sec. Law|N.Y. Racing Pari-Mut. Wag. & Breed. Law|N.Y. Tax Law|N.Y. Ins. Law|
N.Y. Educ. Law|N.Y. Exec. Law|N.Y. Lab. Law|N.Y. Pub. Health Law|N.Y. Pub. Auth. Law|
N.Y. Real Prop. Acts. Law|N.Y. Gen. Bus. Law|N.Y. Gen. Oblig. Law|N.Y. Crim. Proc. Law|
N.Y. U.C.C. Law|N.Y. Banking Law|N.Y. Transp. Law|N.Y. County Law|N.Y. Town Law|N.Y. Village Law|
N.Y. Lien Law|N.Y. Mil. Law|N.Y. Indian Law|N.Y. Legis. Law|N.Y. Pers. Prop. Law|
N.Y. Relig. Corp. Law|N.Y. Coop. Corp. Law|N.Y. Soc. Servs. Law|N.Y. Agric. & Mkts. Law|
N.Y. Energy Law|N.Y. Highway Law|N.Y. State Fin. Law|N.Y. Mult. Dwell. Law|N.Y. Pub. Serv. Law|
N.Y. P'ship Law|N.Y. Partnership Law|N.Y. Abandoned Prop. Law|N.Y. Cannabis Law|
N.Y. Econ. Dev. Law|N.Y. Gen. Constr. Law|N.Y. Gen. City Law|N.Y. Gen. Ass'ns Law|
N.Y. Mun. Home Rule Law|N.Y. Local Fin. Law|N.Y. Elder Law|N.Y. Pub. Hous. Law|N.Y. R.R. Law|
N.Y. Rapid Transit Law|N.Y. Transp. Corp. Law|N.Y. Navig. Law|N.Y. Parks Rec. & Hist. Preserv. Law|
N.Y. Second Class Cities Law|N.Y. Soil & Water Conserv. Dist. Law|N.Y. Benev. Orders Law|
Cal. U. Com. Code|Cal. Com. Code|Cal. Pub. Cont. Code|Cal. Fin. Code|Cal. Fish & G. Code|
Cal. Fish & Game Code|Cal. Pen. Code|Cal. Corp. Code|Cal. Elec. Code|Cal. Gov. Code|
Cal. Bus. & Prof. Code|Cal. Code Civ. Proc.|Cal. Civ. Proc. Code|Cal. Rev. & Tax. Code|
Cal. Sts. & High. Code|Cal. Harb. & Nav. Code|Cal. Mil. & Vet. Code|Cal. Unemp. Ins. Code|
Cal. Food & Agric. Code|Cal. Welf. & Inst. Code|Cal. Health & Safety Code|Cal. Pub. Util. Code|
Cal. Pub. Res. Code|Cal. Educ. Code|Cal. Evid. Code|Cal. Fam. Code|Cal. Ins. Code|Cal. Lab. Code|
Cal. Prob. Code|Cal. Veh. Code|Cal. Water Code|Cal. Civ. Code|Cal. Penal Code|Cal. Gov't Code|
Cal. Code Regs.|Cal. Admin. Code|Tex. Agric. Code|Tex. Alco. Bev. Code|Tex. Bus. & Com. Code|
Tex. Bus. Orgs. Code|Tex. Civ. Prac. & Rem. Code|Tex. Code Crim. Proc.|Tex. Educ. Code|
Tex. Educ. Code Ann.|Tex. Elec. Code|Tex. Est. Code|Tex. Fam. Code|Tex. Fin. Code|Tex. Gov't Code|
Tex. Health & Safety Code|Tex. Hum. Res. Code|Tex. Ins. Code|Tex. Lab. Code|Tex. Loc. Gov't Code|
Tex. Nat. Res. Code|Tex. Occ. Code|Tex. Parks & Wild. Code|Tex. Penal Code|Tex. Prop. Code|
Tex. Spec. Dist. Code|Tex. Tax Code|Tex. Transp. Code|Tex. Util. Code|Tex. Water Code|
Tex. Prob. Code|Tex. Admin. Code""".replace("\n", "").split("|")

MADE_UP = ["Cal. Wizardry Code", "Cal. Space Code", "Tex. Cryptocurrency Code",
           "Tex. Wizardry Code Ann.", "N.Y. Robotics Law", "N.Y. Dragon Law"]


@pytest.mark.parametrize("name", REAL)
def test_real_code_names_pass(name: str) -> None:
    assert closed_code_hit(name, load_rules()) is None


@pytest.mark.parametrize("name", MADE_UP)
def test_made_up_code_names_are_invalid(name: str) -> None:
    hit = closed_code_hit(name, load_rules())
    assert hit is not None and hit.severity == "error" and "closed list" in hit.message


def test_states_without_a_closed_list_are_not_judged() -> None:
    assert closed_code_hit("Fla. Wizardry Code", load_rules()) is None
