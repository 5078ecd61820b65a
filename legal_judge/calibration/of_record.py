"""The validation of record of a judge: what a gate asks before it relies on a changed judge.

A judge id's validation of record is its newest stored validation (``calibrate validate`` or
``calibrate align``). :func:`judges_lacking_validation` names each judge of an ensemble that has
none, or whose validation says it may not gate, or whose calibrations are older than the policy's
``[calibration] max_age_days``: a gate that requires validations (``[validation]
require_of_record``) prints these reasons and fails.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

from legal_judge.calibration.validation_schema import ValidationReport
from legal_judge.store import Store

__all__ = [
    "judges_lacking_validation",
    "overridden_validations",
    "validation_of_record",
    "validation_requirement",
]


def validation_of_record(store: Store, judge_id: str) -> ValidationReport | None:
    """The newest validation stored with ``judge_id``, or None."""
    data = store.validations.latest_of_judge(judge_id)
    return ValidationReport.model_validate(data) if data is not None else None


def judges_lacking_validation(store: Store, judge_ids: Mapping[str, str | None], *,
                              now: datetime | None = None) -> dict[str, str]:
    """Each judge (label -> judge_id) without a usable validation of record, with the reason.

    Args:
        store: The store holding the validations.
        judge_ids: The judges of an ensemble by label.
        now: The time to compare expiry dates with (default: now, UTC).
    """
    now = now or datetime.now(UTC)
    out = {}
    for label, judge_id in sorted(judge_ids.items()):
        report = validation_of_record(store, judge_id) if judge_id else None
        if report is None:
            out[label] = f"no validation of record for judge_id {judge_id}"
        elif report.verdict in ("worse", "cannot tell") or not report.allowed.may_gate:
            out[label] = (f"its validation {report.validation_id} says {report.verdict} and it "
                          f"may gate on {', '.join(report.allowed.may_gate) or 'nothing'}")
        elif report.allowed.expires_at and datetime.fromisoformat(
                report.allowed.expires_at) < now:
            out[label] = (f"its validation {report.validation_id} rests on a calibration older "
                          f"than the policy allows (expired {report.allowed.expires_at[:10]})")
    return out


def overridden_validations(store: Store, judge_ids: Mapping[str, str | None]) -> list[str]:
    """For each judge whose validation of record was decided under explicit policy overrides,
    one sentence naming them: a loosened validation is printed wherever it decides."""
    out = []
    for label, judge_id in sorted(judge_ids.items()):
        report = validation_of_record(store, judge_id) if judge_id else None
        if report is not None and report.override_lines:
            out.append(f"{label}'s validation {report.validation_id} was decided under "
                       + ", ".join(line.removeprefix("policy override: ")
                                   for line in report.override_lines))
    return out


def validation_requirement(store: Store, judge_ids: Mapping[str, str | None], *, required: bool,
                           now: datetime | None = None) -> dict[str, Any]:
    """The policy's ``[validation] require_of_record`` applied to an ensemble's judges.

    A requirement, not an endpoint: it is met only on positive evidence (every judge has a usable
    validation of record); when the policy does not require it, it is reported as not required.

    Args:
        store: The store holding the validations.
        judge_ids: The judges of the ensemble by label (a run's ``config.judge_ids``).
        required: Whether the policy requires it.
        now: The time to compare expiry dates with (default: now, UTC).

    Returns:
        ``{"name", "required", "met", "lacking": {label: reason}, "reason"}``.
    """
    name = "validation of record"
    if not required:
        return {"name": name, "required": False, "met": True, "lacking": {},
                "reason": "not required by the policy ([validation] require_of_record = false)"}
    if not judge_ids:
        return {"name": name, "required": True, "met": False, "lacking": {},
                "reason": "the run records no judge ids, so no validation can be checked"}
    lacking = judges_lacking_validation(store, judge_ids, now=now)
    if lacking:
        reason = (f"{len(lacking)} of {len(judge_ids)} judge(s) lack a usable validation of "
                  "record: " + ", ".join(lacking))
    else:
        reason = f"all {len(judge_ids)} judge(s) have a validation of record that lets them gate"
        reason += "".join(f"; {note}" for note in overridden_validations(store, judge_ids))
    return {"name": name, "required": True, "met": not lacking, "lacking": lacking,
            "reason": reason}
