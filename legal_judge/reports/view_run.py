"""The run report: the stored summary, ensemble results and verdicts laid out for a team lead."""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from legal_judge.reports import charts
from legal_judge.reports import model as rm
from legal_judge.reports.data import ReportData
from legal_judge.reports.view_items import items_section

__all__ = ["run_report"]

_SCORE_BINS = [x / 2 for x in range(11)]


def run_report(data: ReportData) -> rm.Report:
    """Build the run report from a run's stored summary, results, verdicts and items."""
    s = data.report
    run = data.extra["run"]
    return rm.Report(
        kind="run", id=data.id, title=f"Run {data.id}",
        subtitle=f"{run.get('status', '')} · created {str(run.get('created_at', ''))[:19]} UTC · "
                 f"ensemble {run['config'].get('ensemble', {}).get('name', 'n/a')} "
                 f"(judge_id {run['config'].get('judge_id', 'n/a')})",
        banners=_banners(s),
        sections=[_overview(s, run), *_escalation(data), _rubrics(s), *_corrected(s),
                  _distributions(data),
                  _judges(s, run), _weights(data), _disagreement(data), _items(data),
                  _overrides(data),
                  _cost(s)],
        source={"summary": s, "run": run},
    )


def _banners(s: dict[str, Any]) -> list[rm.Note]:
    out = []
    if s.get("simulated"):
        out.append(rm.Note("SIMULATED JUDGES: these scores come from the deterministic simulator (demo "
                           "and tests only). They are not a judge of record; do not act on them.",
                           "danger"))
    out.extend(rm.Note(w, "warning") for w in s.get("warnings", []))
    if s.get("inconclusive"):
        out.append(rm.Note(f"{len(s['inconclusive'])} item(s) are INCONCLUSIVE (fewer valid verdicts "
                           "than the quorum) and are not counted as passed.", "warning"))
    return out


def _overview(s: dict[str, Any], run: dict[str, Any]) -> rm.Section:
    exp = s.get("expected_agreement")
    items = [
        ("pass rate", f"{rm.pct(s.get('pass_rate'))} (95% CI {rm.ci(s.get('pass_rate_ci95'), '.1%')})"),
        ("items", f"{s['items']} ({s['scored']} scored, {len(s['inconclusive'])} inconclusive)"),
        ("flagged for human review", str(len(s["flagged_for_review"]))),
        ("items with rule overrides", str(len(s["citation_overrides"]))),
        ("dataset", str(run["config"].get("dataset") or "n/a")),
        ("rubric set", str(run["config"].get("rubric_set") or "n/a")),
        ("system under test", str(run["config"].get("ensemble", {}).get("system_under_test")
                                  or "per item / not set")),
    ]
    items[1:1] = _corrected_overview(s)
    if exp:
        items.append(("agreement with the dataset's expected conclusions",
                      f"{exp['agree']}/{exp['n']} ({rm.pct(exp['rate'])}); passed but should fail: "
                      f"{exp['false_pass']}; failed but should pass: {exp['false_fail']}"))
    return rm.Section("Overview", [rm.KeyValues(items)], "overview")


def _escalation(data: ReportData) -> list[rm.Section]:
    """The run's figures split by the newest escalation: judge-decided, pending, combined."""
    facts = data.extra.get("escalation")
    if not facts:
        return []
    return [rm.Section("Escalation: decided by the judges, reviewed by lawyers",
                       [rm.KeyValues([(str(k), str(v)) for k, v in facts])], "escalation")]


def _rubrics(s: dict[str, Any]) -> rm.Section:
    names = list(s["rubrics"])
    cal = s.get("calibrated")
    raw_means = (cal or {}).get("raw_rubrics") or s["rubrics"]
    means = s.get("corrected_means") or {}
    rows = []
    for r, m in s["rubrics"].items():
        raw, fixed = raw_means.get(r) or m, means.get(r)
        rows.append([r, str(raw["n"]), rm.fmt(raw["mean"]),
                     "too few items" if raw.get("ci_note") else rm.ci(raw["ci95"]),
                     *([rm.fmt(fixed["mean"]) if fixed else "-", rm.ci(fixed["ci95"]) if fixed else "-",
                        fixed["method"] if fixed else "-"] if means else []),
                     rm.fmt(s["krippendorff_alpha"].get(r))])
    title = "Ensemble score per rubric (0-5): the judges' raw mean with 95% CI" + (
        ", and one corrected mean per rubric named by its method" if means else "")
    headers = ["rubric", "n", "mean", "95% CI",
               *(["corrected mean", "corrected 95% CI", "method"] if means else []),
               "Krippendorff α (judges)"]
    blocks: list[Any] = [rm.Table(title, headers, rows,
                                  numeric=["n", "mean", "corrected mean", "Krippendorff α (judges)"])]
    if cal:
        blocks.append(rm.Note(f"Item scores CALIBRATED with {cal['correction_id']} (isotonic); the "
                              "mean column is the judges' own."))
    if s.get("corrected_means_note"):
        blocks.append(rm.Note(s["corrected_means_note"]))
    if names:
        blocks.insert(0, rm.Chart("Rubric means with 95% CI", charts.bar_with_ci(
            names, [raw_means.get(r, s["rubrics"][r])["mean"] for r in names],
            [raw_means.get(r, s["rubrics"][r])["ci95"] for r in names],
            title="Rubric means with 95% CI", xlabel="ensemble score (0-5)", xlim=(0, 5)),
            "Points are the judges' raw ensemble means over scored items; bars are 95% "
            "confidence intervals."))
    if s.get("pass_rate") is not None:
        blocks.insert(0, rm.Chart("Pass rate with 95% CI", charts.bar_with_ci(
            ["pass rate"], [s["pass_rate"]], [s["pass_rate_ci95"]], title="Pass rate with 95% CI",
            xlabel="share of scored items passed", xlim=(0, 1))))
    return rm.Section("Pass rate and rubric means", blocks, "rubrics")


def _corrected_overview(s: dict[str, Any]) -> list[tuple[str, str]]:
    est = s.get("corrected")
    if not est:
        available = s.get("correction_available")
        return [("pass rate corrected for judge error", available["text"])] if available else []
    pr = est["pass_rate"]
    value = (f"{rm.pct(pr['corrected'])} (95% CI {rm.ci(pr['corrected_ci95'], '.1%')}; {pr['method']}, "
             f"{pr['n_labelled']} lawyer labels)" if pr["status"] == "corrected"
             else f"{pr['status']}: {pr['reason']}")
    out = [("pass rate corrected for judge error", value), ("correction", est["label"])]
    pin = est.get("pin")
    if pin:
        on = (f"calibration {pin['calibration_id']} (made {str(pin['calibration_date'])[:10]})"
              if pin["calibration_id"] else "this run's lawyer labels")
        out.append(("corrected figures rest on", f"{on}: {pin['chosen']}; {pin['text']}"))
    if est.get("newer_calibration"):
        out.append(("newer calibration", est["newer_calibration"]["text"]))
    return out


def _corrected(s: dict[str, Any]) -> list[rm.Section]:
    """Raw beside corrected: the judges' pass rate and means and the pinned corrected ones."""
    est = s.get("corrected")
    if not est:
        return []
    rows = []
    for r in [est["pass_rate"], *est["rubrics"].values(),
              *([est["rogan_gladen"]] if est.get("rogan_gladen") else [])]:
        spec = ".1%" if r["name"].startswith("pass rate") else ".2f"
        rows.append([r["name"], rm.fmt(r["raw"], spec), rm.ci(r["raw_ci95"], spec),
                     rm.fmt(r["corrected"], spec) if r["status"] == "corrected" else r["status"],
                     rm.ci(r["corrected_ci95"], spec), r["method"] or "-", str(r["n_labelled"]),
                     r["reason"] or "-"])
    blocks: list[Any] = [
        rm.Note(est["label"] + "."), *[rm.Note(n, "warning") for n in est.get("notes", [])],
        *[rm.Note(w, "warning") for w in est.get("policy_warnings") or []],
        *([rm.Note(est["newer_calibration"]["text"] + ".")] if est.get("newer_calibration") else []),
        rm.Table("Raw (the judges' opinion) beside corrected for judge error (pinned)",
                 ["figure", "raw", "raw 95% CI", "corrected", "corrected 95% CI",
                  "method", "lawyer labels", "note"], rows,
                 numeric=["raw", "corrected", "lawyer labels"])]
    return [rm.Section("Raw and corrected figures", blocks, "corrected")]


def _distributions(data: ReportData) -> rm.Section:
    series: dict[str, list[float]] = defaultdict(list)
    halluc: dict[str, int] = defaultdict(int)
    for r in data.extra["results"].values():
        if r["status"] == "ok":
            for rubric, score in r["scores"].items():
                series[rubric].append(score)
            halluc[str(r.get("hallucination"))] += 1
    blocks: list[Any] = []
    if series:
        title = "Score distributions per rubric"
        blocks.append(rm.Chart(title, charts.histograms(dict(sorted(series.items())), title=title,
                                                        bins=_SCORE_BINS, xlabel="ensemble score")))
    blocks.append(rm.Table("Hallucination (ensemble plurality)", ["value", "items"],
                           [[k, str(v)] for k, v in sorted(halluc.items())], numeric=["items"]))
    return rm.Section("Score distributions", blocks, "distributions")


def _judges(s: dict[str, Any], run: dict[str, Any]) -> rm.Section:
    rubrics = list(s["rubrics"])
    families = {j.get("name") or j["spec"]: j.get("spec", "")
                for j in run["config"].get("ensemble", {}).get("judges", [])}
    title = "Per-judge means vs the ensemble"
    chart = charts.judge_vs_ensemble(rubrics, {n: j["means"] for n, j in s["judges"].items()},
                                     {r: m["mean"] for r, m in s["rubrics"].items()}, title=title)
    rows = [[f"{name} ({families.get(name, '')})", j["judge_id"], str(j["ok"]),
             str(j["inconclusive"]), str(j["error"]), rm.pct(j["pass_rate"]),
             *[rm.fmt(j["means"].get(r)) for r in rubrics]] for name, j in s["judges"].items()]
    rows.append(["ensemble", "", str(s["scored"]), str(len(s["inconclusive"])), "",
                 rm.pct(s.get("pass_rate")), *[rm.fmt(s["rubrics"][r]["mean"]) for r in rubrics]])
    labels = [r.replace("_", " ") for r in rubrics]  # lets long rubric names wrap
    return rm.Section("Judges", [rm.Chart(title, chart), rm.Table(
        "Per judge: verdicts, pass rate and mean per rubric",
        ["judge (spec)", "judge_id", "ok", "inconclusive", "error", "pass rate", *labels], rows,
        numeric=["ok", "inconclusive", "error", "pass rate", *labels])], "judges")


def _weights(data: ReportData) -> rm.Section:
    # The same weighting decision repeats on every item with the same system under test: show each
    # distinct decision once, with the items it applied to.
    decisions: dict[tuple[Any, ...], list[str]] = defaultdict(list)
    for item_id, r in sorted(data.extra["results"].items()):
        key = tuple((w["judge"], w["family"], w["weight"], w["same_family"], w["reason"])
                    for w in r.get("weights", []))
        decisions[key].append(item_id)
    blocks: list[Any] = [rm.Note("Same-family rule: when the system under test shares a family with "
                                 "some judges, the judges of other families carry at least "
                                 f"{data.extra['run']['config'].get('ensemble', {}).get('other_family_min_share', 0.6):.0%} "
                                 "of the weight.")]
    for i, (key, item_ids) in enumerate(sorted(decisions.items(), key=lambda kv: -len(kv[1]))):
        shown = ", ".join(item_ids[:12]) + (" ..." if len(item_ids) > 12 else "")
        blocks.append(rm.Table(f"Weighting {i + 1}: {len(item_ids)} item(s) ({shown})",
                               ["judge", "family", "weight", "same family as SUT", "reason"],
                               [[j, f, f"{w:.3f}", "yes" if same else "no", reason]
                                for j, f, w, same, reason in key], numeric=["weight"]))
    return rm.Section("Weights and same-family decisions", blocks, "weights")


def _disagreement(data: ReportData) -> rm.Section:
    series: dict[str, list[float]] = defaultdict(list)
    for r in data.extra["results"].values():
        for rubric, d in r.get("disagreement", {}).items():
            series[rubric].append(d["range"])
    threshold = data.extra["run"]["config"].get("ensemble", {}).get("disagreement_threshold")
    blocks: list[Any] = []
    if series:
        title = "Judge disagreement per item (max - min score)"
        blocks.append(rm.Chart(title, charts.strip_plot(dict(sorted(series.items())), title=title,
                                                        xlabel="range of judge scores (points)",
                                                        threshold=threshold)))
    rows = [[i, ", ".join(r.get("flags", [])) or "-",
             ", ".join(f"{k} {v['range']:.1f}" for k, v in sorted(r.get("disagreement", {}).items()))]
            for i, r in sorted(data.extra["results"].items()) if r.get("flagged_for_review")]
    blocks.append(rm.Table("Items flagged for human review", ["item", "why", "score range per rubric"],
                           rows))
    return rm.Section("Disagreement", blocks, "disagreement")


def _items(data: ReportData) -> rm.Section:
    results = data.extra["results"]
    return items_section(data.extra["outcomes"], data.extra["items"],
                         {i: r.get("checks") or {} for i, r in results.items()},
                         votes={i: r.get("votes") or {} for i, r in results.items()})


def _overrides(data: ReportData) -> rm.Section:
    rows = [[i, "; ".join(data.extra["results"][i].get("overrides", []))]
            for i in data.report["citation_overrides"] if i in data.extra["results"]]
    inconclusive = [[i, str(data.extra["results"].get(i, {}).get("reason") or "")]
                    for i in data.report["inconclusive"]]
    return rm.Section("Overrides and inconclusive items", [
        rm.Table("Rule overrides (answer rules: a capped score, a forced fail; the judges' own "
                 "figures stay in raw_scores and the votes)", ["item", "override"], rows),
        rm.Table("Inconclusive items", ["item", "reason"], inconclusive),
    ], "overrides")


def _cost(s: dict[str, Any]) -> rm.Section:
    calls = s["calls"]
    rows = [[name, f"${j['cost_usd']:.4f}",
             "yes" if j["cost_unknown"] else "no"] for name, j in s["judges"].items()]
    return rm.Section("Cost and tokens", [
        rm.KeyValues([("provider calls", f"{calls['calls']} (cached {calls['cached']}, failed "
                                      f"{calls['failed']}, retries {calls['retries']})"),
                      ("tokens", f"{s['input_tokens']:,} in / {s['output_tokens']:,} out"),
                      ("cost", f"${s['cost_usd']:.4f}" + ("" if s["cost_complete"]
                                                          else " (some prices unknown)"))]),
        rm.Table("Cost per judge", ["judge", "cost (USD)", "some prices unknown"], rows,
                 numeric=["cost (USD)"]),
    ], "cost")
