"""``legal-judge report --site DIR``: a static site of the whole store.

An index (``DIR/index.html``) of every run, audit, calibration, judge-change validation and debias
experiment, newest first, each linking its report written beside it (``DIR/<kind>s/<id>.html``,
with a link back). The index filters by kind and by text in the page itself (one inline script,
allowed by its hash); like every report it loads nothing from anywhere, so the folder can be
zipped, mailed or opened offline.

The reports are the ones ``report ID --html`` writes (:func:`~legal_judge.reports.build.build_report`
and :func:`~legal_judge.reports.view_validation.validation_report`); the store is read through its
public listing methods only. An entry whose report cannot be built is listed with the reason
and no link, never dropped.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from legal_judge.benchmark.shards import sharded_run_of, unmerged_run
from legal_judge.errors import ConfigError, LegalJudgeError
from legal_judge.reports.build import build_report, write_report
from legal_judge.reports.html import render_page
from legal_judge.reports.model import Report, pct
from legal_judge.reports.view_validation import validation_report
from legal_judge.store import Store

__all__ = ["KINDS", "SiteEntry", "SiteResult", "site_entries", "write_site"]

#: The kinds of the index in the order of its filters: (kind, folder, label).
KINDS: tuple[tuple[str, str, str], ...] = (
    ("run", "runs", "Runs"), ("audit", "audits", "Audits"),
    ("calibration", "calibrations", "Calibrations"), ("validation", "validations", "Validations"),
    ("debias", "experiments", "Debias experiments"))
_FOLDER = {kind: folder for kind, folder, _ in KINDS}
#: How many of each kind the index lists (the newest); a store with more says so on the page.
MAX_PER_KIND = 500


@dataclass
class SiteEntry:
    """One line of the index: what it is, when, what it says, and its report (if any)."""

    kind: str
    id: str
    created_at: str
    status: str
    summary: str
    href: str | None = None
    problem: str | None = None


@dataclass(frozen=True)
class SiteResult:
    """What ``write_site`` wrote."""

    index: Path
    entries: list[SiteEntry]
    reports: int
    truncated: list[str]


def _file_name(entity_id: str) -> str:
    # Ids are generated (letters, digits, dashes); anything else becomes a dash, never a path.
    return re.sub(r"[^A-Za-z0-9._-]", "-", entity_id).lstrip(".") + ".html"


#: The run rows that are judging runs (a calibration sample is stored as a run of its own
#: kind: it has no report, and its calibration is listed).
RUN_KIND = "run"


def _runs(store: Store) -> list[SiteEntry]:
    out = []
    sharded: set[str] = set()
    for r in store.list_runs(limit=MAX_PER_KIND):
        if r["kind"] != RUN_KIND:
            continue
        run = store.get_run(r["id"])
        base = sharded_run_of(run["config"])
        if base is not None:
            # A shard is listed as its run, once (as `runs list` does): the merged run has the
            # report; before the merge the run is listed with its shards' state, no report.
            unmerged = None if base in sharded else unmerged_run(store, base)
            sharded.add(base)
            if unmerged is not None:
                out.append(SiteEntry("run", base, unmerged["created_at"],
                                     unmerged["shards"]["state"],
                                     f"{unmerged['results']}/{unmerged['items']} items judged "
                                     "so far"))
            continue
        s = run["summary"] or {}
        config = run["config"]
        bits = [f"{r['results']}/{r['items']} items"]
        if s.get("pass_rate") is not None:
            bits.append(f"pass rate {pct(s['pass_rate'])}")
        if config.get("dataset"):
            bits.append(f"dataset {Path(str(config['dataset'])).name}")
        if (config.get("ensemble") or {}).get("name"):
            bits.append(f"ensemble {config['ensemble']['name']}")
        if config.get("release"):
            bits.append(f"release {config['release']}")
        if s.get("simulated"):
            bits.append("SIMULATED judges")
        out.append(SiteEntry("run", r["id"], r["created_at"], r["status"], " · ".join(bits)))
    return out


def _audits(store: Store) -> list[SiteEntry]:
    return [SiteEntry("audit", a["id"], a["created_at"], a["status"],
                      f"judge_id {a['judge_id']} · severity {a['severity'] or 'n/a'}")
            for a in store.audits.recent(limit=MAX_PER_KIND)]


def _calibrations(store: Store) -> list[SiteEntry]:
    return [SiteEntry("calibration", c["id"], c["created_at"], c["quarter"],
                      f"quarter {c['quarter']} · run {c['run_id'] or 'n/a'} · judge_id "
                      f"{c['judge_id']}")
            for c in store.calibrations.recent(limit=MAX_PER_KIND)]


def _validations(store: Store) -> list[SiteEntry]:
    return [SiteEntry("validation", v["id"], v["created_at"], v["verdict"],
                      f"{v['candidate']} against judge_id {v['incumbent_judge_id'] or 'n/a'}")
            for v in store.validations.rows(limit=MAX_PER_KIND)]


def _experiments(store: Store) -> list[SiteEntry]:
    out = []
    for e in store.debias_experiments.recent(limit=MAX_PER_KIND):
        r = store.debias_experiments.report(e["id"]) or {}
        chosen = ", ".join(f"{bias}: {mode}" for bias, mode in
                           sorted((r.get("recommendations") or {}).items()))
        bits = [f"judge {r.get('judge') or e['judge_id']}",
                f"modes {', '.join((r.get('settings') or {}).get('modes') or [])}",
                f"recommended {chosen or 'n/a'}"]
        if r.get("simulated"):
            bits.append("SIMULATED judge")
        out.append(SiteEntry("debias", e["id"], e["created_at"], "stored", " · ".join(bits)))
    return out


_LISTERS: tuple[Callable[[Store], list[SiteEntry]], ...] = (
    _runs, _audits, _calibrations, _validations, _experiments)


def site_entries(store: Store) -> list[SiteEntry]:
    """Every run, audit, calibration, validation and debias experiment, newest first."""
    entries = [e for lister in _LISTERS for e in lister(store)]
    return sorted(entries, key=lambda e: (e.created_at, e.id), reverse=True)


def _report(store: Store, entry: SiteEntry) -> Report:
    if entry.kind == "validation":
        stored: dict[str, Any] | None = store.validations.report(entry.id)
        if stored is None:
            raise LegalJudgeError(f"validation {entry.id} has no stored report")
        return validation_report(stored)
    return build_report(store, entry.id)


def write_site(store: Store, folder: Path) -> SiteResult:
    """Write the index and every report of the store into ``folder`` (created if missing).

    Args:
        store: The store to publish (read only).
        folder: The site's folder; files of an earlier site there are overwritten.

    Returns:
        The index path, the entries (each with its link or the reason it has none), how many
        reports were written, and the kinds cut at :data:`MAX_PER_KIND`.

    Raises:
        ConfigError: ``folder`` cannot be created or written (the fix names it).
    """
    try:
        for _, sub, _ in KINDS:
            (folder / sub).mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ConfigError(f"cannot create {folder}: {exc.strerror or exc}", code="report-write",
                          fix=f"choose a folder you can write, or check {folder.parent}") from None
    entries = site_entries(store)
    written = 0
    for entry in entries:
        href = f"{_FOLDER[entry.kind]}/{_file_name(entry.id)}"
        try:
            report = _report(store, entry)
        except (LegalJudgeError, KeyError, TypeError, ValueError) as exc:
            # One unreadable row (an older report's shape) does not hide the rest of the store.
            entry.problem = f"no report: {type(exc).__name__}: {exc}"
            continue
        write_report(report, html=folder / href, home="../index.html")
        entry.href = href
        written += 1
    counts = {kind: sum(e.kind == kind for e in entries) for kind, _, _ in KINDS}
    truncated = [kind for kind, n in counts.items() if n >= MAX_PER_KIND]
    index = folder / "index.html"
    html = render_page("site.html.j2", "site.js", entries=entries, store=str(store.path),
                       filters=[(kind, label, counts[kind]) for kind, _, label in KINDS],
                       truncated=truncated, max_per_kind=MAX_PER_KIND)
    try:
        index.write_text(html, encoding="utf-8")
    except OSError as exc:
        raise ConfigError(f"cannot write {index}: {exc.strerror or exc}", code="report-write",
                          fix=f"check that {folder} is writable") from None
    return SiteResult(index, entries, written, truncated)
