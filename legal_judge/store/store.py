"""The :class:`Store`: one connection to the store with every table's queries.

The tables of the core run (runs, items, calls, verdicts, results, caches, outbox, owners) are
methods of the store itself; the tables of audits, calibrations, labels, batches and debias
experiments are repositories it exposes (``store.audits``, ``store.audit_log``,
``store.calibrations``, ``store.labels``, ``store.batches``, ``store.debias_experiments``,
``store.run_estimates``, ``store.escalations``). All of them
share the store's connection, lock and transactions, so a caller writes several tables all or
nothing inside one ``with store.transaction():``.
"""

from __future__ import annotations

from pathlib import Path

from legal_judge.store.audits import AuditLogRows, Audits
from legal_judge.store.calibrations import Calibrations
from legal_judge.store.connection import BUSY_TIMEOUT_S
from legal_judge.store.escalations import Escalations
from legal_judge.store.estimates import RunEstimates
from legal_judge.store.labels import Labels
from legal_judge.store.outbox import OutboxMixin
from legal_judge.store.records import Batches, DebiasExperiments
from legal_judge.store.results import ResultsMixin
from legal_judge.store.runs import RunsMixin
from legal_judge.store.validations import Validations

__all__ = ["Store"]


class Store(RunsMixin, ResultsMixin, OutboxMixin):
    """A connection to the store: the only place that talks SQL."""

    def __init__(self, path: Path | str | None = None, *,
                 timeout_s: float = BUSY_TIMEOUT_S) -> None:
        """Open the store as :class:`~legal_judge.store.base.StoreBase` does, with each table group's queries attached."""
        super().__init__(path, timeout_s=timeout_s)
        self.audits = Audits(self)
        self.audit_log = AuditLogRows(self)
        self.calibrations = Calibrations(self)
        self.labels = Labels(self)
        self.batches = Batches(self)
        self.debias_experiments = DebiasExperiments(self)
        self.run_estimates = RunEstimates(self)
        self.validations = Validations(self)
        self.escalations = Escalations(self)
