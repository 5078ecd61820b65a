"""What a simulated judge takes from the lawyers' examples in its prompt (``calibrate align``).

The few-shot block (``prompts/judge_examples.v1.j2``) shows labelled answers with the lawyers'
scores and the judge error each one illustrates. The simulator models two effects a real judge
shows, so alignment has something to fix and something to overstate:

- each exemplar of a false pass (the judge passed, the lawyers failed) removes a share of the
  profile's ``leniency`` (``exemplar_fix`` per exemplar): a held-out improvement; a lawyers' note
  on a false pass (``prompts/judge_notes.v1.j2``) carries the same mark and counts the same;
- an answer that is itself one of the exemplars is scored as the lawyers scored it (the judge
  copies the example): an in-sample improvement only, which cross-fitting exposes.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

__all__ = ["EXAMPLE_CLOSE", "EXAMPLE_OPEN", "FALSE_PASS_MARK", "Exemplars", "read_exemplars"]

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
