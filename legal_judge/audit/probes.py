"""Discrimination probes as data, and one quality-degrading perturbation per probe.

A probe (``probes.v1.yaml`` for the built-in ones, or a user YAML file of the same shape) degrades an
answer the dataset marks as sound and names the rubric(s) whose score must move (``direction: drop``,
or ``rise`` for a probe that improves the answer), plus per-pair checks of the judge's rules
(``{rubric, at_most}``, ``{rubric, not_equals}``, ``{overall}`` on the degraded verdict). A target
that returns a single score (a generic judge) is probed on that score (rubric ``score``).

Perturbations turn one sound base item into its degraded variant, or into None when they do not
apply to it (no conclusion to reverse, no citation family known, nothing to cut): such items are
listed in the report as not applicable, never forced. User probes need no code:

- ``find_replace``: ``params.rules`` as for dimensions; the variant with the rules applied is the
  degraded answer (not applicable when nothing changed);
- ``template``: ``params.a`` maps ``prompt``/``response`` to sandboxed Jinja templates (the
  degraded answer), as for dimensions.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any, Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, model_validator

from legal_judge.audit.dimensions import PERTURBATIONS as DIMENSION_PERTURBATIONS
from legal_judge.audit.entries import Catalogue
from legal_judge.dataset import expected_pass_of
from legal_judge.errors import ConfigError
from legal_judge.models import BenchmarkItem
from legal_judge.sentences import sentences

__all__ = [
    "BUILTIN_PROBES_PATH",
    "PROBES",
    "Probe",
    "ProbeCheck",
    "builtin_probes",
    "degrade_for",
    "is_sound",
    "jurisdiction_family",
    "legal_sentences",
    "load_probe_file",
    "resolve_probes",
]

BUILTIN_PROBES_PATH = Path(__file__).parent / "probes.v1.yaml"
SCORE = "score"  # the target's own score (a generic judge's only score)


class ProbeCheck(BaseModel):
    """One rule checked on every degraded verdict: a rubric bound, a category, or the pass/fail."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str | None = None
    rubric: str | None = None
    at_most: float | None = None
    at_least: float | None = None
    not_equals: str | None = None
    equals: str | None = None
    overall: Literal["pass", "fail"] | None = None

    @model_validator(mode="after")
    def _one_rule(self) -> ProbeCheck:
        rubric_rules = [self.at_most, self.at_least, self.not_equals, self.equals]
        if self.overall is not None:
            if self.rubric is not None or any(r is not None for r in rubric_rules):
                raise ValueError("a check is either {overall: ...} or {rubric: ..., <rule>}")
        elif self.rubric is None or sum(r is not None for r in rubric_rules) != 1:
            raise ValueError("a rubric check needs 'rubric' and exactly one of at_most, at_least, "
                             "equals, not_equals")
        return self

    @property
    def label(self) -> str:
        """The check in words."""
        if self.name:
            return self.name
        if self.overall is not None:
            return f"the verdict is {self.overall}"
        rule = next(f"{k.replace('_', ' ')} {v}" for k, v in
                    (("at_most", self.at_most), ("at_least", self.at_least),
                     ("equals", self.equals), ("not_equals", self.not_equals)) if v is not None)
        return f"{self.rubric} {rule}"

    def holds(self, detail: dict[str, Any]) -> bool | None:
        """Whether the degraded verdict meets the check; None when the verdict lacks the field."""
        if self.overall is not None:
            got = detail.get("overall")
            return None if got is None else got == self.overall
        assert self.rubric is not None
        if self.rubric in (detail.get("scores") or {}):
            value = float(detail["scores"][self.rubric])
            if self.at_most is not None:
                return value <= self.at_most + 1e-9
            if self.at_least is not None:
                return value >= self.at_least - 1e-9
            return None
        category = (detail.get("categories") or {}).get(self.rubric)
        if category is None:
            return None
        if self.equals is not None:
            return bool(category == self.equals)
        if self.not_equals is not None:
            return bool(category != self.not_equals)
        return None


class Probe(BaseModel):
    """One discrimination probe: how answers are degraded and which scores must move."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = Field(pattern=r"^[a-z][a-z0-9_]*$")
    description: str
    perturbation: str
    rubrics: list[str] = Field(min_length=1)
    direction: Literal["drop", "rise"] = "drop"
    applies_to: Literal["sound", "all"] = "sound"
    rule: str | None = None
    checks: list[ProbeCheck] = Field(default_factory=list)
    remediation: str | None = None
    params: dict[str, Any] = Field(default_factory=dict)

    @property
    def alternative(self) -> Literal["greater", "less"]:
        """The one-sided alternative of ``d = original - degraded``."""
        return "greater" if self.direction == "drop" else "less"


class _ProbeFile(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str = "probes"
    version: int = 1
    probes: list[Probe]


def resolve_probes(names: list[str] | None, *, extra_file: str | Path | None = None
                   ) -> list[Probe]:
    """The probes to run: built-in plus user ones by name (all when ``names`` is None; none when
    ``names`` is ``[]`` or ``["none"]``).

    Raises:
        ConfigError: a name that is neither built in nor in the user file.
    """
    if names in ([], ["none"]):
        PROBES.with_file(extra_file)  # a defective user file is refused even when no probe runs
        return []
    return PROBES.select(names, extra_file=extra_file, fix_note=" (or none)")


def is_sound(item: BenchmarkItem) -> bool:
    """Whether the dataset marks the item's answer as sound (what a probe may degrade).

    ``metadata.sound`` decides when present; else ``metadata.answer_kind == "correct"``; else
    ``metadata.expected_pass`` with every numeric expected score at least 4.
    """
    meta = item.metadata if isinstance(item.metadata, dict) else {}
    if isinstance(meta.get("sound"), bool):
        return bool(meta["sound"])
    if "answer_kind" in meta:
        return meta["answer_kind"] == "correct"
    scores = meta.get("expected_scores") or {}
    numeric = [v for v in scores.values() if isinstance(v, int | float)]
    return expected_pass_of(meta) is True and bool(numeric) and min(numeric) >= 4


def jurisdiction_family(jurisdiction: str | None) -> str | None:
    """``US-CA`` -> ``US``, ``GB-EWS`` -> ``GB``, ``EU`` -> ``EU``."""
    if not jurisdiction:
        return None
    return jurisdiction.split("-", 1)[0].strip().upper() or None


# perturbations ---------------------------------------------------------------------------------
ProbePerturbation = Callable[[BenchmarkItem, dict[str, Any], np.random.Generator],
                             BenchmarkItem | None]
# Sentence-ish chunks of the raw text (end punctuation or a line break), so an edit leaves the
# rest of the answer byte for byte as it was.
_CHUNK = re.compile(r"[^.!?\n]+[.!?]*")


def _same_case(original: str, replacement: str) -> str:
    first = next((c for c in original if c.isalpha()), "")
    if first.isupper():
        i = next((k for k, c in enumerate(replacement) if c.isalpha()), None)
        if i is not None:
            return replacement[:i] + replacement[i].upper() + replacement[i + 1:]
    return replacement


def _sub_once(rule: dict[str, Any], text: str, *, count: int = 1) -> tuple[str, int]:
    pattern = re.compile(rule["find"], re.IGNORECASE)
    return pattern.subn(lambda m: _same_case(m.group(0), m.expand(rule["replace"])), text,
                        count=count)


def _flip_conclusion(item: BenchmarkItem, params: dict[str, Any],
                     rng: np.random.Generator) -> BenchmarkItem | None:
    # The first chunk a rule reverses; a bare "No." or "Yes, very likely." is followed by the
    # sentence that states the conclusion, which is reversed too (at most ``max_flips``).
    text, rules = item.response, list(params["rules"])
    max_flips = int(params.get("max_flips", 2))
    flips, out, last, done = 0, [], 0, False
    for m in _CHUNK.finditer(text):
        if done:
            break
        chunk = m.group(0)
        for rule in rules:
            new, n = _sub_once(rule, chunk)
            if n:
                out.append(text[last:m.start()] + new)
                last, flips = m.end(), flips + 1
                done = len(chunk.split()) >= 4 or flips >= max_flips
                break
    if not flips:
        return None
    return item.model_copy(update={"response": "".join(out) + text[last:]})


def _swap_jurisdiction(item: BenchmarkItem, params: dict[str, Any],
                       rng: np.random.Generator) -> BenchmarkItem | None:
    swap = (params.get("swaps") or {}).get(jurisdiction_family(item.jurisdiction) or "")
    if not swap:
        return None
    text, total = item.response, 0
    for rule in swap["rules"]:
        text, n = _sub_once(rule, text, count=0)
        total += n
    if total < int(params.get("min_replacements", 2)):
        return None
    return item.model_copy(update={"response": text})


def _fabricate_authority(item: BenchmarkItem, params: dict[str, Any],
                         rng: np.random.Generator) -> BenchmarkItem | None:
    pool = (params.get("citations") or {}).get(jurisdiction_family(item.jurisdiction) or "")
    if not pool:
        return None
    citation = pool[int(rng.integers(len(pool)))]
    lead = str(params.get("lead", "as held in"))
    text = item.response
    for m in _CHUNK.finditer(text):
        chunk = m.group(0)
        body = chunk.rstrip(".!? ")
        if len(chunk.split()) >= 5 and chunk.rstrip().endswith((".", "!", "?")):
            end = chunk[len(body):]
            new = f"{body}, {lead} {citation}{end}"
            return item.model_copy(update={"response": text[:m.start()] + new + text[m.end():]})
    return None


def _hedge_only(item: BenchmarkItem, params: dict[str, Any],
                rng: np.random.Generator) -> BenchmarkItem | None:
    texts = list(params["texts"])
    return item.model_copy(update={"response": texts[int(rng.integers(len(texts)))]})


_ABBREV = re.compile(r"(?:\bv|U\.S|\bNo|\bCo|\bInc|\bLtd|\bCal|N\.Y|\bss?|\bart|\bLab|\bCiv"
                     r"|\bRev|\be\.g|\bi\.e|\bCorp|\bSt|\bDr|\bMr|\bMs)\.$")


def legal_sentences(text: str) -> list[str]:
    """Sentences, without the false breaks legal text invites (``Miranda v. Arizona``,
    ``384 U.S. 436``, ``Decree-Law No. 33``): a chunk ending in a citation abbreviation, or
    followed by one starting with a digit, is joined to the next."""
    out: list[str] = []
    for chunk in sentences(text):
        if out and (_ABBREV.search(out[-1]) or chunk[:1].isdigit()):
            out[-1] = f"{out[-1]} {chunk}"
        else:
            out.append(chunk)
    return out


def _truncate(item: BenchmarkItem, params: dict[str, Any],
              rng: np.random.Generator) -> BenchmarkItem | None:
    sents = legal_sentences(item.response)
    keep = max(1, math.floor(float(params.get("keep", 0.6)) * len(sents) + 0.5))
    if len(sents) < 2 or keep >= len(sents):
        return None
    return item.model_copy(update={"response": " ".join(sents[:keep])})


_WORDS = re.compile(r"[\w'§.-]+", re.UNICODE)


def _stems(text: str) -> set[str]:
    return {w.lower().strip(".,;:()'\"")[:6] for w in _WORDS.findall(text)}


def carries(sentence: str, signal: str) -> bool:
    """Whether a sentence states an expected signal (most of its significant words appear)."""
    terms = [w.lower().strip(".,;:()'\"")[:6] for w in _WORDS.findall(signal) if len(w) > 2]
    terms = terms or [signal.lower()[:6]]
    have = _stems(sentence)
    return sum(t in have for t in terms) / len(terms) >= 0.6


def _drop_signals(item: BenchmarkItem, params: dict[str, Any],
                  rng: np.random.Generator) -> BenchmarkItem | None:
    sents = legal_sentences(item.response)
    signals = list(item.expected_signals)
    kept = [s for s in sents if not any(carries(s, sig) for sig in signals)]
    if not signals or not kept or len(kept) == len(sents):
        return None
    return item.model_copy(update={"response": " ".join(kept)})


def _user(name: str) -> ProbePerturbation:
    def apply(item: BenchmarkItem, params: dict[str, Any],
              rng: np.random.Generator) -> BenchmarkItem | None:
        degraded = DIMENSION_PERTURBATIONS[name](item, params, rng).a
        if (degraded.prompt, degraded.response) == (item.prompt, item.response):
            return None
        return degraded

    return apply


PROBE_PERTURBATIONS: dict[str, ProbePerturbation] = {
    "flip_conclusion": _flip_conclusion,
    "swap_jurisdiction": _swap_jurisdiction,
    "fabricate_authority": _fabricate_authority,
    "hedge_only": _hedge_only,
    "truncate": _truncate,
    "drop_signals": _drop_signals,
    "find_replace": _user("find_replace"),
    "template": _user("template"),
}

#: The built-in probes and a user's ``--probes-file``.
PROBES: Catalogue[Probe] = Catalogue(
    kind="probe", builtin_path=BUILTIN_PROBES_PATH, file_model=_ProbeFile, field="probes",
    perturbations=PROBE_PERTURBATIONS, option="--probes-file", code="audit-probe-unknown")
builtin_probes = PROBES.builtin
load_probe_file = PROBES.load


def degrade_for(probe: Probe, item: BenchmarkItem, rng: np.random.Generator
                ) -> BenchmarkItem | None:
    """The degraded variant of ``item`` under ``probe``, or None when the probe does not apply.

    Raises:
        ConfigError: a probe whose parameters lack what its perturbation needs.
    """
    try:
        return PROBE_PERTURBATIONS[probe.perturbation](item, dict(probe.params), rng)
    except KeyError as exc:
        raise ConfigError(f"probe '{probe.name}': missing parameter {exc}",
                          code="audit-probe-params",
                          fix="see probes.v1.yaml for the parameters of each perturbation") from None
