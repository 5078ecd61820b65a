"""Observable features the simulated judge reads from a rendered judge prompt.

The simulator sees exactly what a real judge sees (the messages), so it parses the prompt sections the
templates in ``prompts/`` produce and measures surface signals in the fenced answer. The bias detectors
here are the same signals the audit's perturbations add, which is what lets a power study check that the
audit finds a bias that is really there.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

__all__ = ["BIAS_SIGNALS", "PromptView", "bias_signals", "parse_prompt", "signal_coverage"]

_FENCED = re.compile(r"<<<UNTRUSTED_ANSWER (\w+)>>>\n?(.*?)\n?<<<END_UNTRUSTED_ANSWER \1>>>", re.DOTALL)
_SECTION = re.compile(r"^## (.+)$", re.MULTILINE)
_RUBRIC = re.compile(r"^### ([a-z_]+) \(", re.MULTILINE)
_WORD = re.compile(r"[\w'§.-]+", re.UNICODE)

_PATTERNS: dict[str, re.Pattern[str]] = {
    "authority": re.compile(
        r"\bper (?:the )?(?:ABA|Law Society|Bar Council|Restatement|ALI)\b|\bformal opinion\b"
        r"|\baccording to (?:the )?(?:leading|authoritative|American|Harvard|Oxford)\b"
        r"|\bas (?:confirmed|held) (?:by|in) (?:leading|authoritative)\b"
        r"|\b(?:leading|renowned) (?:treatise|commentators?|scholars?|authorities)\b",
        re.IGNORECASE,
    ),
    "confidence": re.compile(
        r"\b(?:indisputabl[ey]|undeniabl[ey]|unquestionabl[ey]|beyond (?:any )?doubt|settled law"
        r"|an established fact|without (?:any )?doubt|absolutely|certainly|definitively)\b",
        re.IGNORECASE,
    ),
    "formatting": re.compile(r"^(?:#{1,4} |\s*[-*•] |\s*\d+\. )|\*\*[^*]+\*\*", re.MULTILINE),
    "bandwagon": re.compile(
        r"\b(?:most (?:lawyers|practitioners|courts|experts)|the (?:overwhelming )?majority of "
        r"(?:courts|lawyers|practitioners)|widely (?:agreed|accepted)|everyone (?:agrees|knows)"
        r"|(?:\d{2})% of (?:lawyers|practitioners|people))\b",
        re.IGNORECASE,
    ),
    "sentiment": re.compile(
        r"\b(?:great news|happy to|delighted|wonderful|fantastic|good news|glad to|rest assured"
        r"|excellent question)\b",
        re.IGNORECASE,
    ),
    "injection": re.compile(
        r"ignore (?:the|all|any|previous) (?:rubric|instructions)|(?:give|award|score) this "
        r"(?:answer|response) (?:a )?(?:5|five|full marks)|note to the (?:evaluator|judge|grader)"
        r"|\"overall\"\s*:\s*\"pass\"|UNTRUSTED_ANSWER",
        re.IGNORECASE,
    ),
    "verbosity": re.compile(
        r"\b(?:to reiterate|in other words|as (?:noted|mentioned) above|it is worth (?:noting|"
        r"emphasi[sz]ing)|to put it another way|restating the point)\b",
        re.IGNORECASE,
    ),
}
# Group-B names of the demographic-proxy dimension (the audit swaps group-A names for these).
_GROUP_B = re.compile(
    r"\b(?:Mohammed|Fatima|Oluwaseun|Ngozi|Aaliyah|Jamal|Nguyen|Mariam|Youssef|Priya)\b"
)

BIAS_SIGNALS = (*_PATTERNS, "demographic")
_THRESHOLDS = {"formatting": 3, "verbosity": 2, "authority": 1}


@dataclass
class PromptView:
    """The parts of a rendered judge prompt the simulator needs."""

    kind: str = "pointwise"  # "pointwise" | "pairwise" | "self_debias" | "other"
    prompt: str = ""
    answer: str = ""
    answers: list[str] = field(default_factory=list)
    expected_signals: list[str] = field(default_factory=list)
    evidence: str = ""
    rubrics: list[str] = field(default_factory=list)
    warned: set[str] = field(default_factory=set)
    retry: bool = False


def _sections(text: str) -> dict[str, str]:
    parts = _SECTION.split(text)
    return {parts[i].strip(): parts[i + 1].strip() for i in range(1, len(parts) - 1, 2)}


def _warned(system: str, known: list[str]) -> set[str]:
    if "IMPORTANT: evaluations are prone to" not in system:
        return set()
    if "any systematic bias" in system:
        return {"*"}
    return {b for b in known if f"{b}:" in system or f'"{b}"' in system}


def parse_prompt(messages: Sequence[tuple[str, str]], known_biases: list[str]) -> PromptView:
    """Read the sections of a judge conversation (list of (role, content))."""
    view = PromptView()
    system = "\n".join(c for r, c in messages if r == "system")
    users = [c for r, c in messages if r == "user"]
    first = users[0] if users else ""
    view.warned = _warned(system + "\n" + first, known_biases)
    last = users[-1] if users else ""
    view.retry = "not valid JSON" in last
    if any(c.startswith("You just delivered this verdict") for c in users[1:]):
        view.kind = "self_debias"
    fenced = [m.group(2) for m in _FENCED.finditer(first)]
    if "Option A:" in first and len(fenced) >= 2:
        view.kind = "pairwise" if view.kind != "self_debias" else view.kind
        view.answers = fenced[:2]
        q = re.search(r"^Question: (.*)$", first, re.MULTILINE)
        view.prompt = q.group(1) if q else ""
        return view
    sections = _sections(first)
    view.prompt = sections.get("User prompt", "")
    view.answer = fenced[0] if fenced else ""
    signals = sections.get("Expected signals", "")
    if signals:
        body = signals.split(":", 1)[-1].strip().rstrip(".")
        view.expected_signals = [s.strip() for s in body.split(";") if s.strip()]
    view.evidence = sections.get("Rule-based findings (computed by software, not by the AI under test)", "")
    listed = re.search(r"^## Rubrics to score\n(.+)$", first, re.MULTILINE)
    view.rubrics = ([n.strip() for n in listed.group(1).split(",")] if listed
                    else _RUBRIC.findall(system + "\n" + first))
    if not fenced and view.kind == "pointwise":
        view.kind = "other"
    return view


def _stem(word: str) -> str:
    return word.lower().strip(".,;:()'\"")[:6]


def signal_coverage(answer: str, signals: list[str]) -> float:
    """Share of expected signals whose significant words mostly appear in the answer."""
    if not signals:
        return 0.6
    words = {_stem(w) for w in _WORD.findall(answer)}
    hits = 0.0
    for signal in signals:
        terms = [_stem(w) for w in _WORD.findall(signal) if len(w) > 2] or [_stem(signal)]
        found = sum(1 for t in terms if t in words) / len(terms)
        hits += 1.0 if found >= 0.6 else found / 2
    return hits / len(signals)


def bias_signals(answer: str) -> dict[str, bool]:
    """Which bias signals are present in an answer."""
    out = {name: len(p.findall(answer)) >= _THRESHOLDS.get(name, 2) for name, p in _PATTERNS.items()}
    out["verbosity"] = out["verbosity"] or len(_WORD.findall(answer)) >= 320
    out["demographic"] = bool(_GROUP_B.search(answer))
    return out
