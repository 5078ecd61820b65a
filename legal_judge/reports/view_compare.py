"""The comparison report: run B against baseline run A, the release gate laid out for a reviewer.

:func:`comparison_view` adapts the result of :func:`legal_judge.benchmark.compare.compare_runs` to what the
report shows (one :class:`RubricDelta` per rubric, the pass-rate test, the regressed items). It
reads the fields compare gives today and, where present, the ones it is growing (a Holm-adjusted
p-value, a per-rubric ``status`` such as ``insufficient``, regressed items with before/after), so
the layout does not depend on which of them a given version provides. Nothing is computed here.

The release decision (``compare``'s ``release``: non-inferiority per endpoint, the flip guard,
the policy in force) comes first: the same decision, margins and policy as the terminal, JUnit
and the step summary. "Regressed items" lists every item that went pass -> fail *and* every item
whose rubric score dropped without a flip, so a REGRESSION banner is never followed by "No item
regressed."
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from legal_judge.benchmark.item_outcomes import ItemPair
from legal_judge.reports import charts
from legal_judge.reports import model as rm
from legal_judge.reports.data import ReportData
from legal_judge.reports.view_audit import diff_segments
from legal_judge.reports.view_items import verdict_label

__all__ = ["ComparisonView", "RubricDelta", "comparison_report", "comparison_view"]

_P_ADJUSTED = ("p_adjusted", "p_holm", "p_value_holm", "p_value_adjusted", "adjusted_p_value")


@dataclass(frozen=True)
class RubricDelta:
    """One rubric's change, B - A, as compare reported it."""

    rubric: str
    n: int | None
    delta: float | None
    ci95: list[float] | None
    test: str | None
    p_value: float | None
    p_adjusted: float | None
    effect_size: float | None
    status: str  # regressed | insufficient | no regression | whatever compare says


@dataclass(frozen=True)
class ComparisonView:
    """What the comparison report shows, read from compare's result."""

    run_a: str
    run_b: str
    n_items: int
    warnings: list[str]
    rubrics: list[RubricDelta]
    regressions: list[str]
    regressed_items: list[str]
    rate_a: float | None
    rate_b: float | None
    mcnemar_p: float | None
    discordant: tuple[int | None, int | None]
    extra: dict[str, Any] = field(default_factory=dict)
    #: item -> rubric -> {"before", "after"}: every rubric score that dropped (flip or not).
    dropped_items: dict[str, dict[str, dict[str, float]]] = field(default_factory=dict)


def _status(name: str, r: dict[str, Any], regressions: list[str]) -> str:
    if r.get("status"):
        return str(r["status"])
    if r.get("insufficient"):
        return "insufficient"
    return "regressed" if r.get("regressed") or name in regressions else "no regression"


def _item_id(entry: Any) -> str:
    if isinstance(entry, dict):
        return str(entry.get("item_id") or entry.get("id"))
    return str(entry)


def comparison_view(result: dict[str, Any]) -> ComparisonView:
    """Adapt ``compare_runs``' result (any of its versions) to the report's view model."""
    regressions = list(result.get("regressions") or [])
    rubrics = []
    for name, r in (result.get("rubrics") or {}).items():
        p_adj = next((r[k] for k in _P_ADJUSTED if r.get(k) is not None), None)
        rubrics.append(RubricDelta(
            rubric=name, n=r.get("n"), delta=r.get("mean_difference"), ci95=r.get("ci95"),
            test=r.get("test"), p_value=r.get("p_value"), p_adjusted=p_adj,
            effect_size=r.get("effect_size"), status=_status(name, r, regressions)))
    pr = result.get("pass_rate") or {}
    known = {"run_a", "run_b", "n_items", "warnings", "rubrics", "regressions",
             "regressed_items", "pass_rate", "release", "release_policy", "policy",
             "cannot_tell", "insufficient", "calibrated", "notes"}
    dropped: dict[str, dict[str, dict[str, float]]] = {}
    for name, r in (result.get("rubrics") or {}).items():
        for d in r.get("regressed_items") or []:
            if isinstance(d, dict) and d.get("before") is not None:
                dropped.setdefault(str(d["item_id"]), {})[name] = {"before": d["before"],
                                                                   "after": d["after"]}
    return ComparisonView(
        run_a=str(result["run_a"]), run_b=str(result["run_b"]),
        n_items=int(result.get("n_items") or 0), warnings=list(result.get("warnings") or []),
        rubrics=rubrics, regressions=regressions,
        regressed_items=[_item_id(e) for e in result.get("regressed_items") or []],
        rate_a=pr.get("rate_a"), rate_b=pr.get("rate_b"), mcnemar_p=pr.get("p_value"),
        discordant=(pr.get("b"), pr.get("c")),
        extra={k: v for k, v in result.items() if k not in known}, dropped_items=dropped)


def comparison_report(data: ReportData) -> rm.Report:
    """Build the comparison report from compare's result and both runs' verdicts per item."""
    v = comparison_view(data.report)
    pairs: list[ItemPair] = data.extra["pairs"]
    runs = data.extra["runs"]
    release = data.report.get("release")
    margin = (data.report.get("release_policy") or {}).get("rubric_margin", 0.25)
    return rm.Report(
        kind="comparison", id=data.id, title=f"Comparison: {v.run_b} against {v.run_a}",
        subtitle=f"candidate B {v.run_b} · baseline A {v.run_a} · {v.n_items} paired scored items",
        banners=(_release_banners(v, release, data.extra) if release else
                 _banners(v, margin, data.extra["alpha"])),
        sections=[*([_release(release, data.extra)] if release else []),
                  _overview(v, runs, data.extra), _deltas(v, margin),
                  _pass_fail(v, data.extra["transitions"]),
                  _changed(pairs, "regressed", v, "Regressed items (A passed and B failed, or a "
                           "rubric score dropped)", "regressed"),
                  _changed(pairs, "improved", v, "Improved items (A failed, B passed)",
                           "improved"),
                  _not_compared(pairs)],
        source={"compare": data.report},
    )


def _banners(v: ComparisonView, threshold: float, alpha: float) -> list[rm.Note]:
    out = [rm.Note(w, "warning") for w in v.warnings]
    if v.regressions:
        out.append(rm.Note(f"REGRESSION: {', '.join(v.regressions)} dropped significantly "
                           f"(p < {alpha:g}) by more than {threshold:g} points.", "danger"))
    insufficient = [r.rubric for r in v.rubrics if r.status == "insufficient"]
    if insufficient:
        out.append(rm.Note("Not enough paired items to decide for: " + ", ".join(insufficient)
                           + ". No verdict on these rubrics.", "warning"))
    if not v.regressions and not insufficient:
        out.append(rm.Note(f"No rubric dropped significantly (p < {alpha:g}) by more than "
                           f"{threshold:g} points. This is not proof that B is as good as A: "
                           "read the confidence intervals.", "info"))
    return out


def _release_banners(v: ComparisonView, release: dict[str, Any],
                     extra: dict[str, Any]) -> list[rm.Note]:
    out = [rm.Note(w, "warning") for w in v.warnings]
    failing = release["regressed"] + release["cannot_tell"] + release.get("unmet", [])
    if release["passed"]:
        allowed = (" (cannot tell on " + ", ".join(release["cannot_tell"]) + " allowed by the "
                   "policy)" if release["cannot_tell_allowed"] else "")
        out.append(rm.Note(f"RELEASE GATE PASSED: {release['decision']}{allowed}. Every endpoint "
                           "is shown not worse than its margin.", "ok"))
    else:
        out.append(rm.Note(f"RELEASE GATE FAILED: {release['decision']}: " + ", ".join(failing)
                           + ". The release passes only when every endpoint is shown non-inferior"
                           + (" and every requirement of the policy is met." if release.get("unmet")
                              else "."), "danger"))
    out += [rm.Note(f"Requirement {r['name']}: {'met' if r['met'] else 'NOT MET'}: {r['reason']}",
                    "ok" if r["met"] else "danger")
            for r in release.get("requirements", []) if r["required"]]
    if extra.get("policy_line"):
        out.append(rm.Note(str(extra["policy_line"]), "info"))
    out += [rm.Note(line, "warning") for line in extra.get("override_lines") or []]
    return out


def _release(release: dict[str, Any], extra: dict[str, Any]) -> rm.Section:
    def num(x: float | None) -> str:
        return "n/a" if x is None else f"{x + 0.0:+.3f}".replace("-0.000", "+0.000")

    rows = [[e["endpoint"], num(e.get("estimate")), num(e.get("lower")), num(e.get("upper")),
             f"-{e['margin']:g}", e["decision"], e["reason"]] for e in release["endpoints"]]
    guard = release["flip_guard"]
    blocks: list[Any] = [
        rm.Table("Non-inferiority per endpoint (one-sided bounds of B - A)",
                 ["endpoint", "B - A", "lower bound", "upper bound", "margin", "decision", "why"],
                 rows, numeric=["B - A", "lower bound", "upper bound", "margin"]),
        rm.KeyValues([("flip guard", f"{guard['decision']}: {guard['reason']}"),
                      ("critical items that went pass -> fail",
                       ", ".join(guard["critical_flips"]) or "none"),
                      ("items that went pass -> fail", ", ".join(guard["flipped"]) or "none"),
                      ("rule", release["rule"]),
                      ("policy", str(extra.get("policy_line") or "policy: bundled default")
                       .removeprefix("policy: ")),
                      *[("policy override", line.removeprefix("policy override: "))
                        for line in extra.get("override_lines") or []]]),
        rm.Note("All endpoints must be non-inferior (an intersection-union test): each is tested at "
                "the full level and no multiplicity correction is needed, because the release is "
                "claimed only when every one of them is shown not worse."),
    ]
    return rm.Section("Release decision", blocks, "release")


def _run_line(run: dict[str, Any]) -> str:
    cfg = run.get("config") or {}
    return (f"{run['id']} · {str(run.get('created_at', ''))[:19]} UTC · ensemble "
            f"{(cfg.get('ensemble') or {}).get('name', 'n/a')} (judge_id "
            f"{cfg.get('judge_id', 'n/a')}) · dataset {cfg.get('dataset') or 'n/a'}")


def _overview(v: ComparisonView, runs: dict[str, Any], extra: dict[str, Any]) -> rm.Section:
    b, c = v.discordant
    items = [("baseline A", _run_line(runs[v.run_a])), ("candidate B", _run_line(runs[v.run_b])),
             ("paired scored items", str(v.n_items)),
             ("endpoints regressed", ", ".join(v.regressions) or "none"),
             ("pass rate", f"{rm.pct(v.rate_a)} -> {rm.pct(v.rate_b)} (exact McNemar p = "
                           f"{rm.fmt(v.mcnemar_p, '.4f')}; {rm.fmt(b, 'd')} regressed, {rm.fmt(c, 'd')} "
                           "improved)"),
             ("descriptive tests", f"two-sided 95% CIs; paired test p Holm-adjusted "
                                   f"(alpha {extra['alpha']:g}); they do not decide the gate")]
    items += [(k.replace("_", " "), rm.fmt(val)) for k, val in sorted(v.extra.items())
              if isinstance(val, str | int | float | bool)]
    return rm.Section("Overview", [rm.KeyValues(items)], "overview")


def _deltas(v: ComparisonView, threshold: float) -> rm.Section:
    adjusted = any(r.p_adjusted is not None for r in v.rubrics)  # a column only when compare gives it
    rows = [[r.rubric, rm.fmt(r.n, "d"), rm.fmt(r.delta, "+.3f"), rm.ci(r.ci95, "+.3f"), r.test or "n/a",
             rm.fmt(r.p_value, ".4f"), *([rm.fmt(r.p_adjusted, ".4f")] if adjusted else []),
             rm.fmt(r.effect_size, "+.2f"), r.status] for r in v.rubrics]
    columns = ["rubric", "n", "mean diff (B - A)", "95% CI", "test", "p",
               *(["p (Holm-adjusted)"] if adjusted else []), "effect size", "verdict"]
    blocks: list[Any] = []
    shown = [r for r in v.rubrics if r.delta is not None]
    if shown:
        title = "Change per rubric, B - A, with 95% CI"
        blocks.append(rm.Chart(title, charts.deltas_with_ci(
            [r.rubric for r in shown], [r.delta for r in shown], [r.ci95 for r in shown],
            title=title, threshold=threshold, flagged=[r.status == "regressed" for r in shown]),
            "Squares are the mean paired differences; bars are 95% confidence intervals; red "
            "marks a regressed rubric."))
    blocks.append(rm.Table("Paired difference per rubric", columns, rows,
                           numeric=["n", "mean diff (B - A)", "p", "p (Holm-adjusted)", "effect size"]))
    return rm.Section("Rubric deltas", blocks, "deltas")


def _pass_fail(v: ComparisonView, t: dict[str, int]) -> rm.Section:
    cells = [[t["pass_pass"], t["pass_fail"]], [t["fail_pass"], t["fail_fail"]]]
    title = "Pass/fail: A (rows) against B (columns)"
    return rm.Section("Pass/fail (McNemar)", [
        rm.Chart(title, charts.confusion_matrix(cells, title=title, rows=["A pass", "A fail"],
                                                cols=["B pass", "B fail"])),
        rm.Table("Paired pass/fail outcomes", ["", "B pass", "B fail"],
                 [["A pass", str(t["pass_pass"]), f"{t['pass_fail']} (regressed)"],
                  ["A fail", f"{t['fail_pass']} (improved)", str(t["fail_fail"])]],
                 numeric=["B pass", "B fail"]),
        rm.KeyValues([("exact McNemar p (discordant pairs only)", rm.fmt(v.mcnemar_p, ".4f")),
                      ("items not compared (not scored in A or B, or asked differently)",
                       str(t["not_comparable"]))]),
    ], "passfail")


def _side_by_side(p: ItemPair, run_a: str, run_b: str) -> rm.Card:
    a, b = p.a, p.b
    rubrics = sorted(set(a.scores) | set(b.scores))
    rows = [["ensemble verdict", verdict_label(a), verdict_label(b), ""],
            ["hallucination", a.hallucination or "-", b.hallucination or "-", ""],
            *[[r, rm.fmt(a.scores.get(r), none="-"), rm.fmt(b.scores.get(r), none="-"),
               rm.fmt(p.score_changes.get(r), "+.2f", none="-")] for r in rubrics],
            ["judges pass / fail", f"{a.judge_votes['pass']} / {a.judge_votes['fail']}",
             f"{b.judge_votes['pass']} / {b.judge_votes['fail']}", ""],
            ["overrides", "; ".join(a.overrides) or "none", "; ".join(b.overrides) or "none", ""],
            ["flags", ", ".join(a.flags) or "none", ", ".join(b.flags) or "none", ""]]
    blocks: list[Any] = [rm.Table("Both verdicts", ["", f"A {run_a}", f"B {run_b}", "B - A"], rows,
                                  numeric=["B - A"]),
                         rm.Text("Prompt", p.prompt)]
    if p.response_a == p.response_b:
        blocks.append(rm.Text("Answer under evaluation (the same in both runs)", p.response_a))
    else:
        seg_a, seg_b = diff_segments(p.response_a, p.response_b)
        blocks.append(rm.Diff(f"answer in A ({run_a})", f"answer in B ({run_b})", seg_a, seg_b,
                              "The answers differ between the runs; changed words are marked."))
    if a.expected_conclusion:
        blocks.append(rm.Text("Expected conclusion (from the dataset)", a.expected_conclusion))
    for label, o in (("A", a), ("B", b)):
        reasons = [f"{j.judge}: {j.overall or j.status}" for j in o.judges]
        blocks.append(rm.KeyValues([(f"judges in {label}", "; ".join(reasons) or "none")]))
    tone: rm.Tone = "danger" if p.change == "regressed" else "ok"
    return rm.Card(p.item_id, [(p.change, tone)], blocks)


def _changed(pairs: list[ItemPair], change: str, v: ComparisonView, title: str,
             anchor: str) -> rm.Section:
    chosen = [p for p in pairs if p.change == change]
    if change == "regressed":
        # compare's own lists decide which items regressed (pass -> fail, and every item whose
        # rubric score dropped without a flip); the pairs give their detail.
        ids = set(v.regressed_items) | set(v.dropped_items)
        chosen = [p for p in pairs if p.item_id in ids]
    if not chosen:
        return rm.Section(title, [rm.Note(f"No item {change}.", "info")], anchor)
    summary = rm.Table(f"{len(chosen)} item(s)", ["item", "A", "B", "largest score change"],
                       [[p.item_id, verdict_label(p.a), verdict_label(p.b),
                         _largest(p.score_changes)] for p in chosen])
    if change == "regressed":
        flips = set(v.regressed_items)
        summary = rm.Table(f"{len(chosen)} item(s)", ["item", "A", "B", "how", "rubrics dropped"],
                           [[p.item_id, verdict_label(p.a), verdict_label(p.b),
                             "pass -> fail" if p.item_id in flips else "rubric drop, no flip",
                             ", ".join(f"{r} {d['before']:.2f} -> {d['after']:.2f}"
                                       for r, d in sorted(v.dropped_items.get(p.item_id, {}).items()))
                             or "-"] for p in chosen])
    return rm.Section(title, [summary, *[_side_by_side(p, v.run_a, v.run_b) for p in chosen]],
                      anchor)


def _largest(changes: dict[str, float]) -> str:
    if not changes:
        return "-"
    rubric, value = max(changes.items(), key=lambda kv: abs(kv[1]))
    return f"{rubric} {value:+.2f}"


def _not_compared(pairs: list[ItemPair]) -> rm.Section:
    rows = [[p.item_id, verdict_label(p.a), verdict_label(p.b),
             p.note or p.a.reason or p.b.reason or "-"]
            for p in pairs if p.change == "not comparable"]
    return rm.Section("Items not compared", [
        rm.Note("Items without a scored verdict in one of the runs, or asked differently in the "
                "two runs, are left out of every statistic above (they are neither passes nor "
                "fails)."),
        rm.Table("Not compared", ["item", "A", "B", "why"], rows)], "notcompared")
