"""The debias comparison report: accuracy per bias x mode with CIs, and the recommendation."""

from __future__ import annotations

from typing import Any

from legal_judge.judge.mitigation import toml_line
from legal_judge.reports import charts
from legal_judge.reports import model as rm
from legal_judge.reports.data import ReportData

__all__ = ["debias_report", "plain_first"]

PLAIN = "plain"


def debias_report(data: ReportData) -> rm.Report:
    """Build the debias report from a stored experiment report (``debias_analysis.analyze`` + ids)."""
    r = data.report
    banners = []
    if r.get("simulated"):
        banners.append(rm.Note("SIMULATED JUDGE: accuracies come from the deterministic simulator "
                               "(demo and tests only); do not choose a mitigation from them.", "danger"))
    settings = r.get("settings", {})
    modes = plain_first(settings.get("modes") or r.get("modes", {}))
    return rm.Report(
        kind="debias", id=data.id, title=f"Debias experiment {data.id}",
        subtitle=f"judge {r.get('judge', 'n/a')} ({r.get('spec', '')}) · judge_id "
                 f"{r.get('judge_id', 'n/a')} · {str(r.get('created_at', ''))[:19]} UTC",
        banners=banners,
        sections=[_overview(r, settings, modes), _accuracy(r, modes), _recommendations(r),
                  _cost(r, modes)],
        source={"report": {k: v for k, v in r.items() if k != "outcomes"}},
    )


def plain_first(modes: Any) -> list[str]:
    """The modes in the order a reader compares them: ``plain`` (the baseline) first, then the
    others as the experiment listed them."""
    names = list(modes)
    return [m for m in names if m == PLAIN] + [m for m in names if m != PLAIN]


def _overview(r: dict[str, Any], settings: dict[str, Any], modes: list[str]) -> rm.Section:
    # The judge by its name; the judge_id hashes of each mode are in the "Cost per mode" section.
    items = [("judge", str(r.get("judge", "n/a"))),
             *([("spec", str(r["spec"]))] if r.get("spec") and r.get("spec") != r.get("judge")
               else []),
             ("modes", ", ".join(modes)),
             ("biases", ", ".join(settings.get("biases", []))),
             ("pairs", str(settings.get("pairs", "n/a"))), ("trials", str(settings.get("trials", "n/a"))),
             ("orders", str(settings.get("orders", "n/a"))),
             ("repeats of plain", str(settings.get("repeats", "n/a"))),
             ("significance level", rm.fmt(settings.get("alpha"), "g"))]
    return rm.Section("Overview", [rm.KeyValues(items)], "overview")


def _ids(value: Any) -> str:
    if isinstance(value, dict):
        return ", ".join(f"{k}: {v}" for k, v in sorted(value.items()))
    return str(value)


def _accuracy(r: dict[str, Any], modes: list[str]) -> rm.Section:
    biases = sorted(r["biases"])
    cells: dict[tuple[str, str], tuple[float | None, Any]] = {}
    rows = []
    for bias in biases:
        by_mode = r["biases"][bias]["modes"]
        for mode in plain_first(by_mode):
            c = by_mode[mode]
            cells[(bias, mode)] = (c["accuracy"], c["ci95"])
            oc = c.get("over_correction") or {}
            rows.append([bias, mode, str(c["n"]), rm.pct(c["accuracy"]), rm.ci(c["ci95"], ".1%"),
                         rm.pts(c.get("change"), none="-") if mode != PLAIN else "-",
                         rm.fmt((c.get("mcnemar") or {}).get("p_value"), ".3g", none="-"),
                         rm.fmt(c.get("p_holm"), ".3g", none="-"),
                         "yes" if c.get("significant") else "no",
                         "YES" if oc.get("flagged") else "no", str(c.get("unscored", 0))])
    title = "Accuracy per bias and mode (95% CI)"
    blocks: list[Any] = []
    if biases:
        blocks.append(rm.Chart(title, charts.grouped_accuracy(biases, modes, cells, title=title),
                               "Share of test trials where the judge picked the correct answer; "
                               "whiskers are Wilson 95% CIs."))
    blocks.append(rm.Table("Accuracy per bias x mode; change against plain with the exact McNemar test, "
                           "Holm-adjusted across the modes compared (significant: adjusted p below "
                           "the significance level)",
                           ["bias", "mode", "trials", "accuracy", "95% CI", "change vs plain (points)",
                            "McNemar p", "p (Holm)", "significant", "over-correction", "unscored"],
                           rows, numeric=["trials", "accuracy", "change vs plain (points)", "McNemar p",
                                          "p (Holm)", "unscored"]))
    return rm.Section("Accuracy per bias and mode", blocks, "accuracy")


def _recommendations(r: dict[str, Any]) -> rm.Section:
    rows = []
    for bias, b in sorted(r["biases"].items()):
        rec = b["recommendation"]
        helped = rec["basis"] == "significant"
        rows.append([bias, rec["mode"], rec["basis"],
                     rm.pts(rec.get("change"), none="-"),
                     rm.fmt(rec.get("p_holm"), ".3g", none="-"),
                     str(rec.get("paper_expectation") or "-"),
                     rm.fmt(b.get("repetition_stability"), ".2f"),
                     toml_line(rec["mode"], bias) if helped else "-"])
    blocks: list[Any] = [rm.Table(
        "Recommended mitigation per bias: a mode is recommended only when it beats plain "
        "significantly (McNemar, Holm across the modes compared)",
        ["bias", "mode", "basis", "accuracy gain (points)", "p (Holm)", "paper expects",
         "repetition stability", "ensemble TOML line"],
        rows, numeric=["accuracy gain (points)", "p (Holm)", "repetition stability"])]
    none = [b for b, v in sorted(r["biases"].items())
            if v["recommendation"]["basis"] != "significant"]
    if none:
        blocks.append(rm.Note(f"No mode helped significantly for {', '.join(none)}: keep plain, or "
                              "measure again with more pairs.", "warning"))
    return rm.Section("Recommendations", blocks, "recommendations")


def _cost(r: dict[str, Any], modes: list[str]) -> rm.Section:
    per_mode = r.get("modes", {})
    rows = [[m, str(t["requests_per_verdict"]), str(t["calls"]), f"{t['input_tokens']:,}",
             f"{t['output_tokens']:,}", rm.fmt(t["tokens_per_trial"], ".0f"),
             "unknown" if t["cost_usd"] is None else f"${t['cost_usd']:.4f}"]
            for m, t in ((m, per_mode[m]) for m in plain_first(per_mode))]
    ids = r.get("judge_ids") or {}
    return rm.Section("Cost per mode", [rm.Table(
        "Requests, tokens and cost per mode",
        ["mode", "requests per verdict", "calls", "input tokens", "output tokens", "tokens per trial",
         "cost"], rows, numeric=["requests per verdict", "calls", "input tokens", "output tokens",
                                 "tokens per trial", "cost"]),
        rm.Table("The judge_id of each mode (per bias where a mode's prompt depends on it): the "
                 "identity its verdicts are cached and audited under",
                 ["mode", "judge_id"], [[m, _ids(ids[m])] for m in plain_first(ids)])], "cost")
