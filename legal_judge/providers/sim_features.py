"""Observable features the simulated judge reads from a rendered judge prompt, and what it takes
from the lawyers' examples in it.

The simulator sees exactly what a real judge sees (the messages), so it parses the prompt sections the
templates in ``prompts/`` produce and measures surface signals in the fenced answer. The bias detectors
here are the same signals the audit's perturbations add, which is what lets a power study check that the
audit finds a bias that is really there.

**Exemplars** (``calibrate align``): the few-shot block (``prompts/judge_examples.v1.j2``) shows
labelled answers with the lawyers' scores and the judge error each one illustrates. The simulator
models two effects a real judge shows, so alignment has something to fix and something to overstate:

- each exemplar of a false pass (the judge passed, the lawyers failed) removes a share of the
  profile's ``leniency`` (``exemplar_fix`` per exemplar): a held-out improvement; a lawyers' note
  on a false pass (``prompts/judge_notes.v1.j2``) carries the same mark and counts the same;
- an answer that is itself one of the exemplars is scored as the lawyers scored it (the judge
  copies the example): an in-sample improvement only, which cross-fitting exposes.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import lru_cache

__all__ = ["BIAS_SIGNALS", "EXAMPLE_CLOSE", "EXAMPLE_OPEN", "FALSE_PASS_MARK", "Exemplars",
           "PromptView", "Quality", "answer_quality", "bias_signals", "parse_prompt",
           "read_exemplars", "signal_coverage"]


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


# answer quality against a known reference ---------------------------------------------------------
# The simulator "knows the law" of the bundled sample: for a question it knows, it compares the
# answer with the sound reference answer point by point (a point = one reference sentence). Text
# added around the points (padding, name-dropping, warm phrasing, markdown) changes no point, so
# the bias dimensions do not move a fair judge; a reversed, dropped or re-sourced point does.
_POLARITY = frozenset({"no", "not", "yes", "cannot", "can", "lawful", "unlawful", "legal",
                       "illegal", "may", "need", "must", "does", "do", "is", "are", "never"})
_TOKEN = re.compile(r"[A-Za-z][\w'-]*|\d[\w.-]*")
_CASE = re.compile(r"\b([A-Z][\w'&-]+(?: [A-Z][\w'&.-]+){0,3}) v\.?(?=\s|$)")
_MARKERS: dict[str, re.Pattern[str]] = {
    "US": re.compile(r"\bU\.S\.C?\.|\bfederal\b|\bEEOC\b|\bCalifornia\b|\bCal\.|\bNew York\b"
                     r"|\bN\.Y\.|\bCPLR\b|\bOhio\b|\bTitle VII\b|\bFMLA\b|\bFamily and Medical Leave"
                     r"|\bLabor Code\b|\bLab\. Code\b|\bCivil Code\b|\bGeneral Obligations Law\b"
                     r"|\bLabor Commissioner\b|\bPregnancy Discrimination Act\b|§"),
    "GB": re.compile(r"\bEngland\b|\bWales\b|\bthe UK\b|\bUKSC\b|\bUKHL\b|\bEWCA\b|\bHouse of Lords"
                     r"|\bAcas\b|\b[Tt]ribunal\b|\b(?:Employment Rights|Equality|Consumer Rights"
                     r"|Consumer Protection|Housing|Limitation|Contracts \(Applicable Law\)) Act \d{4}"
                     r"|\bss?\. \d"),
    "EU": re.compile(r"\bGDPR\b|\bRegulation \(EU\)|\bCJEU\b|\bEU\b|\bArticle \d"
                     r"|\bsupervisory authority\b|\bData Protection Commission\b"),
    "AE": re.compile(r"\bUAE\b|\bUnited Arab Emirates\b|\bDecree-Law\b|\bAED\b|\bMOHRE\b"
                     r"|\bEmiratisation\b|\bDubai\b|\barticle \d"),
    "FR": re.compile(r"\bCode civil\b|\bCode du travail\b|\bCour de cassation\b|\barticle L\d"),
    "LB": re.compile(r"\bLeban(?:on|ese)\b|\bCode of Obligations and Contracts\b"),
}


@dataclass(frozen=True)
class Quality:
    """What the simulator finds when it compares an answer with the reference it knows."""

    retained: float = 1.0
    flipped: bool = False
    fabricated: bool = False
    wrong_jurisdiction: bool = False


def _split(text: str) -> list[str]:
    from legal_judge.sentences import plain_prose, sentences

    return sentences(plain_prose(text))


def _content(sentence: str) -> set[str]:
    return {t.lower() for t in _TOKEN.findall(sentence)
            if len(t) > 2 and t.lower() not in _POLARITY}


def _polarity(sentence: str) -> list[str]:
    return sorted(t.lower() for t in _TOKEN.findall(sentence) if t.lower() in _POLARITY)


def _aligned(point: set[str], sentence: set[str]) -> bool:
    if not point:
        return False
    if len(point) >= 3:
        return len(point & sentence) / len(point) >= 0.7
    return len(point & sentence) / len(point | sentence) >= 0.6


def _family_counts(text: str) -> dict[str, int]:
    return {fam: len(p.findall(text)) for fam, p in _MARKERS.items()}


@lru_cache(maxsize=256)
def _reference_view(reference: str) -> tuple[list[tuple[str, set[str], list[str]]], dict[str, int]]:
    return ([(s, _content(s), _polarity(s)) for s in _split(reference)],
            _family_counts(reference))


def answer_quality(answer: str, reference: str, family: str | None) -> Quality:
    """Compare ``answer`` with the sound ``reference`` answer to the same question.

    ``retained``: share of the reference's points (sentences of three or more content words) the
    answer still states; ``flipped``: a point the answer states with reversed polarity (no/yes,
    not, may/must, lawful/unlawful) and nowhere as the reference does; ``fabricated``: a case the
    reference does not cite, named in a sentence stating one of its points (the authority offered
    for a known proposition); ``wrong_jurisdiction``: most of the reference's own-jurisdiction
    markers gone and another jurisdiction's in their place.
    """
    points, ref_counts = _reference_view(reference)
    answer_sents = [(s, _content(s), _polarity(s)) for s in _split(answer)]
    long_points = [p for p in points if len(p[1]) >= 3]
    retained = (sum(any(_aligned(c, ac) for _, ac, _ in answer_sents) for _, c, _ in long_points)
                / len(long_points)) if long_points else 1.0
    flipped = fabricated = False
    for _, content, polarity in points:
        matches = [(s, pol) for s, ac, pol in answer_sents if _aligned(content, ac)]
        if not matches:
            continue
        if all(pol != polarity for _, pol in matches):
            flipped = True
        if any(name not in reference for s, _ in matches for name in _CASE.findall(s)):
            fabricated = True
    wrong = False
    if family in _MARKERS:
        got = _family_counts(answer)
        foreign = sum(n for fam, n in got.items() if fam != family)
        wrong = (got[family] < 0.5 * ref_counts[family] and foreign >= 2
                 and foreign > got[family])
    return Quality(retained=retained, flipped=flipped, fabricated=fabricated,
                   wrong_jurisdiction=wrong)


EXAMPLE_OPEN = "<<<EXAMPLE_ANSWER>>>"
EXAMPLE_CLOSE = "<<<END_EXAMPLE_ANSWER>>>"
FALSE_PASS_MARK = "(the judge passed an answer the lawyers failed)"
_BLOCK = re.compile(re.escape(EXAMPLE_OPEN) + r"\n(.*?)\n" + re.escape(EXAMPLE_CLOSE)
                    + r"\nLawyers' scores: ([^\n]*)", re.DOTALL)


@dataclass(frozen=True)
class Exemplars:
    """The examples a prompt shows: how many illustrate a false pass, and each one's scores."""

    false_passes: int = 0
    scores: dict[str, dict[str, str]] = field(default_factory=dict)

    def of(self, answer: str) -> dict[str, str] | None:
        """The lawyers' scores of ``answer`` when it is one of the examples, else None."""
        return self.scores.get(answer.strip())


def read_exemplars(system: str) -> Exemplars:
    """The exemplars of a system prompt (none when it has no lawyers' examples block)."""
    if EXAMPLE_OPEN not in system and FALSE_PASS_MARK not in system:
        return Exemplars()
    scores = {}
    for answer, line in _BLOCK.findall(system):
        pairs = (part.split("=", 1) for part in line.split(", ") if "=" in part)
        scores[answer.strip()] = {k.strip(): v.strip() for k, v in pairs}
    return Exemplars(false_passes=system.count(FALSE_PASS_MARK), scores=scores)
