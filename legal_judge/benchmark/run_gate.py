"""When a run may be green: a run that judged nothing fails, and the policy's ``[run]`` gate.

DESIGN.md, "Decisions and the burden of proof": a run is green only on positive evidence. Two
rules follow, both read from the run's stored summary (never from memory):

* **A run that scored no item has failed** (status ``failed``), whatever ended the judging: its
  tables are empty, and "completed" with exit 0 told CI a dead ensemble had judged the benchmark.
  :func:`no_judgment` says why in one line ("no item could be judged: 6 of 6 calls failed:
  connection refused at http://127.0.0.1:9/v1"). When calls failed (a provider down, a revoked
  key) the cause is external and ``run --resume`` judges the failed verdicts again (exit 3);
  when every judge answered but no item reached its quorum, a resume changes nothing (exit 1).
* **The inconclusive share** of a scored run is held to ``[run] max_inconclusive_share``
  (:func:`run_gate`): above it the run stays ``completed`` (everything is stored, it is a gate
  that failed) and the command exits 1, naming the share and the limit.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from legal_judge.policy import RunPolicy
from legal_judge.store import Store

__all__ = ["NO_JUDGMENT", "NoJudgment", "RunGate", "no_judgment", "run_gate"]

NO_JUDGMENT = "no item could be judged"
#: Causes named in the one line; the rest are counted.
_CAUSES_SHOWN = 2


@dataclass(frozen=True)
class NoJudgment:
    """Why a run scored no item.

    Attributes:
        reason: One line, ``no item could be judged: ...``.
        external: True when provider calls failed (a rerun with ``--resume`` tries them again).
    """

    reason: str
    external: bool

    @property
    def exit_code(self) -> int:
        """3 when a service failed (a resume judges again), else 1."""
        return 3 if self.external else 1

    def as_dict(self) -> dict[str, Any]:
        """As stored in the run's summary (``summary["failure"]``)."""
        return {"reason": self.reason, "external": self.external}


def _provider_names(config: Mapping[str, Any]) -> dict[str, list[str]]:
    """Judge label -> the names its provider puts before an error ("openai:gpt-4o: ...")."""
    from legal_judge.errors import LegalJudgeError
    from legal_judge.providers.base import parse_spec

    out: dict[str, list[str]] = {}
    for judge in (config.get("ensemble") or {}).get("judges") or []:
        spec = str(judge.get("spec") or "")
        names = [spec]
        try:
            parsed = parse_spec(spec)
            names.insert(0, f"{parsed.prefix}:{parsed.model}")
        except LegalJudgeError:
            pass
        out[str(judge.get("name") or spec)] = names
    return out


def _cause(error: str, names: Sequence[str]) -> str:
    """A stored call error without its provider's name and its fix: what went wrong, once."""
    first = error.splitlines()[0].strip() if error.strip() else "unknown error"
    for name in names:
        if name and first.startswith(f"{name}: "):
            return first[len(name) + 2:]
    return first


def failure_causes(store: Store, run_id: str) -> list[tuple[str, int]]:
    """The causes of a run's failed calls, most frequent first: ``(cause, calls)``."""
    names = _provider_names(store.get_run(run_id).get("config") or {})
    causes: Counter[str] = Counter()
    for judge, error, n in store.call_errors(run_id):
        causes[_cause(error, names.get(judge, []))] += n
    return sorted(causes.items(), key=lambda kv: (-kv[1], kv[0]))


def _causes_text(causes: list[tuple[str, int]]) -> str:
    if len(causes) == 1:
        return causes[0][0]
    shown = "; ".join(f"{cause} ({n})" for cause, n in causes[:_CAUSES_SHOWN])
    more = len(causes) - _CAUSES_SHOWN
    return shown + (f"; {more} more cause(s)" if more > 0 else "")


def no_judgment(store: Store, run_id: str, summary: Mapping[str, Any]) -> NoJudgment | None:
    """Why the run scored no item, or None when it scored at least one.

    Args:
        store: The store holding the run.
        run_id: The run.
        summary: Its summary (:func:`~legal_judge.benchmark.summary.summarize_run`).
    """
    if summary.get("scored"):
        return None
    items = int(summary.get("items") or 0)
    if not items:
        return NoJudgment(f"{NO_JUDGMENT}: the run has no items", external=False)
    calls = summary.get("calls") or {}
    failed = int(calls.get("failed") or 0)
    if failed:
        causes = failure_causes(store, run_id)
        return NoJudgment(f"{NO_JUDGMENT}: {failed} of {calls.get('calls', failed)} calls "
                          f"failed: {_causes_text(causes)}", external=True)
    inconclusive = len(summary.get("inconclusive") or [])
    return NoJudgment(f"{NO_JUDGMENT}: {inconclusive} of {items} items INCONCLUSIVE (too few "
                      "valid verdicts for the quorum; the judges' reasons: `legal-judge runs "
                      f"export {run_id}`)", external=False)


@dataclass(frozen=True)
class RunGate:
    """The ``[run]`` gate's decision on a run: its inconclusive share against the policy limit."""

    inconclusive: int
    items: int
    limit: float

    @property
    def share(self) -> float | None:
        """The inconclusive share (None for a run without items)."""
        return self.inconclusive / self.items if self.items else None

    @property
    def passed(self) -> bool:
        """True only on evidence: some items, and a share at or below the limit."""
        share = self.share
        return share is not None and share <= self.limit

    @property
    def line(self) -> str:
        """``run gate: FAILED: inconclusive share 33.3% (1 of 3 items) > policy limit 10.0% ...``."""
        share = self.share
        if share is None:
            return "run gate: FAILED: the run has no items (nothing to judge is no evidence)"
        verdict, sign = ("passed", "<=") if self.passed else ("FAILED", ">")
        return (f"run gate: {verdict}: inconclusive share {share:.1%} ({self.inconclusive} of "
                f"{self.items} items) {sign} policy limit {self.limit:.1%} "
                "(run.max_inconclusive_share)")

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready, for CI outputs."""
        return {"passed": self.passed, "inconclusive": self.inconclusive, "items": self.items,
                "share": self.share, "max_inconclusive_share": self.limit}


def run_gate(summary: Mapping[str, Any], policy: RunPolicy) -> RunGate:
    """The ``[run]`` gate on a stored summary: INCONCLUSIVE items over all items of the run."""
    return RunGate(inconclusive=len(summary.get("inconclusive") or []),
                   items=int(summary.get("items") or 0),
                   limit=policy.max_inconclusive_share)
