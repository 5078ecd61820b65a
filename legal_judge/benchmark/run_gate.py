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
* **Every judge judged**: each judge must return a verdict on at least ``[run]
  min_judge_coverage`` of the items. A judge down for the whole run left a "three-judge
  cross-provider" run judged by two on every item (the quorum held), ``completed`` with exit 0
  and nothing but an ``error`` column to say so. Below the minimum the gate fails, naming the
  judge and why its calls failed; when they failed (a provider down) a resume judges them again
  (exit 3), otherwise (its answers were INCONCLUSIVE) the judge needs fixing (exit 1).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from legal_judge.policy import RunPolicy
from legal_judge.store import Store

__all__ = ["NO_JUDGMENT", "JudgeCoverage", "NoJudgment", "RunGate", "judge_causes",
           "no_judgment", "run_gate"]

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


def failure_causes(store: Store, run_id: str,
                   judge: str | None = None) -> list[tuple[str, int]]:
    """The causes of a run's failed calls (of one ``judge``'s), most frequent first:
    ``(cause, calls)``."""
    names = _provider_names(store.get_run(run_id).get("config") or {})
    causes: Counter[str] = Counter()
    for name, error, n in store.call_errors(run_id):
        if judge is None or name == judge:
            causes[_cause(error, names.get(name, []))] += n
    return sorted(causes.items(), key=lambda kv: (-kv[1], kv[0]))


def judge_causes(store: Store, run_id: str, gate: RunGate) -> dict[str, str]:
    """Each judge short of the gate's coverage whose calls failed -> why, in one phrase."""
    return {j.judge: _causes_text(causes) for j in gate.short
            if (causes := failure_causes(store, run_id, j.judge))}


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
class JudgeCoverage:
    """How many of a run's items one judge returned a verdict on (``ok``)."""

    judge: str
    verdicts: int
    errors: int
    inconclusive: int
    items: int

    @property
    def coverage(self) -> float | None:
        """Its verdicts over the run's items (None for a run without items)."""
        return self.verdicts / self.items if self.items else None


@dataclass(frozen=True)
class RunGate:
    """The ``[run]`` gate's decision on a run: its inconclusive share against the policy limit,
    and each judge's coverage against the policy minimum."""

    inconclusive: int
    items: int
    limit: float
    judges: tuple[JudgeCoverage, ...] = ()
    min_coverage: float = 0.0

    @property
    def share(self) -> float | None:
        """The inconclusive share (None for a run without items)."""
        return self.inconclusive / self.items if self.items else None

    @property
    def short(self) -> tuple[JudgeCoverage, ...]:
        """The judges below the minimum coverage."""
        return tuple(j for j in self.judges
                     if j.coverage is not None and j.coverage < self.min_coverage)

    @property
    def passed(self) -> bool:
        """True only on evidence: some items, a share at or below the limit, and every judge
        at or above the minimum coverage."""
        share = self.share
        return share is not None and share <= self.limit and not self.short

    @property
    def exit_code(self) -> int:
        """0 when passed; 3 when a short judge's calls failed (``run --resume`` judges them
        again); else 1."""
        if self.passed:
            return 0
        return 3 if any(j.errors for j in self.short) else 1

    @property
    def line(self) -> str:
        """``run gate: FAILED: inconclusive share 33.3% (1 of 3 items) > policy limit 10.0% ...``:
        the conditions that failed first, then those that held."""
        share = self.share
        if share is None:
            return "run gate: FAILED: the run has no items (nothing to judge is no evidence)"
        held = share <= self.limit
        parts = [(held, f"inconclusive share {share:.1%} ({self.inconclusive} of {self.items} "
                        f"items) {'<=' if held else '>'} policy limit {self.limit:.1%} "
                        "(run.max_inconclusive_share)")]
        minimum = f"{self.min_coverage:.0%}"
        parts += [(False, f"judge {j.judge} returned a verdict on {j.verdicts} of {j.items} "
                          f"items ({j.coverage or 0.0:.1%}) < policy minimum {minimum} "
                          "(run.min_judge_coverage)")
                  for j in self.short]
        if self.judges and not self.short:
            parts.append((True, f"every judge returned a verdict on >= {minimum} of the items "
                                "(run.min_judge_coverage)"))
        ordered = [text for ok, text in parts if not ok] + [text for ok, text in parts if ok]
        return f"run gate: {'passed' if self.passed else 'FAILED'}: " + "; ".join(ordered)

    def judge_notes(self, causes: Mapping[str, str] | None = None) -> list[str]:
        """Why each judge below the minimum coverage gave no verdict (``causes``: from
        :func:`judge_causes`), and what the run's items lost."""
        out = []
        for j in self.short:
            why = [f"{j.errors} verdict(s) failed" if j.errors else "",
                   f"{j.inconclusive} INCONCLUSIVE" if j.inconclusive else ""]
            cause = (causes or {}).get(j.judge)
            out.append(f"{j.judge}: " + ", ".join(w for w in why if w)
                       + (f" ({cause})" if cause else "")
                       + f"; {j.items - j.verdicts} item(s) were judged without it")
        return out

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready, for CI outputs."""
        return {"passed": self.passed, "inconclusive": self.inconclusive, "items": self.items,
                "share": self.share, "max_inconclusive_share": self.limit,
                "min_judge_coverage": self.min_coverage,
                "judges": [{"judge": j.judge, "verdicts": j.verdicts, "errors": j.errors,
                            "inconclusive": j.inconclusive, "coverage": j.coverage,
                            "met": j not in self.short} for j in self.judges]}


def run_gate(summary: Mapping[str, Any], policy: RunPolicy) -> RunGate:
    """The ``[run]`` gate on a stored summary: INCONCLUSIVE items over all items of the run, and
    each judge's verdicts over the run's items."""
    items = int(summary.get("items") or 0)
    judges = tuple(JudgeCoverage(judge=name, verdicts=int(row.get("ok") or 0),
                                 errors=int(row.get("error") or 0),
                                 inconclusive=int(row.get("inconclusive") or 0), items=items)
                   for name, row in sorted((summary.get("judges") or {}).items()))
    return RunGate(inconclusive=len(summary.get("inconclusive") or []), items=items,
                   limit=policy.max_inconclusive_share, judges=judges,
                   min_coverage=policy.min_judge_coverage)
