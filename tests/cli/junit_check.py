"""Parse a JUnit file and check it against the common JUnit schema (``junit.xsd`` beside this file)."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

from lxml import etree

XSD = Path(__file__).with_name("junit.xsd")


def validated(path: Path) -> ET.Element:
    """The parsed document after the schema and the counts agree with its test cases."""
    schema = etree.XMLSchema(etree.parse(str(XSD)))
    doc = etree.parse(str(path))
    assert schema.validate(doc), schema.error_log
    root = ET.parse(path).getroot()
    suites = [root] if root.tag == "testsuite" else list(root)
    for suite in suites:
        cases = suite.findall("testcase")
        assert int(suite.get("tests", "-1")) == len(cases)
        assert int(suite.get("failures", "0")) == sum(1 for c in cases if c.find("failure") is not None)
        assert int(suite.get("skipped", "0")) == sum(1 for c in cases if c.find("skipped") is not None)
    return root


def cases(root: ET.Element) -> dict[str, ET.Element]:
    """Test cases by name."""
    return {c.get("name", ""): c for c in root.iter("testcase")}
