"""Gate legal answers inside pytest (registered as a ``pytest11`` plugin; inert until used).

Installing legal-judge makes pytest load this module; it only registers a fixture, a marker and two
ini options, and imports nothing heavy until a test uses them::

    def test_lease_answer(legal_judge):
        legal_judge.assert_judged("Is a verbal lease valid in England?", answer,
                                  ensemble="default", min_scores={"legal_soundness": 3})

    @pytest.mark.legal_judge_audited(judge="default")
    def test_release_gate(legal_judge): ...

``assert_judged`` judges the answer with the ensemble exactly as ``run`` decides an item (checks,
judges, answer rules, aggregation; cached, but stored as a run only with ``save=True``) and fails
the test with each judge's scores and rationales and the rule that failed. An
INCONCLUSIVE ensemble (too few valid verdicts) always fails: nothing is green that nobody judged.
The marker fails the test when the judge's latest audit does not pass ``audit gate``: the same
check (:func:`legal_judge.audit.gate_report`) under the same policy (``legal_judge_policy``, else
``./legal-judge.policy.toml``, else the bundled default); ``max_severity`` may only tighten it.
Ini options: ``legal_judge_ensemble`` (the default ensemble), ``legal_judge_max_severity``,
``legal_judge_policy``.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from legal_judge.benchmark.single import JudgedAnswer

__all__ = ["LegalJudgeFixture", "assert_judged", "audited_failure"]

_MAX_TEXT = 300


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addini("legal_judge_ensemble", "legal-judge: ensemble of assert_judged (TOML path or "
                  "bundled name)", default="default")
    parser.addini("legal_judge_max_severity", "legal-judge: highest audit severity the "
                  "legal_judge_audited marker accepts (tightens the policy's; default: the "
                  "policy's)", default="")
    parser.addini("legal_judge_policy", "legal-judge: the gate policy file of the "
                  "legal_judge_audited marker (default: ./legal-judge.policy.toml, else the "
                  "bundled default)", default="")


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "legal_judge_audited(judge, max_severity=None): fail the test unless the "
                   "judge's latest bias audit passes `legal-judge audit gate`")


def _short(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= _MAX_TEXT else text[:_MAX_TEXT] + " ..."


def _failed_rules(judged: JudgedAnswer, *, rubrics: Sequence[str] | None,
                  min_scores: Mapping[str, float], must_pass: bool) -> list[str]:
    result = judged.result
    # A "failed" run (its one item not scored) still has the item's result and its reason.
    if judged.status not in ("completed", "failed") or result is None:
        return [f"the judgment ({judged.run_id or 'not saved'}) ended {judged.status}: "
                "nothing was judged"]
    if result.status != "ok":
        return [f"INCONCLUSIVE: {result.reason}"]
    rules = []
    if must_pass and result.overall != "pass":
        why = sorted({r for v in judged.verdicts if v.overall == "fail"
                      for r in v.rule_fail_reasons})
        rules.append(f"must_pass: the ensemble says {result.overall} (weighted vote pass "
                     f"{result.votes.get('pass', 0):.2f} / fail {result.votes.get('fail', 0):.2f})"
                     + (f"; judges' rules: {'; '.join(why)}" if why else ""))
    for rubric in rubrics or []:
        if rubric not in result.scores:
            rules.append(f"rubrics: {rubric} was not scored by the ensemble")
    for rubric, floor in min_scores.items():
        score = result.scores.get(rubric)
        if score is None:
            rules.append(f"min_scores: {rubric} was not scored by the ensemble")
        elif score < floor:
            rules.append(f"min_scores: {rubric} {score:.2f} < {floor:g}")
    return rules


def _explain(judged: JudgedAnswer, rules: list[str], rubrics: Sequence[str] | None) -> str:
    lines = ["legal-judge: the answer did not meet the rule(s):"]
    lines += [f"  - {r}" for r in rules]
    lines += [f"prompt: {_short(judged.item.prompt)}", f"answer: {_short(judged.item.response)}"]
    result = judged.result
    if result is not None and result.scores:
        shown = {k: v for k, v in result.scores.items() if not rubrics or k in rubrics}
        lines.append("ensemble: " + f"{result.overall}; " + ", ".join(
            f"{k} {v:.2f}" for k, v in sorted(shown.items()))
            + (f"; hallucination {result.hallucination}" if result.hallucination else ""))
        lines += [f"  override: {o}" for o in result.overrides]
        lines += [f"  rule: {r}" for r in result.rule_fail_reasons]
    for v in judged.verdicts:
        head = f"judge {v.judge} ({v.judge_id}): {v.status}" + (f", {v.overall}" if v.overall else "")
        if v.rule_fail_reasons:
            head += " — " + "; ".join(v.rule_fail_reasons)
        if v.reason:
            head += f" — {v.reason}"
        lines.append(head)
        for rubric, score in sorted(v.scores.items()):
            if rubrics and rubric not in rubrics:
                continue
            lines.append(f"    {rubric} {score:g}: {_short(v.rationales.get(rubric, ''))}")
        if v.hallucination:
            lines.append(f"    hallucination {v.hallucination}: "
                         f"{_short(v.rationales.get('hallucination', ''))}")
    lines.append(f"stored as run {judged.run_id} (legal-judge runs show {judged.run_id})"
                 if judged.run_id else "not stored (assert_judged(..., save=True) stores it)")
    return "\n".join(lines)


def assert_judged(prompt: str, response: str, *, ensemble: str = "default",
                  rubrics: Sequence[str] | None = None,
                  min_scores: Mapping[str, float] | None = None, must_pass: bool = True,
                  jurisdiction: str | None = None, item_id: str | None = None,
                  save: bool = False) -> JudgedAnswer:
    """Judge one answer and fail the current test unless it meets the rules.

    Args:
        prompt: The question.
        response: The answer under test.
        ensemble: Ensemble TOML path or bundled name.
        rubrics: Rubrics that must be scored (and the only ones shown in the message).
        min_scores: Lowest acceptable ensemble score per rubric, e.g. ``{"legal_soundness": 3}``.
        must_pass: The ensemble's pass/fail verdict must be pass.
        jurisdiction: The jurisdiction of the question, when known.
        item_id: The item id (default: a digest of prompt and answer).
        save: Store the judgment as a one-item run (``legal-judge runs list`` shows it).

    Returns:
        The judged answer, when every rule holds.

    Raises:
        pytest.fail.Exception: a rule failed or the ensemble was inconclusive.
        ConfigError: a min_scores rubric no rubric set defines, or a bad ensemble.
    """
    from legal_judge.benchmark.single import judge_answer

    _check_rubric_names(list(rubrics or []), list(min_scores or {}))
    judged = judge_answer(prompt, response, ensemble=ensemble, jurisdiction=jurisdiction,
                          item_id=item_id, source="pytest", save=save)
    rules = _failed_rules(judged, rubrics=rubrics, min_scores=min_scores or {},
                          must_pass=must_pass)
    if rules:
        pytest.fail(_explain(judged, rules, rubrics), pytrace=False)
    return judged


def _check_rubric_names(rubrics: list[str], scored: list[str]) -> None:
    from legal_judge.assets.catalogue import load_assets
    from legal_judge.errors import ConfigError

    assets = load_assets()
    numeric = sorted(n for n in assets.rubrics if assets.rubric(n).kind == "numeric")
    unknown = sorted(set(rubrics) - set(assets.rubrics))
    if unknown:
        raise ConfigError(f"assert_judged: unknown rubric(s) {', '.join(unknown)}",
                          code="pytest-rubric-unknown",
                          fix=f"use some of: {', '.join(sorted(assets.rubrics))}")
    not_numeric = sorted(set(scored) - set(numeric))
    if not_numeric:
        raise ConfigError(f"assert_judged: min_scores needs numeric rubrics, not "
                          f"{', '.join(not_numeric)}", code="pytest-rubric-unknown",
                          fix=f"use some of: {', '.join(numeric)}")


class LegalJudgeFixture:
    """What the ``legal_judge`` fixture gives a test: ``assert_judged`` with the ini defaults."""

    def __init__(self, config: pytest.Config) -> None:
        self.ensemble = str(config.getini("legal_judge_ensemble") or "default")

    def assert_judged(self, prompt: str, response: str, *, ensemble: str | None = None,
                      rubrics: Sequence[str] | None = None,
                      min_scores: Mapping[str, float] | None = None, must_pass: bool = True,
                      jurisdiction: str | None = None,
                      item_id: str | None = None, save: bool = False) -> JudgedAnswer:
        """:func:`assert_judged` with ``ensemble`` defaulting to the ini option."""
        return assert_judged(prompt, response, ensemble=ensemble or self.ensemble,
                             rubrics=rubrics, min_scores=min_scores, must_pass=must_pass,
                             jurisdiction=jurisdiction, item_id=item_id, save=save)


@pytest.fixture
def legal_judge(request: pytest.FixtureRequest) -> LegalJudgeFixture:
    """Judge answers inside a test: ``legal_judge.assert_judged(prompt, answer, ...)``."""
    return LegalJudgeFixture(request.config)


def audited_failure(judge: str, *, max_severity: str | None = None,
                    policy: str | None = None) -> str | None:
    """Why ``judge`` (spec, ensemble TOML or target YAML) may not gate, or None when it may.

    Every judge the reference names (each judge of an ensemble) needs a latest audit that passes
    ``audit gate`` under the policy (``policy`` file, else the usual lookup); ``max_severity``
    may only tighten it (a loosening one is refused, as the CLI flag is).
    """
    from legal_judge.audit import gate_report
    from legal_judge.audit.history import latest_audit, load_report
    from legal_judge.audit.target import load_targets
    from legal_judge.errors import ConfigError, GateFailure
    from legal_judge.policy import load_policy
    from legal_judge.store import Store

    try:
        in_force = load_policy(policy).with_settings({"certification.max_severity": max_severity})
    except ConfigError as exc:
        return f"{exc.message}" + (f" ({exc.fix})" if exc.fix else "")
    store = Store()
    targets = load_targets(judge, store=store, all_judges=True)
    for t in targets:
        asyncio.run(t.aclose())
    for t in targets:
        audit_id = latest_audit(store, t.judge_id)
        if audit_id is None:
            return (f"judge {t.label} (judge_id {t.judge_id}) has no bias audit in {store.path}; "
                    f"run `legal-judge audit run --judge {judge}`")
        try:
            gate_report(load_report(audit_id, store=store), policy=in_force, store=store)
        except GateFailure as exc:
            return (f"judge {t.label} (judge_id {t.judge_id}): its latest audit {audit_id} does "
                    f"not pass the gate: {exc.message}" + (f" ({exc.fix})" if exc.fix else ""))
    return None


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_call(item: pytest.Item) -> None:
    for marker in item.iter_markers("legal_judge_audited"):
        judge = marker.kwargs.get("judge") or (marker.args[0] if marker.args else None)
        if not judge:
            raise pytest.UsageError(f"{item.nodeid}: legal_judge_audited needs judge=... "
                                    "(a spec, an ensemble TOML or a target YAML)")
        severity = (marker.kwargs.get("max_severity")
                    or str(item.config.getini("legal_judge_max_severity") or "") or None)
        policy = str(item.config.getini("legal_judge_policy") or "") or None
        if policy and not Path(policy).is_absolute():
            policy = str(item.config.rootpath / policy)
        why = audited_failure(str(judge), max_severity=severity, policy=policy)
        if why is not None:
            pytest.fail(f"legal_judge_audited: {why}", pytrace=False)
