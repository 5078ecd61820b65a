"""The calibration report: judges against lawyers for one quarter, and the trend across quarters."""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from legal_judge.calibration.verdict import labels_rule
from legal_judge.reports import charts
from legal_judge.reports import model as rm
from legal_judge.reports.data import ReportData

__all__ = ["calibration_report"]

ENSEMBLE = "ensemble"


def calibration_report(data: ReportData) -> rm.Report:
    """Build the calibration report from a stored ``CalibrationReport`` and the stored history."""
    r = data.report
    banners = []
    if r.get("below_quarterly_standard"):
        banners.append(rm.Note(f"Only {r['n_labelled_items']} labelled items: below the quarterly "
                               f"standard of {r.get('quarterly_standard', 50)}. Treat the figures as "
                               "indicative.", "warning"))
    verdict = r.get("verdict") or ("recalibrate" if r.get("recalibrate") else "ok")
    if verdict == "recalibrate":
        worst = r.get("headline") or ("the judges diverge from the lawyers on "
                                      + ", ".join(r["recalibrate_rubrics"]))
        banners.append(rm.Note(f"RECALIBRATE: {worst}.", "danger"))
    elif verdict == "insufficient":
        banners.append(rm.Note("INSUFFICIENT: no rubric has the labelled items its verdict "
                               f"needs ({labels_rule(r.get('min_labels', 20), r.get('min_labels_recalibrate'))}): no verdict either way.", "warning"))
    if r.get("insufficient_rubrics"):
        banners.append(rm.Note("No verdict (too few labels) on: "
                               + ", ".join(r["insufficient_rubrics"]) + ".", "warning"))
    banners.extend(rm.Note(n) for n in r.get("notes", []))
    return rm.Report(
        kind="calibration", id=data.id, title=f"Calibration {data.id}",
        subtitle=f"quarter {r['quarter']} · run {r.get('run_id') or 'n/a'} · ensemble judge_id "
                 f"{r.get('ensemble_judge_id') or 'n/a'}",
        banners=banners,
        sections=[_overview(r), _verdicts(r), _scatter(r), _pass_fail(r), _agreement(r),
                  _panel(r), _trend(data), _largest(r)],
        source={"report": r, "history": data.extra.get("history", [])},
    )


def _overview(r: dict[str, Any]) -> rm.Section:
    items = [("quarter", r["quarter"]), ("run", str(r.get("run_id") or "n/a")),
             ("source", r["source"]), ("rubric set", r["rubric_set"]),
             ("labelled items", str(r["n_labelled_items"])),
             ("annotators", ", ".join(r["annotators"]) or "n/a"),
             ("divergence threshold (points)", rm.fmt(r["threshold"], "g")),
             ("verdict", str(r.get("verdict") or ("recalibrate" if r["recalibrate"] else "ok"))
              + (": " + ", ".join(r["recalibrate_rubrics"]) if r["recalibrate_rubrics"] else "")),
             *((f"judge_id of {j}", str(jid)) for j, jid in sorted(r["judge_ids"].items()))]
    return rm.Section("Overview", [rm.KeyValues(items)], "overview")


def _verdicts(r: dict[str, Any]) -> rm.Section:
    rows = []
    for comp in r["rubrics"]:
        for a in comp["judges"]:
            why = "; ".join(x["message"] for x in a.get("reasons", [])) or a.get("note") or "-"
            rows.append([comp["rubric"], a["judge"], str(a["n"]), a.get("verdict", "-"), why])
    for judge, p in sorted(r["pass_fail"].items()):
        why = "; ".join(x["message"] for x in p.get("reasons", [])) or p.get("note") or "-"
        rows.append(["pass/fail", judge, str(p["n"]), p.get("verdict", "-"), why])
    limits = (f"|mean divergence| > {r['threshold']:g} points; quadratic-weighted kappa < "
              f"{r.get('min_kappa', 0.6):g}; limits of agreement beyond ±{r.get('max_loa', 1.5):g} "
              f"points; false-pass rate > {r.get('max_false_pass', 0.1):.0%}; {labels_rule(r.get('min_labels', 20), r.get('min_labels_recalibrate'))}"
              + (f"; {r['policy_line']}" if r.get("policy_line") else "")
              + "".join(f"; {line}" for line in r.get("override_lines") or []))
    return rm.Section("Verdict", [
        rm.Note("Rules: " + limits + ". Raw agreement is shown beside kappa: it overstates "
                "chance-corrected agreement."),
        rm.Table("Verdict per rubric and judge, with every reason that fired",
                 ["rubric", "judge", "n", "verdict", "reasons"], rows, numeric=["n"]),
    ], "verdict")


def _panel(r: dict[str, Any]) -> rm.Section:
    rows, notes = [], []
    for p in r.get("panel", []):
        for j in p["judges"]:
            rows.append([p["rubric"], j["judge"], rm.fmt(j["kappa_quadratic"]), rm.fmt(j["mae"]),
                         rm.fmt(j["suggested_weight"])])
        rows.append([p["rubric"], "ensemble", "", rm.fmt(p["ensemble_mae"]), ""])
        notes.append(f"{p['rubric']}: {len(p['judges'])} judges count as "
                     f"{rm.fmt(p['effective_judges'], '.1f')} independent judge(s) (Kish; mean "
                     f"error correlation {rm.fmt(p['mean_error_correlation'])}, {p['n_items']} items)"
                     + (f"; {p['note']}" if p.get("note") else ""))
    if not rows:
        return rm.Section("The panel's real size", [rm.Note("Fewer than two judges scored the "
                                                            "labelled items.")], "panel")
    return rm.Section("The panel's real size", [
        *[rm.Note(n) for n in notes],
        rm.Table("Per judge against the lawyers; suggested weights ∝ 1/MSE (not applied: write them "
                 "into the ensemble to use them)", ["rubric", "judge", "kappa quadratic",
                                                    "MAE (points)", "suggested weight"], rows,
                 numeric=["kappa quadratic", "MAE (points)", "suggested weight"]),
    ], "panel")


def _panels(r: dict[str, Any]) -> tuple[str, dict[str, tuple[list[float], list[float]]]]:
    numeric = [c["rubric"] for c in r["rubrics"] if c["kind"] == "numeric"]
    judges = {p["judge"] for p in r["pairs"]}
    judge = ENSEMBLE if ENSEMBLE in judges else min(judges, default=ENSEMBLE)
    panels: dict[str, tuple[list[float], list[float]]] = {}
    for rubric in numeric:
        pts = [(p["human_score"], p["judge_score"]) for p in r["pairs"]
               if p["rubric"] == rubric and p["judge"] == judge and p["judge_score"] is not None]
        if pts:
            panels[rubric] = ([h for h, _ in pts], [j for _, j in pts])
    return judge, panels


def _scatter(r: dict[str, Any]) -> rm.Section:
    judge, panels = _panels(r)
    if not panels:
        return rm.Section("Judge vs lawyer", [rm.Note("No numeric judge/lawyer pairs to plot.")], "scatter")
    t1 = f"Judge ({judge}) vs lawyer per rubric"
    t2 = f"Bland-Altman: {judge} minus lawyer"
    return rm.Section("Judge vs lawyer", [
        rm.Chart(t1, charts.scatter_identity(panels, title=t1),
                 "Each point is one item (a small fixed jitter separates equal scores); the dashed "
                 "line is perfect agreement; points above it are scored higher by the judge."),
        rm.Chart(t2, charts.bland_altman(panels, title=t2),
                 "Difference against the mean of the two scores. Solid line: mean difference; dashed "
                 "lines: mean ± 1.96 SD of the plotted differences (limits of agreement)."),
    ], "scatter")


def _pass_fail(r: dict[str, Any]) -> rm.Section:
    rows = [[j, str(p["n"]), str(p["both_pass"]), str(p["judge_pass_human_fail"]),
             str(p["judge_fail_human_pass"]), str(p["both_fail"]), rm.pct(p["agreement"]),
             rm.fmt(p["kappa"]), rm.pct(p.get("false_pass_rate")), rm.ci(p.get("false_pass_ci95"), ".0%"),
             p["source"]] for j, p in sorted(r["pass_fail"].items())]
    blocks: list[Any] = []
    judge = ENSEMBLE if ENSEMBLE in r["pass_fail"] else min(r["pass_fail"], default=None)
    if judge is not None:
        p = r["pass_fail"][judge]
        title = f"Pass/fail: {judge} vs lawyers"
        blocks.append(rm.Chart(title, charts.confusion_matrix(
            [[p["both_pass"], p["judge_pass_human_fail"]],
             [p["judge_fail_human_pass"], p["both_fail"]]],
            title=title, rows=["judge pass", "judge fail"], cols=["lawyer pass", "lawyer fail"],
            harmful=(0, 1)),
            f"Red cell, harmful: the judge passed {p['judge_pass_human_fail']} answer(s) the "
            "lawyers failed (false passes: a bad answer shipped). Blue cells: the judge and the "
            "lawyers agree, or the judge failed an answer the lawyers passed (extra review "
            "work, not harm)."))
    blocks.append(rm.Table("Pass/fail confusion per judge (rows: judge, columns: lawyers)",
                           ["judge", "n", "both pass", "judge pass / lawyer fail",
                            "judge fail / lawyer pass", "both fail", "agreement", "kappa",
                            "false-pass rate", "95% CI (Clopper-Pearson)", "source"],
                           rows, numeric=["n", "both pass", "judge pass / lawyer fail",
                                          "judge fail / lawyer pass", "both fail", "agreement",
                                          "kappa", "false-pass rate"],
                           harmful=["judge pass / lawyer fail", "false-pass rate"]))
    return rm.Section("Pass/fail agreement", blocks, "passfail")


def _agreement(r: dict[str, Any]) -> rm.Section:
    rows = []
    inter = []
    for comp in r["rubrics"]:
        for a in comp["judges"]:
            rows.append([comp["rubric"], a["judge"], str(a["n"]), rm.fmt(a["mean_divergence"], "+.2f"),
                         rm.ci(a["ci95"], "+.2f"), rm.fmt(a["mean_abs_divergence"]), rm.fmt(a["kappa"]),
                         rm.fmt(a["kappa_linear"]), rm.fmt(a["kappa_quadratic"]),
                         rm.ci(a.get("kappa_quadratic_ci95")), rm.pct(a.get("raw_agreement")),
                         rm.ci(a.get("loa"), "+.2f"),
                         rm.fmt(a["alpha_ordinal"]), rm.fmt(a["alpha_interval"]), rm.fmt(a["spearman"]),
                         a.get("verdict") or ("recalibrate" if a["recalibrate"] else "ok")])
        ia = comp.get("inter_annotator")
        if ia:
            inter.append([comp["rubric"], ", ".join(ia["annotators"]), str(ia["items_multi"]),
                          rm.fmt(ia["alpha_ordinal"]), rm.fmt(ia["alpha_interval"]),
                          rm.fmt(ia["alpha_nominal"])])
    num = ["n", "mean divergence", "MAD", "kappa", "kappa linear", "kappa quadratic", "α ordinal",
           "α interval", "Spearman"]
    return rm.Section("Agreement statistics", [
        rm.Table("Per rubric and judge: divergence (judge - lawyer) with 95% CI, Cohen's kappa, "
                 "Krippendorff's alpha, Spearman",
                 ["rubric", "judge", "n", "mean divergence", "95% CI", "MAD", "kappa", "kappa linear",
                  "kappa quadratic", "κ quad 95% CI", "raw agreement", "limits of agreement",
                  "α ordinal", "α interval", "Spearman", "verdict"], rows,
                 numeric=[*num, "raw agreement"]),
        rm.Table("Lawyers among themselves (inter-annotator)",
                 ["rubric", "annotators", "items with 2+ labels", "α ordinal", "α interval",
                  "α nominal"], inter, numeric=["items with 2+ labels", "α ordinal", "α interval",
                                                "α nominal"]),
    ], "agreement")


def _trend(data: ReportData) -> rm.Section:
    history = data.extra.get("history", [])
    series: dict[str, list[tuple[str, float | None, Any]]] = defaultdict(list)
    for h in history:
        series[h["rubric"]].append((h["quarter"], h["mean_divergence"], h["ci95"]))
    rows = [[h["rubric"], h["quarter"], str(h["judge_id"]), str(h["n"]),
             rm.fmt(h["mean_divergence"], "+.2f"), rm.ci(h["ci95"], "+.2f"),
             rm.fmt(h["kappa_quadratic"]), "YES" if h["drift"] else "no",
             "yes" if h["judge_changed"] else "no"] for h in history]
    blocks: list[Any] = []
    numeric = {k: v for k, v in series.items() if any(m is not None for _, m, _ in v)}
    if numeric:
        title = "Ensemble divergence from lawyers across quarters"
        blocks.append(rm.Chart(title, charts.trend_lines(numeric, title=title,
                                                         ylabel="mean judge - lawyer (95% CI)")))
    blocks.append(rm.Table("History per rubric (the latest calibration of each quarter)",
                           ["rubric", "quarter", "judge_id", "n", "mean divergence", "95% CI",
                            "kappa quadratic", "drift", "judge changed"], rows,
                           numeric=["n", "mean divergence", "kappa quadratic"]))
    return rm.Section("Trend across quarters", blocks, "trend")


def _said(comments: list[dict[str, Any]]) -> str:
    return "\n".join(f"{c['annotator']}: {c['comment']}" for c in comments) or "-"


def _largest(r: dict[str, Any]) -> rm.Section:
    rows = [[d["item_id"], d["rubric"], d["judge"], rm.fmt(d["judge_score"]), rm.fmt(d["human_score"]),
             rm.fmt(d["difference"], "+.2f"), _said(d.get("comments", []))]
            for d in r["largest_disagreements"]]
    misses = [[m["item_id"], m["judge"], "pass" if m["judge_pass"] else "fail",
               "pass" if m["lawyers_pass"] else "fail", _said(m.get("comments", []))]
              for m in r.get("pass_fail_misses", [])]
    return rm.Section("Where the judges got it wrong", [
        rm.Table("Answers the judges decided differently from the lawyers (false passes first), "
                 "with the lawyers' comments",
                 ["item", "judge", "judge's verdict", "lawyers' verdict", "lawyers' comments"], misses),
        rm.Table("Items where a judge is furthest from the lawyers",
                 ["item", "rubric", "judge", "judge score", "lawyer score", "difference",
                  "lawyers' comments"],
                 rows, numeric=["judge score", "lawyer score", "difference"])], "largest")
