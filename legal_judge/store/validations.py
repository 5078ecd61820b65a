"""Judge-change validations kept with the candidate's judge id (table ``judge_validations``)."""

from __future__ import annotations

from typing import Any

from legal_judge.store.base import StoreBase
from legal_judge.store.documents import Documents

__all__ = ["Validations"]


class Validations:
    """The ``judge_validations`` table: ``store.validations`` (rows are only ever added)."""

    def __init__(self, base: StoreBase) -> None:
        """Queries on the store ``base``."""
        self._base = base
        self._reports = Documents(base, "judge_validations")

    def save(self, validation_id: str, *, judge_id: str | None, candidate: str,
             incumbent_judge_id: str | None, verdict: str, created_at: str,
             expires_at: str | None, report: dict[str, Any]) -> None:
        """Store one validation report (in the caller's transaction, if one is open)."""
        self._reports.add(report, id=validation_id, judge_id=judge_id, candidate=candidate,
                          incumbent_judge_id=incumbent_judge_id, verdict=verdict,
                          created_at=created_at, expires_at=expires_at)

    def report(self, validation_id: str) -> dict[str, Any] | None:
        """A validation's decoded report, or None."""
        return self._reports.of(validation_id)

    def latest_of_judge(self, judge_id: str) -> dict[str, Any] | None:
        """The newest validation report of a judge_id (the validation of record), or None."""
        return self._reports.latest("judge_id", judge_id)

    def rows(self, *, limit: int = 50) -> list[dict[str, Any]]:
        """The newest validations (without their reports), newest first."""
        rows = self._base.db.execute(
            "SELECT id, judge_id, candidate, incumbent_judge_id, verdict, created_at, expires_at "
            "FROM judge_validations ORDER BY created_at DESC, id DESC LIMIT ?", (limit,))
        return [dict(r) for r in rows]
