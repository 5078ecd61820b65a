"""Issue 32, items 3 and 4: every closed range is dated and sourced, `check --about` prints the
dates, and citations a court order exposed as fabricated are known offline."""

from __future__ import annotations

import copy
import json

import pytest
from click.testing import CliRunner

from legal_judge.checks.citations import check_citations
from legal_judge.checks.designators import undated_ranges
from legal_judge.checks.fabrications import known_fabrications
from legal_judge.checks.rules_data import load_rules
from legal_judge.commands.check import check

from ._support import TODAY


def test_every_closed_range_has_as_of_and_source() -> None:
    assert undated_ranges(load_rules().data) == []


@pytest.mark.parametrize(("table", "key", "where"), [
    ("federal_rules", "as_of", "federal_rules.Civ. P."),
    ("us_const", "source", "us_const"),
    ("eu_instruments", "as_of", "eu_instruments.GDPR"),
    ("uk_neutral", "source", "uk_neutral.courts"),
])
def test_a_range_without_its_date_or_source_is_reported(table: str, key: str, where: str) -> None:
    data = copy.deepcopy(load_rules().data)
    node = data[table]
    first = next(iter(node.values())) if table in {"federal_rules", "eu_instruments"} else node
    del first[key]
    assert where in undated_ranges(data)


def test_federal_rules_are_at_their_current_numbering() -> None:
    rules = load_rules().get("federal_rules")
    assert {k: (v["min"], v["max"]) for k, v in rules.items()} == {
        "Civ. P.": (1, 87), "Crim. P.": (1, 62), "App. P.": (1, 48), "Evid.": (101, 1103),
        "Bankr. P.": (1001, 9038)}


def test_check_about_prints_every_tables_date_and_source() -> None:
    runner = CliRunner()
    result = runner.invoke(check, ["--about", "--json"])
    assert result.exit_code == 0, result.output
    info = json.loads(result.output)
    assert info["rules_version"] == 3
    tables = {t["table"]: t for t in info["tables"]}
    assert tables["federal_rules: Civ. P."]["as_of"] == "2025-12-01"
    assert "Rule 87" in tables["federal_rules: Civ. P."]["source"]
    assert tables["eu_instruments: GDPR"]["as_of"] and tables["uk_neutral"]["source"]
    assert any(name.startswith("known fabrications") for name in tables)
    assert all(t["as_of"] and t["source"] for t in info["tables"])
    plain = runner.invoke(check, ["--about"])
    assert plain.exit_code == 0 and "citation_rules.v3.yaml" in plain.output


def test_each_known_fabrication_names_its_order() -> None:
    table = known_fabrications()
    assert len(table) == 6
    assert {f.order for f in table.values()} == {
        "Mata v. Avianca, Inc., 678 F. Supp. 3d 443 (S.D.N.Y. 2023)"}


def test_a_known_fabrication_is_invalid_offline_with_the_order() -> None:
    [f] = check_citations("Varghese v. China South Airlines Ltd, 925 F.3d 1339 (11th Cir. 2019)",
                          today=TODAY).findings
    assert f.status == "invalid"
    assert f.reasons[-1].rule == "known_fabrication"
    assert f.reasons[-1].message.startswith(
        "identified as fabricated in Mata v. Avianca, Inc., 678 F. Supp. 3d 443 (S.D.N.Y. 2023)")


def test_a_known_fabrications_citation_without_a_name_is_only_suspicious() -> None:
    # 925 F.3d 1339 holds a real, different case: a bare citation may mean that one.
    [bare] = check_citations("See 925 F.3d 1339.", today=TODAY).findings
    assert bare.status == "suspicious" and "check which case" in bare.reasons[-1].message
    [other] = check_citations("Smith v. Jones, 925 F.3d 1339 (11th Cir. 2019).",
                              today=TODAY).findings
    assert other.status == "unverifiable"
