"""Run results as JSONL or CSV (one row per item); CSV cells are neutralised against formula injection."""

from __future__ import annotations

import csv
import json
import os
import tempfile
from pathlib import Path
from typing import Any

from legal_judge.errors import ConfigError
from legal_judge.store import Store

__all__ = ["csv_safe", "export_results", "result_rows"]

_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def csv_safe(value: Any) -> Any:
    """Prefix a quote to text a spreadsheet would run as a formula (``=HYPERLINK(...)``)."""
    if isinstance(value, str) and value.startswith(_FORMULA_START):
        return "'" + value
    return value


def _calibrated_columns(store: Store, run_id: str) -> Any:
    """For a run scored with ``--calibration``: a function giving an item's columns so that
    ``ensemble.<rubric>`` stays the judges' raw score (like every other run's export) and the
    corrected one is ``ensemble.<rubric>.calibrated``, with the correction in ``calibration``."""
    from legal_judge.calibration import run_correction, uncalibrated_scores

    correction = run_correction(store, store.get_run(run_id))
    if correction is None:
        return None

    def columns(r: dict[str, Any]) -> dict[str, Any]:
        raw = uncalibrated_scores(r, correction)
        out: dict[str, Any] = {f"ensemble.{k}": v for k, v in sorted(raw.items())}
        out |= {f"ensemble.{k}.calibrated": v for k, v in sorted(r.get("scores", {}).items())}
        out["calibration"] = correction.id
        return out

    return columns


def result_rows(store: Store, run_id: str) -> list[dict[str, Any]]:
    """One flat row per item: ensemble scores, pass/fail, per-judge scores, flags.

    A calibrated run's rows keep the raw ensemble scores in ``ensemble.<rubric>`` and label the
    corrected ones ``ensemble.<rubric>.calibrated``.
    """
    results = store.load_results(run_id)
    verdicts = store.load_verdicts(run_id)
    calibrated = _calibrated_columns(store, run_id)
    rows = []
    for item in store.load_items(run_id):
        r = results.get(item["id"])
        if r is None:
            continue
        row: dict[str, Any] = {"item_id": item["id"], "status": r["status"], "overall": r.get("overall"),
                               "hallucination": r.get("hallucination")}
        if calibrated is not None and r.get("status") == "ok":
            row |= calibrated(r)
        else:
            row |= {f"ensemble.{k}": v for k, v in sorted(r.get("scores", {}).items())}
        for (item_id, judge), v in sorted(verdicts.items()):
            if item_id != item["id"]:
                continue
            row[f"{judge}.status"] = v["status"]
            row[f"{judge}.overall"] = v.get("overall")
            row |= {f"{judge}.{k}": s for k, s in sorted(v.get("scores", {}).items())}
        row["flags"] = "; ".join(r.get("flags", []) + r.get("overrides", []))
        row["flagged_for_review"] = r.get("flagged_for_review", False)
        rows.append(row)
    return rows


def export_results(store: Store, run_id: str, path: Path) -> Path:
    """Write the results file atomically (a failed export leaves no half-written file)."""
    rows = result_rows(store, run_id)
    suffix = path.suffix.lower()
    if suffix not in (".jsonl", ".csv"):
        raise ConfigError(f"cannot export to {path.name}", code="export-format",
                          fix="use a .jsonl or .csv file name")
    fd, tmp = tempfile.mkstemp(dir=path.parent or Path("."), suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as fh:
            if suffix == ".jsonl":
                for row in rows:
                    fh.write(json.dumps(row, ensure_ascii=False) + "\n")
            else:
                columns = list(dict.fromkeys(k for row in rows for k in row))
                writer = csv.DictWriter(fh, fieldnames=columns)
                # Headers carry judge names from the ensemble file: neutralised like cells.
                writer.writerow({c: csv_safe(c) for c in columns})
                for row in rows:
                    writer.writerow({k: csv_safe(v) for k, v in row.items()})
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path
