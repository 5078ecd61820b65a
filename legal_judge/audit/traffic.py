"""Production traffic audit: disparities between groups of already-scored outputs (observational).

Scores come from the store (ensemble results of runs, with their items' metadata) or from a JSONL
export (for example Langfuse scores joined with trace metadata: one ``{"score": ..., ...}`` per line).
Outputs are grouped by an attribute (``metadata.client_region``, ``jurisdiction``,
``system_under_test``, or ``length_bucket``); each group with at least ``min_sample`` scores is
compared with a reference group (default: the largest; difference in means with the Welch 95% CI,
Welch's t or Mann-Whitney with an effect size, Holm across groups). Each item counts once, with its
latest score: the same item judged in three runs is one observation, not three independent ones
(rows carry ``item_id``, ``id`` or ``trace_id``; a row without one counts on its own). This shows *that* groups are scored differently, not *why*:
counterbalanced pairs (``audit run``) are needed to prove that the attribute causes it.
"""

from __future__ import annotations

import json
import re
from dataclasses import asdict
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from legal_judge.errors import ConfigError, InputError, Problem
from legal_judge.stats import adjust_pvalues, flag, two_group_test
from legal_judge.store import Store

__all__ = ["parse_since", "traffic_audit", "traffic_rows_from_file", "traffic_rows_from_store"]

CAVEAT = ("Observational: these groups differ in more than the attribute (questions, systems, "
          "quality), so a disparity here is a signal to investigate, not proof of bias; run "
          "counterbalanced pairs (legal-judge audit run) to establish cause.")
#: Row fields that are the score or say which output it is, not a group to compare.
_NOT_ATTRIBUTES = frozenset({"score", "item_id", "id", "trace_id", "run_id", "created_at",
                             "timestamp", "prompt", "response", "reference"})
_SINCE = re.compile(r"^(\d+)([mhdw])$")


def parse_since(value: str, *, now: datetime | None = None) -> datetime:
    """``7d``, ``24h``, ``30m``, ``2w`` or an ISO date/time -> the UTC start of the window."""
    now = now or datetime.now(UTC)
    match = _SINCE.match(value.strip())
    if match:
        n, unit = int(match[1]), match[2]
        return now - timedelta(**{{"m": "minutes", "h": "hours", "d": "days", "w": "weeks"}[unit]: n})
    try:
        parsed = datetime.fromisoformat(value)
    except ValueError:
        raise ConfigError(f"cannot read --since '{value}'", code="audit-since-invalid",
                          fix="use 7d, 24h, 30m, 2w or an ISO date such as 2025-01-31") from None
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)


def _length_bucket(text: str) -> str:
    words = len(text.split())
    return "<100 words" if words < 100 else "100-199 words" if words < 200 else "200+ words"


def _get(row: dict[str, Any], path: str) -> Any:
    if path == "length_bucket":
        return _length_bucket(str(row.get("response", "")))
    node: Any = row
    for part in path.split("."):
        if not isinstance(node, dict) or part not in node:
            return None
        node = node[part]
    return node


def _score(scores: dict[str, Any], rubric: str | None) -> float | None:
    if rubric:
        value = scores.get(rubric)
        return float(value) if isinstance(value, int | float) else None
    nums = [float(v) for v in scores.values() if isinstance(v, int | float)]
    return sum(nums) / len(nums) if nums else None


def traffic_rows_from_store(store: Store, *, since: datetime,
                            rubric: str | None) -> list[dict[str, Any]]:
    """Scored items of every run since ``since``: the item's fields plus ``score``."""
    out = []
    for r in store.ok_results_since(since.isoformat()):
        item = r["item"]
        score = _score(r["result"].get("scores", {}), rubric)
        if score is not None:
            out.append({**item, "item_id": item.get("id"), "run_id": r["run_id"], "score": score,
                        "created_at": r["created_at"]})
    return out


def traffic_rows_from_file(path: Path, *, since: datetime | None = None) -> list[dict[str, Any]]:
    """Rows of a JSONL export: ``score`` plus any attributes (``timestamp`` filters by ``since``)."""
    problems: list[Problem] = []
    out = []
    for lineno, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError as exc:
            problems.append(Problem(str(path), lineno, None, f"invalid JSON: {exc.msg}"))
            continue
        if not isinstance(row, dict) or not isinstance(row.get("score"), int | float):
            problems.append(Problem(str(path), lineno, "score", "a numeric 'score' is required"))
            continue
        stamp = row.get("timestamp")
        if since is not None and isinstance(stamp, str):
            try:
                when = datetime.fromisoformat(stamp)
            except ValueError:
                problems.append(Problem(str(path), lineno, "timestamp", "not an ISO date/time"))
                continue
            if (when if when.tzinfo else when.replace(tzinfo=UTC)) < since:
                continue
        out.append(row)
    if problems:
        raise InputError(problems)
    return out


def _item_key(row: dict[str, Any]) -> str | None:
    for field in ("item_id", "id", "trace_id"):
        if row.get(field) not in (None, ""):
            return f"{field}:{row[field]}"
    return None


def once_per_item(rows: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], dict[str, int]]:
    """Keep each item's latest score (by ``created_at``/``timestamp``, else the later row).

    Returns:
        The kept rows and the counts: ``items`` (identified items), ``repeats_dropped`` (older
        scores of the same items) and ``unidentified`` (rows without an id, each kept).
    """
    latest: dict[str, tuple[str, int, dict[str, Any]]] = {}
    loose: list[dict[str, Any]] = []
    for i, row in enumerate(rows):
        key = _item_key(row)
        if key is None:
            loose.append(row)
            continue
        stamp = str(row.get("created_at") or row.get("timestamp") or "")
        if key not in latest or (stamp, i) >= latest[key][:2]:
            latest[key] = (stamp, i, row)
    kept = [r for _, _, r in sorted(latest.values(), key=lambda t: t[1])] + loose
    identified = sum(1 for r in rows if _item_key(r) is not None)
    return kept, {"items": len(latest), "repeats_dropped": identified - len(latest),
                  "unidentified": len(loose)}


def _attributes(rows: list[dict[str, Any]]) -> list[str]:
    """The attributes the rows carry (``metadata.x`` for a nested one), for a fix to name."""
    found = {"length_bucket"} if any("response" in r for r in rows) else set()
    for row in rows[:500]:
        for key, value in row.items():
            if isinstance(value, dict):
                found |= {f"{key}.{k}" for k, v in value.items() if not isinstance(v, dict | list)}
            elif key not in _NOT_ATTRIBUTES and not isinstance(value, list):
                found.add(key)
    return sorted(found)


def traffic_audit(rows: list[dict[str, Any]], *, attribute: str, min_sample: int = 50,
                  method: str = "auto", significance: float = 0.05, min_effect: float = 0.2,
                  correction: str = "holm", reference: str | None = None) -> dict[str, Any]:
    """Group scored outputs by ``attribute`` and test each eligible group against the reference.

    The reference is the largest eligible group unless named; comparing each group with "all the
    others" would flag the healthy groups too whenever one group is off. Each item counts once,
    with its latest score (:func:`once_per_item`).
    """
    rows, repeats = once_per_item(rows)
    counting = (f"each item counted once, with its latest score ({repeats['repeats_dropped']} "
                f"older score(s) of {repeats['items']} item(s) set aside"
                + (f"; {repeats['unidentified']} row(s) without an id counted as they are"
                   if repeats["unidentified"] else "") + ")")
    groups: dict[str, list[float]] = {}
    for row in rows:
        value = _get(row, attribute)
        if value is not None:
            groups.setdefault(str(value), []).append(float(row["score"]))
    if rows and not groups:
        raise ConfigError(f"--attribute {attribute}: none of the {len(rows)} scored outputs has it",
                          code="audit-traffic-attribute",
                          fix=f"use an attribute the outputs carry: {', '.join(_attributes(rows))}")
    sizes = {g: len(v) for g, v in sorted(groups.items())}
    eligible = [g for g, n in sizes.items() if n >= min_sample]
    base = {"kind": "traffic_audit", "attribute": attribute, "n_scores": sum(sizes.values()),
            "group_sizes": sizes, "min_sample": min_sample, "caveat": CAVEAT,
            "counting": counting, "repeats": repeats,
            "too_small": [g for g in sizes if g not in eligible]}
    if len(eligible) < 2:
        return {**base, "status": "INSUFFICIENT_DATA", "comparisons": [],
                "summary": f"fewer than two groups of '{attribute}' have {min_sample} or more scores"}
    if reference is not None and reference not in eligible:
        raise ConfigError(f"--reference '{reference}' is not a group of '{attribute}' with "
                          f"{min_sample} or more scores", code="audit-traffic-reference",
                          fix=f"use one of: {', '.join(eligible)}")
    ref = reference if reference is not None else max(eligible, key=lambda g: (sizes[g], g))
    how = "named with --reference" if reference is not None else "the largest group"
    comparisons = []
    for g in (x for x in eligible if x != ref):
        res = two_group_test(groups[g], groups[ref], method=method)  # type: ignore[arg-type]
        comparisons.append({"group": g, "versus": ref, **asdict(res)})
    adjusted = adjust_pvalues([c["p_value"] for c in comparisons], correction)  # type: ignore[arg-type]
    for c, p in zip(comparisons, adjusted, strict=True):
        c["p_value_adjusted"] = float(p)
        c["flagged"] = flag(float(p), c["effect_size"], significance=significance,
                            min_effect=min_effect)
        c["ci95"] = list(c["ci95"])
    flagged = [c["group"] for c in comparisons if c["flagged"]]
    return {**base, "status": "complete", "reference": ref, "reference_why": how,
            "comparisons": comparisons, "flagged": flagged,
            "summary": (f"{len(flagged)} of {len(comparisons)} groups of '{attribute}' scored "
                        f"differently from the reference group '{ref}' ({how}, {sizes[ref]} "
                        f"items); {counting}. {CAVEAT}")}
