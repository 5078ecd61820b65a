"""A run's live counters and its cost limit (shared by online and batch runs)."""

from __future__ import annotations

from dataclasses import dataclass

from legal_judge.models import Verdict

__all__ = ["CostLimitReached", "RunProgress", "check_cost_limit"]


@dataclass
class RunProgress:
    """Live counters shown in the progress bar and returned at the end."""

    items_total: int = 0
    items_done: int = 0
    calls: int = 0
    cached: int = 0
    #: Transport retries (429, 5xx, timeouts) of this invocation: the caller sets it from
    #: :func:`legal_judge.providers.retry.counting_retries`, the count the call log keeps too. A
    #: JSON re-ask is a call, not a retry (counting it here showed "retries 6" beside 35).
    retries: int = 0
    failures: int = 0
    inconclusive: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float = 0.0
    cost_unknown_calls: int = 0

    def add(self, v: Verdict) -> None:
        """Count one finished verdict.

        A verdict reused from the cache counts as ``cached`` only: its attempts and tokens are
        those of the run that paid for them (counting them again showed "calls 171 ... tokens
        444,849" while the run sent no request and its summary said 0 calls).
        """
        self.failures += int(v.status == "error")
        self.inconclusive += int(v.status == "inconclusive")
        if v.cached:
            self.cached += 1
            return
        self.calls += v.attempts
        self.input_tokens += v.input_tokens or 0
        self.output_tokens += v.output_tokens or 0
        if v.cost_usd is None and v.status != "error":
            self.cost_unknown_calls += 1
        else:
            self.cost_usd += v.cost_usd or 0.0


class CostLimitReached(Exception):  # noqa: N818 - a stop condition, not a fault
    """The run spent more than ``cost_limit_usd``; it stops as ``stopped`` and can be resumed."""


def check_cost_limit(progress: RunProgress, limit: float | None) -> None:
    """Stop the run once it has spent more than ``limit`` dollars (None: no limit).

    Raises:
        CostLimitReached: the message says what was spent and what a resume may spend.
    """
    if limit is None or progress.cost_usd <= limit:
        return
    # The limit is per invocation (a resume starts counting again from 0): the user reads what a
    # resume will spend before typing it.
    raise CostLimitReached(f"cost limit ${limit:.2f} reached (${progress.cost_usd:.2f} spent); "
                           "cost_limit_usd applies to each invocation, so a resume may spend up "
                           f"to ${limit:.2f} more")

