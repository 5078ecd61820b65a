"""Terminal rendering of ``calibrate compare``, ``calibrate fit`` and ``calibrate estimate``.

Laid out for an 80-column terminal: the verdict and its worst finding first, in plain words; the
ensemble's figures in one narrow table; each judge in one line; the details in ``--json`` and the
HTML report (``legal-judge report CAL_ID``).
"""

from __future__ import annotations

from typing import Any

from rich.console import Console
from rich.markup import escape
from rich.padding import Padding
from rich.text import Text

from legal_judge.calibration.schema import (
    AgreementRow,
    CalibrationReport,
    Correction,
    LawyerComment,
    PassFailRow,
    RunEstimate,
)
from legal_judge.calibration.verdict import labels_rule
from legal_judge.commands.tables import Cell, Col, print_table, styled

__all__ = ["print_calibration", "print_estimate", "print_fit"]

ENSEMBLE = "ensemble"
_STYLE = {"recalibrate": "[red]recalibrate[/red]", "ok": "[green]ok[/green]",
          "insufficient": "[yellow]insufficient[/yellow]"}
_COLOUR = {"recalibrate": "red", "ok": "green", "insufficient": "yellow"}


def _verdict(verdict: str) -> Cell:
    return styled(verdict, _COLOUR[verdict])


def _f(value: float | None, spec: str = ".2f") -> str:
    return "—" if value is None else format(value, spec)


def _ci(ci: tuple[float, float] | None, spec: str = ".2f") -> str:
    return "" if ci is None else f" [{format(ci[0], spec)}, {format(ci[1], spec)}]"


def _band(value: float | None, ci: tuple[float, float] | None, *, rate: bool) -> str:
    if value is None:
        return "—"
    if rate:
        return f"{value:.1%}" + ("" if ci is None else f" [{ci[0]:.1%}–{ci[1]:.1%}]")
    return f"{value:.2f}" + ("" if ci is None else f" [{ci[0]:.2f}–{ci[1]:.2f}]")


def _kci(kappa: float | None, ci: tuple[float, float] | None) -> str:
    return _f(kappa) + ("" if ci is None else f" [{ci[0]:.2f},{ci[1]:.2f}]")


def _focus(rows: list[AgreementRow]) -> AgreementRow | None:
    return next((r for r in rows if r.judge == ENSEMBLE), rows[0] if rows else None)


def _banner(report: CalibrationReport, out: Console) -> None:
    if report.verdict == "recalibrate":
        out.print(f"[bold red]RECALIBRATE[/bold red]: {report.headline or 'see the reasons below'}.")
    elif report.verdict == "insufficient":
        floor = report.min_labels_recalibrate
        out.print("[bold yellow]INSUFFICIENT[/bold yellow]: no reason to recalibrate, and fewer "
                  f"than the {report.min_labels} labelled items an ok needs"
                  + (f" (a recalibrate needs {floor})" if floor is not None else "")
                  + ": no verdict either way.")
    else:
        out.print("[bold green]OK[/bold green]: the judges agree with the lawyers within every "
                  "threshold on the rubrics with enough labels.")


def _ensemble_table(report: CalibrationReport, out: Console) -> None:
    who = ENSEMBLE if ENSEMBLE in report.judge_ids else "first judge"
    rows: list[list[Cell]] = []
    for comp in report.rubrics:
        row = _focus(comp.judges)
        if row is None:
            continue
        loa = "—" if row.loa is None else f"{max(abs(row.loa[0]), abs(row.loa[1])):.1f}"
        rows.append([comp.rubric, str(row.n), _verdict(row.verdict),
                     _kci(row.kappa_quadratic, row.kappa_quadratic_ci95),
                     _f(row.raw_agreement, ".0%"), _f(row.mean_divergence, "+.2f"), loa])
    pf = report.pass_fail.get(ENSEMBLE) or next(iter(report.pass_fail.values()), None)
    if pf is not None:
        rows.append(["pass/fail", str(pf.n), _verdict(pf.verdict), _kci(pf.kappa, pf.kappa_ci95),
                     _f(pf.agreement, ".0%"), "", ""])
    # "±LoA", not "±limit": at 80 columns the seventh header was cut to "±limi".
    print_table(out, f"{who} against the lawyers (κ: quadratic-weighted kappa; ±LoA: the "
                "widest 95% limit of agreement, points)",
                [Col("rubric", keep=True), Col("n", numeric=True), Col("verdict", keep=True),
                 Col("κ [95% CI]", numeric=True), Col("agree", numeric=True),
                 Col("div", numeric=True), Col("±LoA", numeric=True)], rows)


def _robust_table(report: CalibrationReport, out: Console) -> None:
    """Gwet's AC2/AC1 and PABAK beside kappa: agreement that does not collapse under skew."""
    rows: list[list[Cell]] = []
    for comp in report.rubrics:
        row = _focus(comp.judges)
        if row is not None and row.ac2 is not None:
            rows.append([comp.rubric, str(row.n), _f(row.kappa_quadratic),
                         "AC2 " + _kci(row.ac2, row.ac2_ci95), ""])
    pf = report.pass_fail.get(ENSEMBLE) or next(iter(report.pass_fail.values()), None)
    if pf is not None and pf.ac1 is not None:
        rows.append(["pass/fail", str(pf.n), _f(pf.kappa), "AC1 " + _kci(pf.ac1, pf.ac1_ci95),
                     _kci(pf.pabak, pf.pabak_ci95)])
    if rows:
        print_table(out, "prevalence-robust agreement (AC2: Gwet, quadratic weights as κ; AC1 "
                    "and PABAK on pass/fail; 95% CI)",
                    [Col("rubric", keep=True), Col("n", numeric=True), Col("κ", numeric=True),
                     Col("Gwet [95% CI]", numeric=True), Col("PABAK [95% CI]", numeric=True)],
                    rows)


def _reasons(report: CalibrationReport, out: Console) -> None:
    for comp in report.rubrics:
        row = _focus(comp.judges)
        if row is None:
            continue
        for r in row.reasons:
            out.print(f"  {comp.rubric}: {r.message}")
        if row.note:
            out.print(f"  {comp.rubric}: [yellow]{row.note}[/yellow]")
    pf = report.pass_fail.get(ENSEMBLE)
    if pf is not None:
        _pass_fail_lines(pf, out)


def _pass_fail_lines(pf: PassFailRow, out: Console) -> None:
    fails = pf.judge_pass_human_fail + pf.both_fail
    source = {"rule": "from their rubric scores by the pass/fail rule",
              "lawyers": "their own pass/fail", "mixed": "their own pass/fail where given, "
              "else the rule on their scores"}[pf.lawyer_source]
    out.print(f"  pass/fail: the lawyers' pass/fail is {source}")
    if not fails:
        out.print("  pass/fail: no lawyer fail among the labelled items: the false-pass rate "
                  "cannot be measured")
    elif not any(r.code == "false_pass" for r in pf.reasons):
        out.print(f"  pass/fail: false-pass rate {_f(pf.false_pass_rate, '.0%')}"
                  f"{_ci(pf.false_pass_ci95, '.0%')} ({pf.judge_pass_human_fail} of {fails} "
                  "lawyer fails passed)")
    for r in pf.reasons:
        out.print(f"  pass/fail: {r.message}")
    if pf.note:
        out.print(f"  pass/fail: [yellow]{pf.note}[/yellow]")


def _per_judge(report: CalibrationReport, out: Console) -> None:
    judges = [j for j in report.judge_ids if j != ENSEMBLE]
    if not judges:
        return
    out.print("per judge:")
    for judge in judges:
        parts = []
        for comp in report.rubrics:
            row = next((r for r in comp.judges if r.judge == judge), None)
            if row is not None and row.verdict == "recalibrate":
                parts.append(f"{comp.rubric} ({', '.join(r.code for r in row.reasons)})")
        pf = report.pass_fail.get(judge)
        if pf is not None and pf.verdict == "recalibrate":
            parts.append(f"pass/fail ({', '.join(r.code for r in pf.reasons)})")
        out.print(f"  {judge}: " + ("[red]recalibrate[/red] on " + "; ".join(parts) if parts
                                    else "no rubric to recalibrate"))


def _panel(report: CalibrationReport, out: Console) -> None:
    for p in report.panel:
        weights = ", ".join(f"{j.judge} {_f(j.suggested_weight)}" for j in p.judges)
        out.print(f"panel on {p.rubric}: {len(p.judges)} judges count as "
                  f"{_f(p.effective_judges, '.1f')} independent judge(s) (mean error correlation "
                  f"{_f(p.mean_error_correlation)}, {p.n_items} items); suggested weights "
                  f"(1/MSE, not applied): {weights}")
        if p.note:
            out.print(f"  [yellow]note[/yellow]: {p.note}")


_SHOWN_MISSES = 10


def _comment_lines(comments: list[LawyerComment], out: Console) -> None:
    for c in comments:
        # The lawyer's own words: plain text (never rich markup), indented under the item.
        out.print(Padding(Text(f"{c.annotator}: {c.comment}"), (0, 0, 0, 4), expand=False))


def _wrong(report: CalibrationReport, out: Console) -> None:
    """The answers the judges got wrong on pass/fail, false passes first, each with the lawyers'
    comments; then the comments on the largest score disagreements not listed already."""
    misses = report.pass_fail_misses
    if misses:
        judge = "judges" if misses[0].judge == ENSEMBLE else misses[0].judge
        passed = sum(m.judge_pass for m in misses)
        out.print(f"answers the {judge} got wrong: {passed} passed that the lawyers failed, "
                  f"{len(misses) - passed} failed that the lawyers passed:")
        for m in misses[:_SHOWN_MISSES]:
            what = ("passed, the lawyers failed it" if m.judge_pass
                    else "failed, the lawyers passed it")
            out.print(Padding(Text(f"{m.item_id}: {what}"
                                   + ("" if m.comments else " (no comment)")), (0, 0, 0, 2), expand=False))
            _comment_lines(m.comments, out)
        if len(misses) > _SHOWN_MISSES:
            out.print(f"  ... and {len(misses) - _SHOWN_MISSES} more (--json and the HTML "
                      "report list them all, with the comments)")
    shown = {m.item_id for m in misses[:_SHOWN_MISSES]}
    rest = [d for d in report.largest_disagreements[:5] if d.comments and d.item_id not in shown]
    if rest:
        out.print("lawyers' comments on the largest disagreements:")
        for d in rest:
            if d.item_id in shown:
                continue
            shown.add(d.item_id)
            out.print(Padding(Text(f"{d.item_id}: {d.rubric} judge {d.judge_score:g}, "
                                   f"lawyers {d.human_score:g}"), (0, 0, 0, 2), expand=False))
            _comment_lines(d.comments, out)


def print_calibration(report: CalibrationReport, out: Console) -> None:
    """The calibration verdict, its reasons and the panel's real size."""
    out.print(f"calibration [bold]{report.calibration_id}[/bold] ({report.quarter}): "
              f"{report.n_labelled_items} labelled items, {len(report.annotators)} annotator(s)")
    _banner(report, out)
    _ensemble_table(report, out)
    _robust_table(report, out)
    out.print("reasons:")
    _reasons(report, out)
    _per_judge(report, out)
    _panel(report, out)
    for comp in report.rubrics:
        ia = comp.inter_annotator
        if ia is not None:
            out.print(f"lawyers among themselves on {comp.rubric}: α ordinal "
                      f"{_f(ia.alpha_ordinal)} ({ia.items_multi} items scored by 2+)")
    if report.largest_disagreements:
        out.print("largest disagreements: " + "; ".join(
            f"{d.item_id}/{d.rubric} {d.difference:+.2f}" for d in report.largest_disagreements[:5]))
    _wrong(report, out)
    for note in report.notes:
        out.print(f"[yellow]note[/yellow]: {note}")
    decided = [c.rubric for c in report.rubrics if c.verdict != "insufficient"]
    out.print(f"verdict: {_STYLE[report.verdict]}"
              + (f" on {', '.join(report.recalibrate_rubrics)}" if report.recalibrate_rubrics else "")
              + (" and pass/fail" if any(p.verdict == "recalibrate" for p in
                                        report.pass_fail.values()) else "")
              + (f"; insufficient labels on {', '.join(report.insufficient_rubrics)}"
                 if report.insufficient_rubrics else "")
              + ("" if decided else "; no rubric has enough labels"))
    out.print(f"thresholds: |mean divergence| > {report.threshold:g}, κ < {report.min_kappa:g}, "
              f"limits beyond ±{report.max_loa:g}, false-pass > {report.max_false_pass:.0%}; "
              + labels_rule(report.min_labels, report.min_labels_recalibrate))
    if report.policy_line:
        out.print(report.policy_line, markup=False, highlight=False, soft_wrap=True)
    for line in report.override_lines:
        out.print(f"[yellow]{escape(line)}[/yellow]", highlight=False, soft_wrap=True)
    out.print(f"calibration id: {report.calibration_id}")


def print_fit(correction: Correction, out: Console) -> None:
    """Held-out error before and after the isotonic correction, per judge and rubric."""
    rows: list[list[Cell]] = []
    for judge_id, rubrics in sorted(correction.cv.items()):
        name = correction.judges.get(judge_id, judge_id)
        for rubric, cv in sorted(rubrics.items()):
            rows.append([name, rubric, str(cv.n), _f(cv.mae_raw), _f(cv.mae_corrected),
                         styled("yes", "green") if cv.kept else styled("no", "red")])
    print_table(out, f"correction {correction.id}: {correction.cv_folds}-fold cross-validated "
                "mean absolute error (points)",
                [Col("judge", keep=True), Col("rubric", keep=True), Col("n", numeric=True),
                 Col("raw", numeric=True), Col("corrected", numeric=True), Col("kept", keep=True)],
                rows)
    out.print("  kept: a correction is applied only where it reduces the held-out error")
    for skipped in correction.skipped:
        out.print(f"  [yellow]not kept[/yellow] {skipped}")
    out.print(f"correction id: {correction.id} (version {correction.version})")


def print_estimate(est: RunEstimate, out: Console) -> None:
    """Raw and judge-error-corrected figures side by side."""
    out.print(f"run [bold]{est.run_id}[/bold]: {est.label}")
    rows = [est.pass_rate, *est.rubrics.values(), *([est.rogan_gladen] if est.rogan_gladen
                                                      else [])]
    cells: list[list[Cell]] = []
    for row in rows:
        rate = row.name.startswith("pass rate")
        corrected: Cell = (_band(row.corrected, row.corrected_ci95, rate=rate)
                           if row.status == "corrected" else styled(row.status, "yellow"))
        cells.append([row.name.replace(" (Rogan-Gladen)", ", R-G"),
                      _band(row.raw, row.raw_ci95, rate=rate), corrected,
                      (row.method or "—").replace("Rogan-Gladen", "R-G"), str(row.n_labelled)])
    # The intervals and n are numeric columns: never folded (n = 50 was once printed as "5").
    print_table(out, "raw (the judges' opinion) and corrected for judge error (95% CI)",
                [Col("figure", keep=True), Col("raw", numeric=True),
                 Col("corrected", numeric=True), Col("method"), Col("n", numeric=True)], cells)
    out.print("  n: lawyer-labelled items the correction rests on; R-G: Rogan-Gladen")
    for row in rows:
        if row.reason:
            out.print(f"  {row.name}: {row.reason}")
    for note in est.notes:
        out.print(f"[yellow]note[/yellow]: {note}")


def print_pin(shown: dict[str, Any], out: Console) -> None:
    """What a pinned estimate rests on, a newer calibration, and the policy's warnings."""
    pin = shown["pin"]
    on = (f"calibration {pin['calibration_id']} (made {str(pin['calibration_date'])[:10]})"
          if pin["calibration_id"] else "this run's lawyer labels")
    out.print(f"rests on {on}: {pin['chosen']}; {pin['text']}", markup=False, highlight=False)
    newer = shown.get("newer_calibration")
    if newer:
        out.print(newer["text"], markup=False, highlight=False)
    for w in shown.get("policy_warnings") or []:
        # Not markup: the policy line ends in "[calibration]"; a path is never folded.
        out.print(Text.assemble(("warning:", "yellow"), f" {w}"), highlight=False,
                  soft_wrap=True)
