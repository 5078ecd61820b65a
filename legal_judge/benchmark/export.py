"""A run's results as one flat row per item: CSV, JSONL or Parquet (``runs export`` and ``run --out``).

Columns: the item (``item_id``, ``jurisdiction``, ``expected_pass`` when the dataset has it), the
ensemble (``status``, ``overall``, ``hallucination``, ``ensemble.<rubric>``, ``ensemble.<rubric>.judged``
(the judges' mean before an answer rule capped it), ``flagged_for_review``, ``flags``, ``overrides``,
``judged_overall`` (the vote before a rule forced a fail), ``rule_fail_reasons``, ``reason``), then per judge under its short name (the ensemble's ``name``,
else the spec without its ``@URL``): ``<judge>.status``, ``<judge>.overall``, ``<judge>.<rubric>``
and ``<judge>.<rubric>.rationale`` for each rubric, ``<judge>.hallucination`` (with its rationale),
``<judge>.rule_fail_reasons`` and ``<judge>.reason``. Every row has every column; items a stopped
run has not judged yet have ``status = pending``. CSV cells (and headers) are neutralised against
formula injection.
"""

from __future__ import annotations

import csv
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from legal_judge.dataset import expected_pass_of
from legal_judge.errors import ConfigError, MissingDependency
from legal_judge.files import atomic_path
from legal_judge.store import Store

__all__ = ["EXPORT_FORMATS", "ExportResult", "check_export_path", "csv_safe", "export_results",
           "export_run", "result_rows", "short_judge_names"]

ExportFormat = Literal["csv", "jsonl", "parquet"]
EXPORT_FORMATS: tuple[ExportFormat, ...] = ("csv", "jsonl", "parquet")
_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def csv_safe(value: Any) -> Any:
    """Prefix a quote to text a spreadsheet would run as a formula (``=HYPERLINK(...)``)."""
    if isinstance(value, str) and value.startswith(_FORMULA_START):
        return "'" + value
    return value


@dataclass(frozen=True)
class ExportResult:
    """What an export wrote."""

    path: Path
    format: ExportFormat
    rows: int
    pending: int


def short_judge_names(labels: list[str]) -> dict[str, str]:
    """Judge label -> column prefix: the label without a spec's ``@base_url`` when that is unique."""
    short = {label: label.split("@", 1)[0] if "@" in label and ":" in label.split("@", 1)[0]
             else label for label in labels}
    taken = list(short.values())
    return {label: s if taken.count(s) == 1 else label for label, s in short.items()}


def _judges(store: Store, run_id: str, verdicts: dict[tuple[str, str], dict[str, Any]]) -> list[str]:
    configured = list(store.get_run(run_id)["config"].get("judge_ids", {}))
    seen = sorted({judge for _, judge in verdicts} - set(configured))
    return configured + seen


def _judge_cells(prefix: str, v: dict[str, Any] | None, rubrics: list[str]) -> dict[str, Any]:
    v = v or {}
    scores, rationales = v.get("scores") or {}, v.get("rationales") or {}
    row: dict[str, Any] = {f"{prefix}.status": v.get("status", "pending"),
                           f"{prefix}.overall": v.get("overall")}
    for rubric in rubrics:
        row[f"{prefix}.{rubric}"] = scores.get(rubric)
        row[f"{prefix}.{rubric}.rationale"] = rationales.get(rubric)
    row[f"{prefix}.hallucination"] = v.get("hallucination")
    row[f"{prefix}.hallucination.rationale"] = rationales.get("hallucination")
    row[f"{prefix}.rule_fail_reasons"] = "; ".join(v.get("rule_fail_reasons") or [])
    row[f"{prefix}.reason"] = v.get("reason")
    return row


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
    """One flat row per item of the run, every row with the same columns (see the module docstring).

    A calibrated run's rows keep the raw ensemble scores in ``ensemble.<rubric>`` and label the
    corrected ones ``ensemble.<rubric>.calibrated``.

    Raises:
        NotFoundError: no such run.
    """
    results = store.load_results(run_id)
    verdicts = store.load_verdicts(run_id)
    calibrated = _calibrated_columns(store, run_id)
    judges = _judges(store, run_id, verdicts)
    names = short_judge_names(judges)
    items = store.load_items(run_id)
    rubrics = sorted({r for res in results.values() for r in res.get("scores", {})}
                     | {r for v in verdicts.values() for r in v.get("scores") or {}})
    with_expected = any(expected_pass_of(i.get("metadata")) is not None for i in items)
    rows = []
    for item in items:
        r = results.get(item["id"]) or {}
        row: dict[str, Any] = {"item_id": item["id"], "jurisdiction": item.get("jurisdiction")}
        if with_expected:
            row["expected_pass"] = expected_pass_of(item.get("metadata"))
        scores = r.get("scores") or {}
        row |= {"status": r.get("status", "pending"), "overall": r.get("overall"),
                "hallucination": r.get("hallucination")}
        if calibrated is not None:
            # ensemble.<rubric> stays the judges' raw figure; the corrected one is labelled.
            cal = calibrated(r) if r.get("status") == "ok" else {}
            row |= {f"ensemble.{k}": cal.get(f"ensemble.{k}", scores.get(k)) for k in rubrics}
            row |= {f"ensemble.{k}.calibrated": cal.get(f"ensemble.{k}.calibrated")
                    for k in rubrics}
            row["calibration"] = cal.get("calibration")
        else:
            row |= {f"ensemble.{k}": scores.get(k) for k in rubrics}
        # The judges' own mean beside a score an answer rule capped (and the vote beside a
        # forced fail): the same figures the store keeps in raw_scores and raw_overall.
        raw = r.get("raw_scores") or {}
        row |= {f"ensemble.{k}.judged": raw.get(k) for k in rubrics}
        row |= {"flagged_for_review": r.get("flagged_for_review", False) if r else None,
                "flags": "; ".join(r.get("flags") or []),
                "overrides": "; ".join(r.get("overrides") or []),
                "judged_overall": r.get("raw_overall"),
                "rule_fail_reasons": "; ".join(r.get("rule_fail_reasons") or []),
                "reason": r.get("reason")}
        for judge in judges:
            row |= _judge_cells(names[judge], verdicts.get((item["id"], judge)), rubrics)
        rows.append(row)
    return rows


def _format_of(path: Path, fmt: str | None) -> ExportFormat:
    suffix = path.suffix.lower().lstrip(".")
    if fmt is None:
        if suffix not in EXPORT_FORMATS:
            raise ConfigError(f"cannot tell the export format of {path.name}", code="export-format",
                              fix="use a .csv, .jsonl or .parquet file name, or --format")
        return suffix
    if fmt not in EXPORT_FORMATS:
        raise ConfigError(f"unknown export format '{fmt}'", code="export-format",
                          fix="use one of: " + ", ".join(EXPORT_FORMATS))
    if suffix in EXPORT_FORMATS and suffix != fmt:
        raise ConfigError(f"{path.name} is named .{suffix} but the format is {fmt}",
                          code="export-format", fix=f"name the file .{fmt}, or drop --format")
    return fmt


def _write_text(fh: Any, rows: list[dict[str, Any]], fmt: ExportFormat) -> None:
    if fmt == "jsonl":
        for row in rows:
            fh.write(json.dumps(row, ensure_ascii=False) + "\n")
        return
    columns = list(dict.fromkeys(k for row in rows for k in row))
    writer = csv.DictWriter(fh, fieldnames=columns)
    # Headers carry judge names from the ensemble file: neutralised like cells.
    writer.writerow({c: csv_safe(c) for c in columns})
    for row in rows:
        writer.writerow({k: csv_safe(v) for k, v in row.items()})


def _write_parquet(tmp: str, rows: list[dict[str, Any]]) -> None:
    try:
        import pyarrow as pa
        import pyarrow.parquet as pq
    except ImportError:
        raise MissingDependency("--format parquet", package="pyarrow",
                                extra="parquet") from None
    pq.write_table(pa.Table.from_pylist(rows), tmp)


def check_export_path(path: Path, *, fmt: str | None = None) -> ExportFormat:
    """The format ``path`` will be written in; checked before a run pays for anything.

    Raises:
        ConfigError: unknown or mismatched format, or a folder that does not exist.
        MissingDependency: parquet without pyarrow.
    """
    chosen = _format_of(path, fmt)
    parent = path.parent if str(path.parent) else Path(".")
    if not parent.is_dir():
        raise ConfigError(f"cannot write {path}: the folder {parent} does not exist",
                          code="export-folder", fix=f"create it first (mkdir -p {parent})")
    if chosen == "parquet":
        try:
            import pyarrow  # noqa: F401
        except ImportError:
            raise MissingDependency("--format parquet", package="pyarrow",
                                    extra="parquet") from None
    return chosen


def export_run(store: Store, run_id: str, path: Path, *, fmt: str | None = None) -> ExportResult:
    """Write the run's rows to ``path`` atomically (a failed export leaves no half-written file).

    Args:
        store: The store holding the run.
        run_id: The run.
        path: The file to write; its suffix gives the format unless ``fmt`` is given.
        fmt: ``csv``, ``jsonl`` or ``parquet`` (needs pyarrow).

    Raises:
        ConfigError: unknown or mismatched format. MissingDependency: parquet without pyarrow.
        NotFoundError: no such run.
    """
    chosen = check_export_path(path, fmt=fmt)
    rows = result_rows(store, run_id)
    with atomic_path(path) as tmp:
        if chosen == "parquet":
            _write_parquet(str(tmp), rows)
        else:
            with tmp.open("x", encoding="utf-8", newline="") as fh:
                _write_text(fh, rows, chosen)
    return ExportResult(path=path, format=chosen, rows=len(rows),
                        pending=sum(1 for r in rows if r["status"] == "pending"))


def export_results(store: Store, run_id: str, path: Path) -> Path:
    """Write the results file (format from the suffix); kept for callers of the first API."""
    return export_run(store, run_id, path).path
