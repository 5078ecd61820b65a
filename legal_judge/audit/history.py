"""Versioned judges over time: prior audits, drift between audits, human review, the CI gates.

Every audit records the judge_id ("the judge changed" means "the judge_id changed"). Reviews are
entries of the hash-chained log, never updates of a row, so a sign-off is part of the evidence trail.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from legal_judge.audit.log import AuditLog
from legal_judge.errors import ConfigError, InputError, NotFoundError, Problem
from legal_judge.store import Store

__all__ = [
    "AuditCoverage",
    "audit_needed",
    "audit_coverage",
    "base_judge",
    "base_judge_of_report",
    "check_comparable",
    "comparable",
    "diff_reports",
    "fetch_prior_audit_results",
    "judged_something",
    "latest_audit",
    "prior_audit",
    "load_report",
    "record_review",
    "review_state",
]


def _key(base: dict[str, Any]) -> str:
    where = f"{base.get('provider')}:{base.get('model')}"
    if base.get("base_url"):
        where += f"@{base['base_url']}"
    parts = [where, f"rubric set {base.get('rubric_set') or '(unknown)'}"]
    if base.get("rubric"):
        parts.append(f"rubric {base['rubric']}")
    return " · ".join(parts)


def base_judge(target: Any) -> dict[str, Any]:
    """The audited judge without its mitigation: provider, model (and endpoint), rubric set, and
    the rubric scored with ``--rubric``. Audits of the same base judge are comparable whatever
    their debias mode (a re-audit after a mitigation is what drift is for); ``key`` says it in
    one line."""
    from legal_judge.audit.target import JudgeTarget

    if isinstance(target, JudgeTarget):
        ident = target.judge.identity()
        base: dict[str, Any] = {
            "kind": "legal-judge", "provider": ident["provider"], "model": ident["model"],
            "base_url": ident["base_url"], "rubric_set": target.judge.rubric_set.id,
            "rubric": target.rubric, "debias_mode": target.judge.config.debias.mode}
    else:
        d = target.describe()
        base = {"kind": str(target.kind), "provider": d.get("spec"), "model": d.get("name"),
                "base_url": None, "rubric_set": None, "rubric": None, "debias_mode": None}
    return {**base, "key": _key(base)}


def base_judge_of_report(report: dict[str, Any]) -> dict[str, Any] | None:
    """The base judge a report audited (older reports: from its target spec), or None when the
    report does not say (``audit stats`` of pairs scored elsewhere)."""
    ext = report.get("extensions") or {}
    if isinstance(ext.get("base_judge"), dict):
        return dict(ext["base_judge"])
    spec = str((ext.get("target") or {}).get("spec") or "")
    if ":" not in spec:
        return None
    provider, _, rest = spec.partition(":")
    model, _, url = rest.partition("@")
    base = {"kind": ext.get("target_kind"), "provider": provider, "model": model,
            "base_url": url or None, "rubric_set": None, "rubric": None, "debias_mode": None}
    return {**base, "key": _key(base)}


def comparable(old: dict[str, Any] | None, new: dict[str, Any] | None) -> bool:
    """Whether two base judges are the same (an unknown rubric set of an older report matches)."""
    if old is None or new is None:
        return False
    fields = ("provider", "model", "base_url", "rubric")
    if any((old.get(f) or None) != (new.get(f) or None) for f in fields):
        return False
    a, b = old.get("rubric_set"), new.get("rubric_set")
    return a is None or b is None or a == b


def fetch_prior_audit_results(audit_id: str, *, store: Store | None = None) -> dict[str, Any]:
    """A stored audit: id, judge_id, created_at, status, severity, review state and its report.

    The seed's ``fetch_prior_audit_results`` tool. No LLM writes the audit's findings here: the
    statistics and the drift against this baseline (``audit diff``, the report's drift section)
    are computed by code from what this returns, so no trend can be invented.

    Raises:
        NotFoundError: no such audit in the store.
    """
    store = store or Store()
    row = store.audits.get(audit_id)
    if row is None:
        raise NotFoundError(f"no audit '{audit_id}' in {store.path}",
                            fix="`legal-judge audit list` shows the audits in this store")
    return {"audit_id": row["id"], "judge_id": row["judge_id"], "created_at": row["created_at"],
            "status": row["status"], "severity": row["severity"],
            "config": json.loads(row["config_json"]),
            "review": review_state(store, audit_id),
            "report": json.loads(row["report_json"]) if row["report_json"] else None}


def latest_audit(store: Store, judge_id: str, *, finished_only: bool = True) -> str | None:
    """The newest audit id of a judge_id (complete or insufficient-data ones when finished_only)."""
    return store.audits.latest_id(judge_id, finished_only=finished_only)


#: Statuses of audits whose report rests on judge calls (INSUFFICIENT_DATA stopped before any).
JUDGED_STATUSES = ("complete", "INCONCLUSIVE")


def judged_something(report: dict[str, Any] | None) -> bool:
    """Whether a report rests on at least one complete pair (of a dimension or a probe)."""
    ext = (report or {}).get("extensions") or {}
    parts = [*(ext.get("dimensions") or {}).values(), *(ext.get("probes") or {}).values()]
    return any(int(p.get("pairs_complete") or 0) > 0 for p in parts)


@dataclass(frozen=True)
class AuditCoverage:
    """Whether one judge (judge_id) has an audit that judged something, and which."""

    judge_id: str
    label: str
    audit_id: str | None
    verdict: str | None
    note: str


def _judged_audit(store: Store, judge_id: str) -> tuple[str | None, str | None, int]:
    """The newest audit of ``judge_id`` that judged something, its verdict, and how many audits
    of this judge judged nothing (INSUFFICIENT_DATA, or nothing complete)."""
    empty = 0
    for row in store.audits.reported(judge_id):
        report = row["report"]
        if row["status"] in JUDGED_STATUSES and judged_something(report):
            return str(row["id"]), ((report or {}).get("extensions") or {}).get("verdict"), empty
        empty += 1
    return None, None, empty


def audit_coverage(store: Store, judges: list[tuple[str, str]]) -> list[AuditCoverage]:
    """Per judge (judge_id, label): its newest audit that judged something, or why there is none.

    Only audits that made judge calls count: one that stopped at INSUFFICIENT_DATA before any
    call (or whose pairs all failed) is not an audit of the judge.
    """
    out = []
    for judge_id, label in judges:
        audit_id, verdict, empty = _judged_audit(store, judge_id)
        if audit_id is not None:
            note = f"audited by {audit_id} (verdict {verdict or 'n/a'})"
        elif empty:
            note = (f"not audited: {empty} audit(s) of this judge judged nothing "
                    "(INSUFFICIENT_DATA or no complete pair)")
        else:
            note = "not audited: no audit of this judge_id"
        out.append(AuditCoverage(judge_id, label, audit_id, verdict, note))
    return out


def audit_needed(store: Store, judge_ids: list[str]) -> list[str]:
    """The judge_ids with no audit that judged something (CI triggers on rubric, prompt or model
    change)."""
    return [c.judge_id for c in audit_coverage(store, [(j, j) for j in judge_ids])
            if c.audit_id is None]


def prior_audit(store: Store, audit_id: str) -> dict[str, Any] | None:
    """The latest earlier audit of the same base judge (provider, model, rubric set; any debias
    mode) that judged something: ``{"id", "report", "base_judge", "same_judge_id"}``, or None.

    Drift is only meaningful against the same judge: an audit of another model is no baseline.
    """
    row = store.audits.get(audit_id)
    if row is None or not row["report_json"]:
        return None
    base = base_judge_of_report(json.loads(row["report_json"]))
    if base is None:
        return None
    for other in store.audits.earlier_with_report(audit_id):
        report = other["report"]
        if other["status"] in JUDGED_STATUSES and judged_something(report) and \
                comparable(base_judge_of_report(report), base):
            return {"id": str(other["id"]), "report": report,
                    "base_judge": base_judge_of_report(report),
                    "same_judge_id": other["judge_id"] == row["judge_id"]}
    return None


def record_review(store: Store, audit_id: str, *, approve: bool, reviewer: str,
                  note: str = "") -> dict[str, Any]:
    """Append a reviewer's sign-off (or rejection) of an audit's findings to the log."""
    fetch_prior_audit_results(audit_id, store=store)  # NotFoundError for an unknown id
    if not reviewer.strip():
        raise ConfigError("a review needs the reviewer's name", code="audit-review-invalid",
                          fix="pass --reviewer NAME")
    payload = {"decision": "approved" if approve else "rejected", "reviewer": reviewer,
               "note": note, "reviews": "findings and counterbalanced test design"}
    entry = AuditLog(store).append(audit_id, "review", payload)
    return {**payload, "audit_id": audit_id, "seq": entry.seq, "hash": entry.hash}


def review_state(store: Store, audit_id: str) -> dict[str, Any] | None:
    """The latest review decision of an audit, or None when nobody reviewed it."""
    entries = AuditLog(store).entries(audit_id, kind="review")
    if not entries:
        return None
    last = entries[-1]
    return {**last.payload, "seq": last.seq, "at": last.created_at}


def load_report(ref: str, *, store: Store | None = None) -> dict[str, Any]:
    """A report from a JSON file path or a stored audit id."""
    path = Path(ref)
    if path.exists():
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, json.JSONDecodeError) as exc:
            raise InputError([Problem(str(path), None, None, f"not a JSON report: {exc}")]) from None
        if not isinstance(data, dict) or "dimension_results" not in data:
            raise InputError([Problem(str(path), None, None, "not a bias report")])
        return data
    if path.suffix.lower() == ".json" or len(path.parts) > 1:
        # Looks like a file the user meant, not an audit id: say the file is missing.
        raise InputError([Problem(str(path), None, None, "no such file")],
                         fix="check the path, or give an audit id from `legal-judge audit list`")
    prior = fetch_prior_audit_results(ref, store=store)
    if prior["report"] is None:
        raise NotFoundError(f"audit '{ref}' has no report", fix="re-run the audit")
    return dict(prior["report"])


def check_comparable(old: dict[str, Any], new: dict[str, Any], *, old_ref: str = "old",
                     new_ref: str = "new") -> None:
    """Refuse to compare audits of different base judges.

    Raises:
        ConfigError: the two reports audit different base judges, or one does not say which.
    """
    a, b = base_judge_of_report(old), base_judge_of_report(new)
    if comparable(a, b):
        return
    what_a = a["key"] if a else "a judge it does not name"
    what_b = b["key"] if b else "a judge it does not name"
    raise ConfigError(f"not comparable: {old_ref} audits {what_a}, {new_ref} audits {what_b}",
                      code="audit-diff-not-comparable",
                      fix="diff two audits of the same base judge (provider, model, rubric set; "
                          "any debias mode), or pass --force to compare them anyway")


def _pair_key(pair: dict[str, Any]) -> tuple[str, str]:
    return (str(pair.get("variant_a_input")), str(pair.get("variant_b_input")))


def moved_away(old: dict[str, Any], new: dict[str, Any], *, alpha: float) -> float | None:
    """One-sided p that the bias moved away from zero between two audits of one dimension.

    The per-pair differences are signed by the direction of the old bias (the new one when the
    old mean is zero) and compared: paired by pair (``scipy.stats.ttest_rel``) when the two
    audits judged the same pairs (the same design), else as two samples (Welch's
    ``scipy.stats.ttest_ind``). None when there are too few pairs or no direction.
    """
    from scipy import stats as sps

    before = {_pair_key(p): p["difference"] for p in old.get("test_pairs") or []
              if p.get("difference") is not None}
    after = {_pair_key(p): p["difference"] for p in new.get("test_pairs") or []
             if p.get("difference") is not None}
    direction = old.get("mean_difference") or new.get("mean_difference") or 0.0
    if not direction or len(before) < 2 or len(after) < 2:
        return None
    sign = 1.0 if direction > 0 else -1.0
    shared = [k for k in after if k in before]
    if len(shared) == len(after) == len(before):
        a = [sign * after[k] for k in shared]
        b = [sign * before[k] for k in shared]
        if all(x == y for x, y in zip(a, b, strict=True)):
            return 1.0  # identical answers: no test, no change (DESIGN: all differences zero)
        result = sps.ttest_rel(a, b, alternative="greater")
    else:
        result = sps.ttest_ind([sign * x for x in after.values()],
                               [sign * x for x in before.values()], equal_var=False,
                               alternative="greater")
    p = float(result.pvalue)
    return None if p != p else p  # NaN (no variance at all) decides nothing


def diff_reports(old: dict[str, Any], new: dict[str, Any]) -> list[dict[str, Any]]:
    """Per dimension: effect and mean difference before and after, and what changed.

    ``sign_flip`` marks over-correction (a mitigation that reversed the bias, DESIGN 2.8);
    ``worse`` a bias that moved away from zero significantly (:func:`moved_away` below the new
    audit's significance threshold), which is never shown as merely "still flagged". The caller
    checks first that both audit the same base judge (:func:`check_comparable`).
    """
    before = {d["dimension"]: d for d in old["dimension_results"]}
    after = {d["dimension"]: d for d in new["dimension_results"]}
    alpha = float((new.get("audit_metadata") or {}).get("significance_threshold") or 0.05)
    rows = []
    for name in list(dict.fromkeys([*before, *after])):
        o, n = before.get(name), after.get(name)
        eo = o["effect_size"] if o else None
        en = n["effect_size"] if n else None
        change = None if eo is None or en is None else en - eo
        p_away = moved_away(o, n, alpha=alpha) if o and n else None
        sign_flip = bool(eo and en and eo * en < 0 and n and n["flagged"])
        worse = bool(p_away is not None and p_away < alpha and not sign_flip
                     and abs(n["mean_difference"] or 0) > abs(o["mean_difference"] or 0))  # type: ignore[index]
        rows.append({
            "dimension": name, "effect_old": eo, "effect_new": en, "effect_change": change,
            "mean_difference_old": o["mean_difference"] if o else None,
            "mean_difference_new": n["mean_difference"] if n else None,
            "flagged_old": bool(o and o["flagged"]), "flagged_new": bool(n and n["flagged"]),
            "sign_flip": sign_flip, "moved_away_p": p_away, "worse": worse,
            "status": ("new" if o is None else "dropped" if n is None else
                       "now flagged" if n["flagged"] and not o["flagged"] else
                       "worse" if worse else
                       "resolved" if o["flagged"] and not n["flagged"] else
                       "still flagged" if n["flagged"] else "clear"),
        })
    return rows
