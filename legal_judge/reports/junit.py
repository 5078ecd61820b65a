"""JUnit XML of a :class:`~legal_judge.reports.ci.CiSuite`, in the common format CI systems read.

One ``<testsuites>`` root holding one ``<testsuite>``; each check is a ``<testcase>`` whose
``classname`` is ``legal_judge.<kind>``. A failed check carries ``<failure type="fail">``, an
inconclusive one ``<failure type="inconclusive">`` (CI must not show green for what nobody could
tell); the message is one line, the details are the element's text. Characters XML 1.0 cannot hold
(control characters from an untrusted answer) are replaced, so the file always parses.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from datetime import UTC, datetime
from pathlib import Path

from legal_judge.files import atomic_path
from legal_judge.reports.ci import CiSuite

__all__ = ["junit_xml", "write_junit"]

_NOT_XML = re.compile("[^\u0009\u000a\u000d\u0020-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


def _clean(text: str) -> str:
    return _NOT_XML.sub("\ufffd", text)


def junit_xml(suite: CiSuite, *, timestamp: datetime | None = None) -> str:
    """The JUnit XML document of ``suite`` (UTF-8 text with an XML declaration)."""
    counts = suite.counts
    failures = counts["failed"] + counts["inconclusive"]
    total_time = sum(c.time_s for c in suite.cases)
    stamp = (timestamp or datetime.now(UTC)).strftime("%Y-%m-%dT%H:%M:%S")
    common = {"tests": str(len(suite.cases)), "failures": str(failures), "errors": "0",
              "skipped": str(counts["skipped"]), "time": f"{total_time:.3f}"}
    root = ET.Element("testsuites", {"name": _clean(suite.name), **common})
    node = ET.SubElement(root, "testsuite", {"name": _clean(suite.name), **common,
                                             "timestamp": stamp})
    props = ET.SubElement(node, "properties")
    for key, value in suite.facts:
        ET.SubElement(props, "property", {"name": _clean(key), "value": _clean(value)})
    for i, note in enumerate(suite.notes):
        ET.SubElement(props, "property", {"name": f"note.{i + 1}", "value": _clean(note)})
    for case in suite.cases:
        el = ET.SubElement(node, "testcase", {"name": _clean(case.name),
                                              "classname": f"legal_judge.{suite.kind}",
                                              "time": f"{case.time_s:.3f}"})
        if case.outcome in ("failed", "inconclusive"):
            kind = "fail" if case.outcome == "failed" else "inconclusive"
            failure = ET.SubElement(el, "failure", {"message": _clean(case.message), "type": kind})
            failure.text = _clean(case.details or case.message)
        elif case.outcome == "skipped":
            ET.SubElement(el, "skipped", {"message": _clean(case.message)})
        elif case.details:
            ET.SubElement(el, "system-out").text = _clean(case.details)
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"


def write_junit(suite: CiSuite, path: Path) -> Path:
    """Write the JUnit file atomically (CI never reads half a file)."""
    text = junit_xml(suite)
    path.parent.mkdir(parents=True, exist_ok=True)
    with atomic_path(path) as tmp:
        tmp.write_text(text, encoding="utf-8")
    return path
