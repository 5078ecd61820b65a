"""What each rule-based finding does to an item's decision, applied in one place.

The table is data (``legal_judge/data/answer_rules.v1.toml``): one row per finding kind of
:mod:`legal_judge.checks.findings`, with its effect (``cap``, ``fail``, ``review`` or ``info``).
:func:`apply_answer_rules` is called once per item by :func:`legal_judge.benchmark.ensemble.aggregate`,
which every path goes through (``run``, a resume, a batch run, ``judge``, ``assert_judged``), after
the judges' scores are averaged and voted on. The judges' own figures are never lost: capped
scores keep the ensemble's mean in ``raw_scores``, a forced fail keeps the vote in ``votes`` and
``raw_overall``.

Beside the checks' findings, one finding is the decision's own: ``mean_vote_split``, when the
ensemble's mean scores fail the seed's pass/fail rule while the majority vote passes (or the
reverse).
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from legal_judge.assets.rubrics import RubricSet
from legal_judge.checks.findings import Finding, item_findings
from legal_judge.errors import ConfigError

__all__ = ["ANSWER_RULES_PATH", "DECISION_KINDS", "AnswerRule", "RulesOutcome",
           "answer_rules", "apply_answer_rules", "capped_rubrics", "check_rubric_set",
           "rules_table"]

ANSWER_RULES_PATH = Path(__file__).resolve().parent.parent / "data" / "answer_rules.v1.toml"

#: Finding kinds the decision itself produces (not the checks).
DECISION_KINDS: dict[str, str] = {
    "mean_vote_split": "the ensemble's mean scores against the majority vote (pass/fail rule)",
}

Effect = Literal["cap", "fail", "review", "info"]


class AnswerRule(BaseModel):
    """One row of the table: a finding kind and its effect on the decision."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    kind: str
    effect: Effect
    rule: str
    reason: str
    caps: dict[str, float] = Field(default_factory=dict)


class _Table(BaseModel):
    model_config = ConfigDict(extra="forbid")

    version: int
    rule: list[AnswerRule]


@lru_cache(maxsize=1)
def answer_rules() -> tuple[AnswerRule, ...]:
    """The bundled table, in file order (read once).

    Raises:
        ConfigError: the file is malformed, a kind is listed twice or a ``cap`` row caps nothing.
    """
    try:
        table = _Table.model_validate(tomllib.loads(ANSWER_RULES_PATH.read_text(encoding="utf-8")))
    except (tomllib.TOMLDecodeError, ValueError) as exc:
        raise ConfigError(f"{ANSWER_RULES_PATH}: {exc}", code="answer-rules-invalid",
                          fix="restore the bundled answer_rules.v1.toml") from exc
    kinds = [r.kind for r in table.rule]
    twice = sorted({k for k in kinds if kinds.count(k) > 1})
    empty = [r.kind for r in table.rule if (r.effect == "cap") != bool(r.caps)]
    if twice or empty:
        raise ConfigError(f"{ANSWER_RULES_PATH}: kinds listed twice {twice}; rows whose caps do "
                          f"not match their effect {empty}", code="answer-rules-invalid",
                          fix="one row per kind; caps only (and always) on a cap row")
    return tuple(table.rule)


def rules_table() -> list[dict[str, Any]]:
    """The table as plain rows (``legal-judge rules --json``), each with where its finding comes
    from."""
    from legal_judge.checks.findings import FINDING_SOURCES

    sources = {**FINDING_SOURCES, **DECISION_KINDS}
    return [{**r.model_dump(), "source": sources.get(r.kind, "")} for r in answer_rules()]


def capped_rubrics(overrides: list[str]) -> dict[str, float]:
    """The caps a stored result's overrides applied (named ``"<rule>: ..."``), per rubric (the
    lowest when two rules cap one rubric): a calibrated score is capped again, so a rule holds
    whatever the calibration (rule 1's citation_quality = 0 stays 0)."""
    names = {text.split(":", 1)[0].strip() for text in overrides}
    caps: dict[str, float] = {}
    for row in answer_rules():
        if row.rule in names:
            for rubric, cap in row.caps.items():
                caps[rubric] = min(cap, caps.get(rubric, cap))
    return caps


@dataclass
class RulesOutcome:
    """The decision after the table's effects, and what each effect did."""

    scores: dict[str, float]
    overall: str
    overrides: list[str] = field(default_factory=list)
    rule_fail_reasons: list[str] = field(default_factory=list)
    review: list[str] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)


def check_rubric_set(rubric_set: RubricSet) -> None:
    """A rubric set's own overrides must be rows of the table (else they would do nothing).

    Raises:
        ConfigError: ``rubric-override-unknown``, naming the override and the table.
    """
    rows = {r.rule: r for r in answer_rules()}
    for o in rubric_set.overrides:
        row = rows.get(o.name)
        if row is None or row.caps.get(o.set.rubric) != o.set.score:
            raise ConfigError(
                f"rubric set {rubric_set.id}: override {o.name} ({o.set.rubric} = {o.set.score:g}) "
                "is not a row of the answer-rules table, so it would change nothing",
                code="rubric-override-unknown",
                fix=f"add it to {ANSWER_RULES_PATH.name} (see `legal-judge rules`) or remove it")


def _figure(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f}"


def _cap(row: AnswerRule, detail: str, out: RulesOutcome, rubric_set: RubricSet) -> None:
    moved = []
    for rubric, cap in row.caps.items():
        judged = out.scores.get(rubric)
        if judged is None:
            continue
        if judged > cap:
            out.scores[rubric] = cap
            moved.append(f"{rubric} {_figure(judged)} -> {cap:g}")
        else:
            moved.append(f"{rubric} {_figure(judged)}, within the cap {cap:g}")
    # The seed's pass/fail rule read on the capped rubrics alone: rule 4's caps fail the item.
    if rubric_set.fail_reasons({r: out.scores[r] for r in row.caps if r in out.scores}, {}):
        out.overall = "fail"
        out.rule_fail_reasons.append(row.reason)
    extra = "; ".join(x for x in (detail, ", ".join(moved)) if x)
    out.overrides.append(f"{row.rule}: {row.reason}" + (f" ({extra})" if extra else ""))


def _mean_vote(out: RulesOutcome, votes: dict[str, float], hallucination: str | None,
               rubric_set: RubricSet) -> Finding | None:
    """``mean_vote_split`` when the ensemble's figures and its vote disagree on the rule."""
    if out.rule_fail_reasons:
        return None  # a rule decided the item: the vote is overruled, not in doubt
    categorical = {"hallucination": hallucination} if hallucination else {}
    reasons = rubric_set.fail_reasons(out.scores, categorical)
    vote = f"pass {votes.get('pass', 0):.2f} / fail {votes.get('fail', 0):.2f}"
    if out.overall == "pass" and reasons:
        figures = ", ".join(f"{c.rubric} {_figure(out.scores.get(c.rubric))}"
                            for c in rubric_set.pass_fail.fail_if
                            if c.reason in reasons and c.rubric in out.scores)
        return Finding("mean_vote_split", f"ensemble mean {figures or 'hallucination'} fails "
                                          f"({'; '.join(reasons)}) while the vote passes ({vote})")
    if out.overall == "fail" and not reasons:
        figures = ", ".join(f"{c.rubric} {_figure(out.scores.get(c.rubric))}"
                            for c in rubric_set.pass_fail.fail_if if c.rubric in out.scores)
        return Finding("mean_vote_split", f"ensemble mean {figures} passes the rule while the "
                                          f"vote fails ({vote})")
    return None


def _apply(finding: Finding, found: list[Finding], out: RulesOutcome,
           rows: dict[str, AnswerRule], rubric_set: RubricSet, capped: set[str]) -> None:
    row = rows.get(finding.kind)
    if row is None:
        raise ConfigError(f"finding kind {finding.kind} has no row in {ANSWER_RULES_PATH.name}",
                          code="answer-rules-incomplete",
                          fix="add a row for it (effect cap, fail, review or info)")
    out.findings.append(finding)
    said = f"{row.rule}: {row.reason}" + (f" ({finding.detail})" if finding.detail else "")
    if row.effect == "cap":
        if row.rule not in capped:  # several kinds of one rule (rule 1) cap once, detail joined
            capped.add(row.rule)
            details = [f.detail for f in found
                       if f.detail and f.kind in rows and rows[f.kind].rule == row.rule]
            _cap(row, "; ".join(details), out, rubric_set)
    elif row.effect == "fail":
        out.overall = "fail"
        out.rule_fail_reasons.append(row.reason)
        out.overrides.append(said)
    elif row.effect == "review":
        out.review.append(said)


def apply_answer_rules(checks: dict[str, Any] | None, *, scores: dict[str, float], overall: str,
                       votes: dict[str, float], hallucination: str | None,
                       rubric_set: RubricSet) -> RulesOutcome:
    """Apply the table's effects to one item's aggregated scores and vote.

    Args:
        checks: The item's stored checks (empty when the run ran none).
        scores: The ensemble's mean score per rubric (not changed; a copy is capped).
        overall: The weighted majority vote.
        votes: The vote's weights, quoted by ``mean_vote_split``.
        hallucination: The ensemble's plurality hallucination result.
        rubric_set: The rubric set, whose pass/fail rule the caps are read against.

    Returns:
        The capped scores, the overall decision and every effect, in words.

    Raises:
        ConfigError: a finding kind without a row, or a rubric set override the table lacks.
    """
    check_rubric_set(rubric_set)
    rows = {r.kind: r for r in answer_rules()}
    out = RulesOutcome(scores=dict(scores), overall=overall)
    found = item_findings(checks)
    capped: set[str] = set()
    for finding in found:
        _apply(finding, found, out, rows, rubric_set, capped)
    split = _mean_vote(out, votes, hallucination, rubric_set)
    if split is not None:
        _apply(split, [split], out, rows, rubric_set, capped)
    return out
