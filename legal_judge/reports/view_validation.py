"""The validation report of a judge change (``calibrate validate`` / ``calibrate align``).

Computes nothing: it lays out a stored ``ValidationReport``. The verdict and the allowed uses come
first, in one sentence a lawyer understands; then the two judges side by side per rubric, the
pass/fail confusion matrices, in-sample beside cross-fitted agreement (align), the items the
judges decided differently, and the policy applied.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from legal_judge.errors import ConfigError
from legal_judge.reports import model as rm

__all__ = ["validation_report", "write_validation_report"]

_TONE = {"better": "ok", "not worse": "ok", "worse": "danger", "cannot tell": "warning"}


def _rate(rate: dict[str, Any] | None) -> str:
    if not rate or rate.get("value") is None:
        return "n/a"
    return f"{rm.pct(rate['value'])} ({rate['k']}/{rate['n']})"


def _diff(d: dict[str, Any] | None, spec: str = "+.3f") -> str:
    if not d or d.get("estimate") is None:
        return "n/a"
    return f"{rm.fmt(d['estimate'], spec)} [{rm.ci(d.get('ci95'), spec)}], p={rm.fmt(d['p_value'], '.3g')}"


def _side_by_side(r: dict[str, Any]) -> rm.Section:
    rows = []
    for row in r["rubrics"]:
        cand, inc = row["candidate"], row["incumbent"]
        rows.append([row["rubric"], str(row["n"]), _rate(cand["agreement"]),
                     _rate(inc["agreement"]), rm.fmt(cand.get("kappa")), rm.fmt(inc.get("kappa")),
                     rm.fmt(cand.get("mae")), rm.fmt(inc.get("mae")),
                     _diff(row.get("mae_difference") or row["agreement_difference"]),
                     row["verdict"], "yes" if row.get("may_gate") else "no"])
    table = rm.Table("Candidate and incumbent against the lawyers' consensus, on the same items "
                     "(difference: candidate - incumbent in mean absolute error for numeric "
                     "rubrics, in agreement otherwise)",
                     ["rubric", "n", "agreement (cand)", "agreement (inc)", "κ (cand)", "κ (inc)",
                      "MAE (cand)", "MAE (inc)", "difference [95% CI]", "verdict", "may gate"],
                     rows, numeric=["n"])
    reasons = rm.Table("Why each verdict", ["rubric", "verdict", "reason", "labels still needed"],
                       [[row["rubric"], row["verdict"], row["reason"],
                         "" if row.get("items_needed") is None else str(row["items_needed"])]
                        for row in r["rubrics"]])
    return rm.Section("Per rubric, side by side", [table, reasons], "rubrics")


def _pass_fail(r: dict[str, Any]) -> rm.Section:
    pf = r["rubrics"][0]
    rows = []
    for who in ("candidate", "incumbent"):
        f = pf[who]
        m = f.get("confusion") or {}
        rows.append([f"{who}: {f['judge']}", str(m.get("both pass", 0)),
                     str(m.get("judge pass, lawyers fail", 0)),
                     str(m.get("judge fail, lawyers pass", 0)), str(m.get("both fail", 0)),
                     _rate(f.get("false_pass")), _rate(f.get("false_fail"))])
    blocks: list[Any] = [rm.Table("Pass/fail confusion matrices (lawyers' decision as truth)",
                                  ["judge", "both pass", "judge pass, lawyers fail",
                                   "judge fail, lawyers pass", "both fail", "false-pass rate",
                                   "false-fail rate"], rows)]
    blocks.append(rm.KeyValues([
        ("false-pass rate difference", _diff(pf.get("false_pass_difference"))),
        ("false-fail rate difference", _diff(pf.get("false_fail_difference"))),
        ("agreement difference", _diff(pf.get("agreement_difference")))]))
    return rm.Section("Pass/fail: the false-pass rate first", blocks, "pass-fail")


def _cross_fit(r: dict[str, Any]) -> rm.Section | None:
    cf = r.get("cross_fit")
    if not cf:
        return None
    table = rm.Table("Pass/fail agreement with the lawyers: in-sample (built and scored on the same "
                     "labels, optimistic) beside cross-fitted (each item scored by a candidate "
                     "built without it; the verdict uses these)",
                     ["figure", "in-sample", "cross-fitted", "incumbent"],
                     [["agreement", rm.fmt(cf.get("in_sample_agreement")),
                       rm.fmt(cf.get("cross_fitted_agreement")), rm.fmt(cf.get("incumbent_agreement"))],
                      ["false-pass rate", rm.fmt(cf.get("in_sample_false_pass")),
                       rm.fmt(cf.get("cross_fitted_false_pass")), "see above"]])
    notes = (rm.Table("The lawyers' notes draft, applied as drafted and cross-validated (each fold's "
                      "notes gathered from the other folds): does it help on answers it never saw?",
                      ["figure", "notes, cross-fitted", "incumbent"],
                      [["agreement", rm.fmt(cf.get("notes_cross_fitted_agreement")),
                        rm.fmt(cf.get("incumbent_agreement"))],
                       ["false-pass rate", rm.fmt(cf.get("notes_cross_fitted_false_pass")),
                        rm.fmt(cf.get("incumbent_false_pass"))]])
             if cf.get("notes_count") else None)
    facts = rm.KeyValues([("method", f"{cf['method']}, k = {cf['k']} lawyers' examples"),
                          ("folds", f"{cf['folds']} (seed {cf['seed']}, stratified by pass/fail)"),
                          ("candidate prompt", str(cf.get("prompt_dir"))),
                          ("lawyers' notes (draft, not applied)", str(cf.get("notes_file")))])
    blocks: list[Any] = [table, notes, facts] if notes is not None else [table, facts]
    return rm.Section("Alignment: in-sample vs cross-fitted", blocks, "alignment")


def _uses(r: dict[str, Any]) -> rm.Section:
    a = r["allowed"]
    items = [("may gate on", ", ".join(a["may_gate"]) or "nothing")]
    items += [(f"may not gate on {k}", v) for k, v in a["may_not_gate"].items()]
    items += [(f"validated on {c['calibration_id']}",
               f"run {c['run_id']}, {c['quarter']}, {c['n_items']} items, {c['created_at'][:10]}")
              for c in a["validated_on"]]
    items += [("revalidate when", w) for w in a["revalidate_when"]]
    return rm.Section("Allowed uses", [rm.KeyValues(items)], "uses")


def _differing(r: dict[str, Any]) -> rm.Section:
    def yn(v: bool | None) -> str:
        return {True: "pass", False: "fail"}.get(v, "n/a") if v is not None else "n/a"

    rows = [[d["item_id"], d["answer"][:300], yn(d["candidate_pass"]), yn(d["incumbent_pass"]),
             yn(d["lawyers_pass"]), ", ".join(f"{k}={v}" for k, v in d["lawyers_scores"].items()),
             d.get("comment") or ""] for d in r.get("differing", [])]
    return rm.Section("Items the two judges decided differently", [rm.Table(
        "Candidate's false passes first", ["item", "answer", "candidate", "incumbent", "lawyers",
                                           "lawyers' scores", "lawyer's comment"], rows)],
        "differing")


def validation_report(r: dict[str, Any]) -> rm.Report:
    """The report of a stored validation (``ValidationReport`` as JSON)."""
    banners = [rm.Note(r["headline"], _TONE[r["verdict"]])]  # type: ignore[arg-type]
    banners += [rm.Note(f"Why: {reason}") for reason in r.get("reasons", [])]
    if r.get("simulated"):
        banners.append(rm.Note("SIMULATED JUDGE: for demos and tests, never a judge of record.",
                               "warning"))
    banners += [rm.Note(line, "warning") for line in r.get("override_lines", [])]
    overview = rm.KeyValues([
        ("verdict", r["verdict"]),
        ("candidate", f"{r['candidate']['spec']} (judge_id {r['candidate']['judge_id']})"),
        ("incumbent", f"{r['incumbent']['spec']} (judge_id {r['incumbent']['judge_id']})"),
        ("lawyer-labelled items", str(r["n_items"])), ("policy", r.get("policy_line", "")),
        *((f"note {i + 1}", n) for i, n in enumerate(r.get("notes", [])))])
    sections = [rm.Section("Overview", [overview], "overview"), _uses(r), _pass_fail(r)]
    cross = _cross_fit(r)
    sections += ([cross] if cross else []) + [_side_by_side(r), _differing(r)]
    return rm.Report(kind="validation", id=r["validation_id"],
                     title=f"Validation {r['validation_id']}",
                     subtitle=f"{r['candidate']['spec']} against {r['incumbent']['spec']} · "
                           f"{r['created_at']}", banners=banners, sections=sections,
                     source={"report": r})


def write_validation_report(r: dict[str, Any], path: Path) -> Path:
    """Write the report as HTML (``.html``) or Markdown (``.md``).

    Raises:
        ConfigError: another suffix, or the file cannot be written.
    """
    from legal_judge.reports.build import write_report

    suffix = path.suffix.lower()
    if suffix not in (".html", ".htm", ".md"):
        raise ConfigError(f"--report {path}: write .html or .md", code="report-format",
                          fix="name the file validation.html or validation.md")
    report = validation_report(r)
    if suffix == ".md":
        return write_report(report, markdown=path)[0]
    return write_report(report, html=path)[0]
