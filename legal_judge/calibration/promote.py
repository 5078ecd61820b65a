"""``calibrate promote``: a validated candidate goes to production only on positive evidence.

Refused (:class:`~legal_judge.errors.GateFailure`, exit 1) unless the validation's verdict is
``better`` or ``not worse`` on pass/fail and on every rubric of the rubric set's pass/fail rule
(the rubrics a gate decides on), each refusal with its reason. When Langfuse is configured and the
candidate came from ``calibrate align``, the judge prompt version labelled ``staging`` gets the
label ``production``.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from legal_judge.assets.catalogue import load_assets
from legal_judge.assets.rubrics import DEFAULT_RUBRIC_SET
from legal_judge.calibration.validate import PASS_FAIL_ROW
from legal_judge.calibration.validation_schema import ValidationReport
from legal_judge.errors import GateFailure, NotFoundError
from legal_judge.store import Store

__all__ = ["gated_rubrics", "promote", "push_candidate"]

_FIT = ("better", "not worse")


def gated_rubrics(rubric_set: str = DEFAULT_RUBRIC_SET) -> list[str]:
    """Pass/fail and the rubrics of the rubric set's pass/fail rule."""
    rset = load_assets().rubric_set(rubric_set)
    return [PASS_FAIL_ROW, *dict.fromkeys(c.rubric for c in rset.pass_fail.fail_if)]


def promote(store: Store, validation_id: str) -> list[str]:
    """Check the validation and promote its candidate; the lines to print.

    Raises:
        NotFoundError: no such validation.
        GateFailure: a gated rubric's verdict is ``worse`` or ``cannot tell`` (each named).
    """
    data = store.validations.report(validation_id)
    if data is None:
        raise NotFoundError(f"no validation '{validation_id}' in {store.path}",
                            fix="run `legal-judge calibrate validate` or `calibrate align` first")
    report = ValidationReport.model_validate(data)
    gated = gated_rubrics()
    refused = [f"{r.rubric}: {r.verdict} ({r.reason})" for r in report.rubrics
               if r.rubric in gated and r.verdict not in _FIT]
    missing = [g for g in gated if report.rubric(g) is None]
    if refused or missing:
        why = refused + [f"{g}: not validated (no lawyer labels)" for g in missing]
        raise GateFailure(f"promotion of {report.candidate.spec} (judge_id "
                          f"{report.candidate.judge_id}) to production refused: "
                          + "; ".join(why),
                          fix="keep the incumbent in production; label more items or change "
                              "the candidate, then validate again")
    # The policy the validation was decided under, and any override that changed it: a verdict
    # won under a loosened margin is printed with it wherever it decides.
    lines = [f"validation {validation_id} was decided under {report.policy_line}",
             *report.override_lines,
             f"{report.candidate.spec} (judge_id {report.candidate.judge_id}) may go to "
             f"production: {', '.join(f'{g} {report.rubric(g).verdict}' for g in gated)}"]  # type: ignore[union-attr]
    lines += _langfuse(report)
    return lines


def push_candidate(root: Path | str, *, label: str) -> list[dict[str, Any]]:
    """Push the prompts of a candidate folder to Langfuse with ``label`` (``prompts push``).

    The folder is put first on the assets search path for the push only: the judge prompt
    version that shows the lawyers' examples, and the rubric versions it references, get the
    label (``production`` labels the same content as ``staging``: nothing new is created).

    Raises:
        SyncError: Langfuse refused or was unreachable.
    """
    from legal_judge.sync.langfuse_prompts import push_prompts

    before = os.environ.get("LEGAL_JUDGE_ASSETS")
    os.environ["LEGAL_JUDGE_ASSETS"] = str(Path(root).resolve())
    try:
        return push_prompts(label=label)
    finally:
        if before is None:
            os.environ.pop("LEGAL_JUDGE_ASSETS", None)
        else:
            os.environ["LEGAL_JUDGE_ASSETS"] = before


def _langfuse(report: ValidationReport) -> list[str]:
    from legal_judge.sync.settings import configured

    prompt_dir = report.cross_fit.prompt_dir if report.cross_fit else None
    if prompt_dir is None:
        return []
    if not configured():
        return [f"Langfuse is not configured: use the candidate with LEGAL_JUDGE_ASSETS="
                f"{prompt_dir}"]
    rows = push_candidate(prompt_dir, label="production")
    return ["Langfuse: " + ", ".join(f"{r['name']} v{r['version']} {r['action']}" for r in rows
                                     if r["kind"] == "judge")]
