"""A candidate run for the comparison tests: the bundled sample answered by a new system."""

from __future__ import annotations

import json
from pathlib import Path

#: Items whose answer the candidate run replaces by a pure hedge (they regress) and items whose
#: hedge it replaces by an answer covering the expected signals (they improve).
REGRESSED = ("us-ny-007", "us-ca-001", "gb-ews-001")
IMPROVED = ("us-fed-006", "gb-ews-005", "fr-003")
HEDGE = ("It depends on the circumstances. Every case is different, so you should consult a "
         "qualified lawyer before doing anything.")


def candidate_dataset(folder: Path) -> Path:
    """The bundled sample with a new system's answers: three worse, three better."""
    from legal_judge.dataset import sample_dataset_path

    rows = [json.loads(line) for line in sample_dataset_path().read_text(encoding="utf-8")
            .splitlines() if line.strip()]
    for row in rows:
        if row["id"] in REGRESSED:
            row["response"] = HEDGE
        if row["id"] in IMPROVED:
            row["response"] = ("Yes, and the rule is clear. " + " ".join(
                f"The answer turns on {s}." for s in row["expected_signals"]) + " "
                + row["metadata"]["lawyer_conclusion"])
    path = folder / "candidate.jsonl"
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows),
                    encoding="utf-8")
    return path
