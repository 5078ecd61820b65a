"""The CI suite of ``calibrate validate``: one JUnit case per rubric verdict, the policy as facts."""

from __future__ import annotations

from typing import Any

from legal_judge.reports.ci import CiCase, CiSuite

__all__ = ["validation_suite"]

_OUTCOME = {"better": "passed", "not worse": "passed", "worse": "failed",
            "cannot tell": "inconclusive"}


def _case(row: dict[str, Any]) -> CiCase:
    need = row.get("items_needed")
    message = f"{row['verdict']}: {row['reason']}"
    if row["verdict"] == "cannot tell" and need is not None:
        message += f"; about {need} more labelled items would be needed"
    cand, inc = row["candidate"], row["incumbent"]
    details = [f"agreement with the lawyers: candidate {cand['agreement']['value']}, "
               f"incumbent {inc['agreement']['value']} (n = {row['n']})",
               f"may gate: {'yes' if row.get('may_gate') else 'no'} ({row.get('gate_reason')})"]
    if cand.get("false_pass"):
        details.append(f"false passes: candidate {cand['false_pass']['k']}/"
                       f"{cand['false_pass']['n']}, incumbent {inc['false_pass']['k']}/"
                       f"{inc['false_pass']['n']}")
    return CiCase(f"rubric {row['rubric']}", _OUTCOME[row["verdict"]],  # type: ignore[arg-type]
                  message, "\n".join(details))


def validation_suite(report: dict[str, Any], policy_facts: list[tuple[str, str]]) -> CiSuite:
    """A case per rubric (pass/fail first): ``worse`` fails, ``cannot tell`` is inconclusive."""
    title = (f"legal-judge calibrate validate {report['candidate']['spec']} against "
             f"{report['incumbent']['spec']}")
    facts = [("verdict", report["verdict"]), ("headline", report["headline"]),
             ("candidate judge_id", str(report["candidate"]["judge_id"])),
             ("incumbent judge_id", str(report["incumbent"]["judge_id"])),
             ("labelled items", str(report["n_items"])),
             ("validation id", report["validation_id"]), *policy_facts]
    return CiSuite(kind="validation", name=title, title=title,
                   cases=[_case(r) for r in report["rubrics"]], facts=facts,
                   notes=list(report.get("notes") or []))
