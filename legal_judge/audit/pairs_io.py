"""Read and write pair files: the ``audit stats`` input (pairs scored elsewhere), JSONL.

One row per pair: ``{"dimension" (or "probe" with "expected_direction"), "pair_id", "variant_a_input", "variant_a_score",
"variant_b_input", "variant_b_score", "error"}`` (scores null when ``error`` is set); optional
``kind``, ``subgroup``, ``quality``, ``order``, ``repeat_score`` and ``winners``. Every defect is
reported at once with its line.
"""

from __future__ import annotations

from pathlib import Path

from legal_judge.audit.analysis import PairRow
from legal_judge.dataset import read_jsonl_models
from legal_judge.errors import InputError, Problem

__all__ = ["read_pairs", "write_pairs"]


def read_pairs(path: Path) -> list[PairRow]:
    """Parse and validate a pairs JSONL file.

    Raises:
        InputError: unreadable file, invalid JSON, unknown or missing fields, duplicate pair ids,
            a score given together with an error, or a missing score without an error.
    """
    rows: list[PairRow] = []
    problems: list[Problem] = []
    seen: set[tuple[str, str]] = set()
    for lineno, row in read_jsonl_models(path, PairRow, problems):
        key = (row.name, row.pair_id)
        if key in seen:
            problems.append(Problem(str(path), lineno, "pair_id", f"duplicate pair {row.pair_id}"))
        seen.add(key)
        scores = (row.variant_a_score, row.variant_b_score)
        if row.error is not None and any(s is not None for s in scores):
            problems.append(Problem(str(path), lineno, "error",
                                    "scores must be null when 'error' is set"))
        if row.error is None and any(s is None for s in scores):
            problems.append(Problem(str(path), lineno, "variant_a_score",
                                    "a missing score needs an 'error' saying why"))
        rows.append(row)
    if problems:
        raise InputError(problems)
    if not rows:
        raise InputError([Problem(str(path), None, None, "no pairs in the file")])
    return rows


def write_pairs(rows: list[PairRow], path: Path) -> None:
    """Write pairs as JSONL (the format :func:`read_pairs` reads)."""
    path.write_text("".join(r.model_dump_json(exclude_none=False) + "\n" for r in rows),
                    encoding="utf-8")
