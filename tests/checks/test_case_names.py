"""The case name shown beside a citation is that citation's own, as written; unsure, none.

eyecite's names are not shown as they come: it drops the lower-case words of a plaintiff
("District  Columbia v. Heller"), stops a defendant at its first lower-case word ("Austin" for
"University of Tex. at Austin"), keeps signals ("Compare Smith") and gives one sentence's name
to every citation in it. The name is read from the text written right before the citation.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
import yaml

from legal_judge.checks.citations import check_citations

from ._support import MATA_TEXT, TODAY

DATA = Path(__file__).parent / "data"

# (text, the name shown beside the first case citation, or None)
NAMES = [
    ("Under 42 U.S.C. § 2000e-2(a)(1) and Brown v. Board of Education, 347 U.S. 483 (1954).",
     "Brown v. Board of Education"),
    ("The court applied Brown. See also Matter of Jones, 150 A.D.3d 1234 (2d Dep't 2017).",
     "Matter of Jones"),
    ("The court applied Brown. See 150 A.D.3d 1234 (2d Dep't 2017).", None),
    ("In the leading case, 150 A.D.3d 1234 (2d Dep't 2017).", None),
    ("See 123 U.S. 99999 and Varghese v. China Southern Airlines Co., 925 F.3d 1339 "
     "(11th Cir. 2019).", None),
    ("District of Columbia v. Heller, 554 U.S. 570 (2008).", "District of Columbia v. Heller"),
    ("Fisher v. University of Tex. at Austin, 631 F. 3d 213 (CA5 2011).",
     "Fisher v. University of Tex. at Austin"),
    ("United States ex rel. Smith v. Jones, 100 F.3d 1 (2d Cir. 1999).",
     "United States ex rel. Smith v. Jones"),
    ("Compare Smith v. Jones, 100 F.3d 1 (2d Cir. 1999), with Doe v. Roe, 200 F.3d 5 "
     "(2d Cir. 2000).", "Smith v. Jones"),
    ("as held by the Court in Smith v. Jones, 100 F.3d 1 (2d Cir. 1999).", "Smith v. Jones"),
    ("Title VII and Brown v. Board of Education, 347 U.S. 483 (1954).",
     "Brown v. Board of Education"),
    ("It says so. In re Inc. of Caritas Vill. v. Fuhrmeister, 152 So. 3d 1238 (Ala. 2014).",
     "In re Inc. of Caritas Vill. v. Fuhrmeister"),
    ("Martinez v. Delta Airlines, Inc., 2019 WL 4639462 (Tex. App. Sept. 25, 2019).",
     "Martinez v. Delta Airlines, Inc."),
    ("However, Ex Parte Young , 209 U.S. 123 (1908).", "Ex Parte Young"),
    ("FDA v. All. for Hippocratic Med. , 602 U.S. 367 (2024).",
     "FDA v. All. for Hippocratic Med."),
    ("The leading standard comes from *BDO Seidman v. Hirshberg*, 93 N.Y.2d 382 (1999).",
     "BDO Seidman v. Hirshberg"),
    ("the rule of Smith v. Jones. Doe, 100 F.3d 1 (2d Cir. 1999).", None),
    ("Smith v. Jones, 12 Foo. Rptr. 345 (2d Cir. 2001).", "Smith v. Jones"),
    ("Texaco, Inc. v. Pennzoil, Co., 729 S.W.2d 768 (Tex. App. 1987).",
     "Texaco, Inc. v. Pennzoil, Co."),
    ("Meritor Savings Bank, FSB v. Vinson, 477 U.S. 57 (1986).",
     "Meritor Savings Bank, FSB v. Vinson"),
    # Where the plaintiff starts cannot be told: not "Community Schools v. Seattle ...".
    ("Parents Involved in Community Schools v. Seattle School Dist. No. 1, 551 U. S. 701 (2007).",
     None),
    ("as Justice Kennedy wrote in Smith v. Jones, 100 F.3d 1 (2d Cir. 1999).", "Smith v. Jones"),
    ("as noted by Justice Kennedy in Smith v. Jones, 100 F.3d 1 (2d Cir. 1999).", None),
    ("(Cochran v. Schwan's Home Service, Inc. (2014) 228 Cal.App.4th 1137).",
     "Cochran v. Schwan's Home Service, Inc."),
]


@pytest.mark.parametrize(("text", "name"), NAMES, ids=[n[0][:60] for n in NAMES])
def test_case_name_is_the_citations_own(text: str, name: str | None) -> None:
    report = check_citations(text, today=TODAY)
    first = next(f for f in report.findings if f.kind == "case")
    assert first.case_name == name


def test_every_case_of_a_string_cite_gets_its_own_name() -> None:
    text = ("See 123 U.S. 99999 and Varghese v. China Southern Airlines Co., 925 F.3d 1339 "
            "(11th Cir. 2019). Under 42 U.S.C. § 2000e-2(a)(1) and Brown v. Board of Education, "
            "347 U.S. 483 (1954), and Matter of Jones, 150 A.D.3d 1234 (2d Dep't 2017).")
    names = [(f.normalized, f.case_name) for f in check_citations(text, today=TODAY).findings
             if f.kind == "case"]
    assert names == [("123 U.S. 99999", None),
                     ("925 F.3d 1339", "Varghese v. China Southern Airlines Co."),
                     ("347 U.S. 483", "Brown v. Board of Education"),
                     ("150 A.D.3d 1234", "Matter of Jones")]


def _squash(text: str) -> str:
    return " ".join(text.split())


def _texts() -> list[tuple[str, str]]:
    docs = yaml.safe_load((DATA / "real_opinions.yaml").read_text(encoding="utf-8"))["documents"]
    texts = [(d["file"], (DATA / d["file"]).read_text(encoding="utf-8")) for d in docs]
    groups = yaml.safe_load((DATA / "real_citations.yaml").read_text(encoding="utf-8"))["groups"]
    texts += [(c, c) for g in groups for c in g["cites"]]
    cases = yaml.safe_load((DATA / "impossible_citations.yaml").read_text(encoding="utf-8"))
    texts += [(c["cite"], c["cite"]) for c in cases["cases"]]
    return [*texts, ("mata", MATA_TEXT)]


def _name_precedes(text: str, start: int, name: str) -> bool:
    """``name`` is written right before offset ``start``: only a comma, spaces, a California
    year "(2014)" or markdown emphasis between them, and no letter glued to its left."""
    before = _squash(text[:start])
    m = re.search(r"[*_]*\s*,?\s*(?:\(\d{4}\)\s*)?$", before)
    head = before[: m.start() if m else len(before)].rstrip("*_ ")
    return head.endswith(name) and not head[: -len(name)][-1:].isalnum()


def test_every_name_shown_in_the_corpus_is_written_right_before_its_citation() -> None:
    """A cheap, strict check of the rule over every text of the corpora."""
    wrong: list[tuple[str, str, str]] = []
    named = 0
    for source, text in _texts():
        findings: list[Any] = check_citations(text, today=TODAY).findings
        for f in findings:
            if not f.case_name:
                continue
            named += 1
            # A parallel citation ("347 U.S. 483, 74 S. Ct. 686") shares its first one's name.
            head = findings[f.parallel_to] if f.parallel_to is not None else f
            if not _name_precedes(text, head.span[0], _squash(f.case_name)):
                wrong.append((source[:50], f.normalized, f.case_name))
    assert wrong == []
    assert named >= 250  # the rule is not met by showing no names at all
