"""What CI reads, as data: one suite of checks per run, comparison or audit gate.

The JUnit writer (:mod:`legal_judge.reports.junit`) and the Markdown step summary
(:mod:`legal_judge.reports.summary_md`) render a :class:`CiSuite` and compute nothing. The three
adapters below turn the stored results into suites; they are the only place that knows the shape of
a run's results, a ``compare`` report or a bias report, so a change of those shapes is mended here.

A check that cannot be decided is ``inconclusive`` and counts as a failure: CI never shows green for
something nobody could tell.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from legal_judge.store import Store

if TYPE_CHECKING:
    from legal_judge.audit import GateDecision
    from legal_judge.benchmark.run_gate import RunGate
    from legal_judge.calibration.escalation_schema import EscalationFigures
    from legal_judge.policy import PolicyInForce

__all__ = ["CiCase", "CiSuite", "audit_gate_suite", "compare_suite", "run_suite"]

Outcome = Literal["passed", "failed", "inconclusive", "skipped"]


@dataclass(frozen=True)
class CiCase:
    """One check: a judged item, a rubric of a comparison, a dimension or probe of an audit."""

    name: str
    outcome: Outcome
    message: str = ""
    details: str = ""
    time_s: float = 0.0


@dataclass(frozen=True)
class CiSuite:
    """The checks of one command, with the facts a reader needs first."""

    kind: str
    name: str
    title: str
    cases: list[CiCase]
    facts: list[tuple[str, str]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    @property
    def counts(self) -> dict[str, int]:
        """How many checks had each outcome."""
        out = dict.fromkeys(("passed", "failed", "inconclusive", "skipped"), 0)
        for case in self.cases:
            out[case.outcome] += 1
        return out

    @property
    def ok(self) -> bool:
        """True when no check failed or was inconclusive."""
        c = self.counts
        return c["failed"] == 0 and c["inconclusive"] == 0


def _fmt(value: float | None, spec: str = ".2f") -> str:
    return "n/a" if value is None else format(value, spec)


# run -------------------------------------------------------------------------------------------
def _item_details(result: dict[str, Any], verdicts: list[dict[str, Any]]) -> str:
    lines = []
    if result.get("scores"):
        lines.append("ensemble: " + ", ".join(f"{k} {v:.2f}" for k, v in
                                              sorted(result["scores"].items()))
                     + (f"; hallucination {result['hallucination']}"
                        if result.get("hallucination") else ""))
    for v in verdicts:
        head = f"{v.get('judge')}: {v.get('status')}"
        if v.get("overall"):
            head += f", {v['overall']}"
        if v.get("rule_fail_reasons"):
            head += " (" + "; ".join(v["rule_fail_reasons"]) + ")"
        if v.get("reason"):
            head += f" — {v['reason']}"
        lines.append(head)
    lines += [f"override: {o}" for o in result.get("overrides") or []]
    lines += [f"flag: {f}" for f in result.get("flags") or []]
    return "\n".join(lines)


def _item_case(item_id: str, result: dict[str, Any] | None,
               verdicts: list[dict[str, Any]]) -> CiCase:
    time_s = max((v.get("latency_ms") or 0.0 for v in verdicts), default=0.0) / 1000
    if result is None:
        return CiCase(item_id, "inconclusive", "not judged yet: the run did not finish",
                      time_s=time_s)
    details = _item_details(result, verdicts)
    if result.get("status") != "ok":
        return CiCase(item_id, "inconclusive", f"INCONCLUSIVE: {result.get('reason') or ''}".strip(),
                      details, time_s)
    if result.get("overall") == "pass":
        return CiCase(item_id, "passed", "pass", details, time_s)
    votes = result.get("votes") or {}
    why = sorted({r for v in verdicts if v.get("overall") == "fail"
                  for r in v.get("rule_fail_reasons") or []})
    message = (f"fail (weighted vote pass {votes.get('pass', 0):.2f} / fail "
               f"{votes.get('fail', 0):.2f})" + (": " + "; ".join(why) if why else ""))
    return CiCase(item_id, "failed", message, details, time_s)


def _split_case(split: EscalationFigures) -> CiCase:
    """The lawyers' part of an escalated run: undecided (inconclusive) while items are pending."""
    if split.pending:
        return CiCase("lawyer review", "inconclusive",
                      f"{split.pending} of {split.escalated} escalated items pending lawyer review")
    return CiCase("lawyer review", "passed",
                  f"all {split.escalated} escalated items reviewed by lawyers")


def run_suite(store: Store, run_id: str, *, policy: PolicyInForce | None = None,
              gate: RunGate | None = None, split: EscalationFigures | None = None) -> CiSuite:
    """A check per item of the run: failed = the ensemble says fail, inconclusive = no quorum.

    With ``gate`` (the ``[run]`` gate's decision) one more check, ``run gate``; a run that judged
    nothing has a failed ``run`` check with its reason. ``policy`` adds its facts (path, sha256,
    the ``[run]`` settings, each override). ``split`` (the run's newest escalation) adds the split
    figures as facts and a ``lawyer review`` check, inconclusive while items are pending.
    """
    run = store.get_run(run_id)
    results = store.load_results(run_id)
    by_item: dict[str, list[dict[str, Any]]] = {}
    for (item_id, _), v in sorted(store.load_verdicts(run_id).items()):
        by_item.setdefault(item_id, []).append(v)
    cases = [_item_case(i["id"], results.get(i["id"]), by_item.get(i["id"], []))
             for i in store.iter_items(run_id)]
    s = run.get("summary") or {}
    facts = [("run", run_id), ("status", str(run["status"]))]
    if s.get("pass_rate") is not None:
        lo, hi = s["pass_rate_ci95"]
        facts.append(("pass rate", f"{s['pass_rate']:.1%} (95% CI {lo:.1%}–{hi:.1%}) over "
                                   f"{s['scored']} scored items"))
    selection = run["config"].get("selection")
    if selection:
        facts.append(("items", f"{selection['selected']} of {selection['of']} "
                               f"({selection['options']})"))
    failure = (s.get("failure") or {}).get("reason")
    if failure:
        cases.append(CiCase("run", "failed", f"failed: {failure}"))
    if gate is not None:
        cases.append(CiCase("run gate", "passed" if gate.passed else "failed", gate.line))
        facts.append(("run gate", gate.line.removeprefix("run gate: ")))
    if split is not None:
        cases.append(_split_case(split))
        facts += split.facts()
    notes = []
    if policy is not None:
        facts += policy.properties("run")
        notes += policy.override_lines()
    if s.get("simulated"):
        notes.append("Scored by SIMULATED judges (demo only, never a judge of record).")
    notes += list(s.get("warnings") or [])[:10]
    title = f"legal-judge run {run_id}"
    return CiSuite(kind="run", name=title, title=title, cases=cases, facts=facts, notes=notes)


# compare ---------------------------------------------------------------------------------------
def _fmt_signed(x: float | None, spec: str = "+.3f") -> str:
    return "n/a" if x is None else format(x, spec)


def _endpoint_case(e: dict[str, Any], entry: dict[str, Any], *, allowed: bool) -> CiCase:
    """One endpoint of the release gate: its non-inferiority decision is the outcome."""
    name = "pass rate" if e["endpoint"] == "pass_rate" else f"rubric {e['endpoint']}"
    bounds = (f"B-A {_fmt_signed(e.get('estimate'))}, one-sided {e['confidence']:.0%} bounds "
              f"{_fmt_signed(e.get('lower'))}..{_fmt_signed(e.get('upper'))}, margin "
              f"-{e['margin']:g}")
    text = f"{e['decision']}: {bounds}; {e['reason']}"
    dropped = entry.get("regressed_items") or []
    details = "\n".join(f"{d['item_id']}: {d['before']:.2f} -> {d['after']:.2f}"
                        for d in dropped if isinstance(d, dict))
    if e["decision"] == "non-inferior":
        return CiCase(name, "passed", text, details)
    if e["decision"] == "cannot tell" and allowed:
        # The policy lets "cannot tell" pass: JUnit's "skipped", never a green pass.
        return CiCase(name, "skipped", text + " (allowed by the policy's on_cannot_tell)")
    return CiCase(name, "failed", text, details)


def compare_suite(report: dict[str, Any], *, policy: PolicyInForce | None = None) -> CiSuite:
    """A check per endpoint of the release gate (pass rate, each rubric) and one for the flip
    guard; ``cannot tell`` fails unless the policy says pass, then it is skipped. The policy's
    settings and overrides are facts (JUnit properties, step-summary lines)."""
    release = report["release"]
    allowed = report["release_policy"]["on_cannot_tell"] == "pass"
    entries = {"pass_rate": report.get("pass_rate") or report.get("corrected_pass_rate") or {},
               **report["rubrics"]}
    cases = [_endpoint_case(e, entries.get(e["endpoint"], {}), allowed=allowed)
             for e in release["endpoints"]]
    guard = release["flip_guard"]
    flipped = guard["flipped"]
    # A guard that could not check a critical item is "cannot tell", like an endpoint.
    guard_outcome: Outcome = ("passed" if guard["decision"] == "passed" else
                              "skipped" if guard["decision"] == "cannot tell" and allowed else
                              "failed")
    cases.append(CiCase(f"flip guard (max_flips {guard['max_flips']})", guard_outcome,
                        guard["reason"] + (": " + ", ".join(guard["critical_flips"])
                                           if guard["critical_flips"] else ""),
                        f"passed in A, failed in B: {', '.join(flipped)}" if flipped else ""))
    # A requirement of the policy (e.g. a validation of record) is a case only when required.
    cases += [CiCase(f"requirement: {r['name']}", "passed" if r["met"] else "failed",
                     r["reason"], "")
              for r in release.get("requirements", []) if r["required"]]
    review = release.get("review") or {}
    if review.get("required") or review.get("escalation_id"):
        outcome: Outcome = ("failed" if review["decision"] == "pending review" else
                            "passed" if review["required"] else "skipped")
        cases.append(CiCase("escalation review", outcome, f"{review['decision']}: "
                            f"{review['reason']}"))
    title = f"legal-judge compare {report['run_b']} vs {report['run_a']}"
    facts = [("baseline (A)", report["run_a"]), ("candidate (B)", report["run_b"]),
             ("paired items", str(report.get("n_items", "n/a"))),
             ("release decision", f"{release['decision']} "
                                  f"({'passed' if release['passed'] else 'failed'})"),
             ("rule", release["rule"])]
    if flipped:
        facts.append(("passed in A, failed in B", ", ".join(flipped[:30])
                      + (" ..." if len(flipped) > 30 else "")))
    if report.get("compared_note"):
        facts.append(("compared", str(report["compared_note"])))
    facts += [(f"candidate (B) {name}", value) for name, value in review.get("facts") or []]
    notes = list(report.get("warnings") or []) + list(report.get("notes") or [])
    if policy is not None:
        facts += policy.properties("release")
        notes += policy.override_lines()
    return CiSuite(kind="compare", name=title, title=title, cases=cases, facts=facts,
                   notes=notes)


# audit gate ------------------------------------------------------------------------------------
_CHECK_OUTCOMES: dict[str, Outcome] = {"pass": "passed", "fail": "failed"}


def audit_gate_suite(report: dict[str, Any], decision: GateDecision) -> CiSuite:
    """A check per thing the gate looked at (status, verdict, each probe and dimension, each
    recorded setting against the policy, severity, review) and one for the gate's own decision;
    an undecided probe or dimension is inconclusive, never a pass (skipped when the policy's
    ``allow_inconclusive`` let the gate pass). The facts name the policy, its
    ``[certification]`` settings and every override; a simulated judge is said to be one."""
    undecided: Outcome = "skipped" if decision.passed else "inconclusive"
    cases = [CiCase(f"{c.kind} {c.name}" if c.kind != c.name else c.kind,
                    _CHECK_OUTCOMES.get(c.outcome, undecided),
                    c.reason if c.outcome in _CHECK_OUTCOMES else f"{c.outcome}: {c.reason}")
             for c in decision.checks]
    note = (" (inconclusive allowed by the policy's allow_inconclusive)"
            if decision.passed and decision.verdict == "inconclusive" else "")
    cases.append(CiCase(f"gate (max severity {decision.max_severity})",
                        "passed" if decision.passed else "failed",
                        (f"verdict {decision.verdict}{note}, severity {decision.severity}"
                         if decision.passed else "; ".join(decision.reasons))))
    ext = report.get("extensions") or {}
    audit_id = ext.get("audit_id", "")
    facts = [("audit", str(audit_id)),
             ("judge", f"{ext.get('judge', '')} ({ext.get('judge_id', '')})"),
             ("verdict", decision.verdict), ("status", decision.status),
             ("severity", decision.severity)]
    notes = [decision.sentence]
    if decision.simulated:
        facts.append(("judge of record", "simulated judge: not a judge of record"))
        notes.append("simulated judge: not a judge of record")
    if decision.policy is not None:
        facts += decision.policy.properties("certification")
        notes += decision.policy.override_lines()
    title = f"legal-judge audit gate {audit_id}".strip()
    return CiSuite(kind="audit", name=title, title=title, cases=cases, facts=facts, notes=notes)
