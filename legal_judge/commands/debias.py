"""``legal-judge debias``: the mitigation experiment (``compare``) and the paste-ready prompts (``prompt``)."""

from __future__ import annotations

import asyncio
import json
import tomllib
from pathlib import Path
from typing import Any

import click
from rich.console import Console
from rich.text import Text

from legal_judge.commands.tables import Col, print_table, styled, wrote
from legal_judge.debias.experiment import DEFAULT_MODES
from legal_judge.errors import ConfigError, InputError, Problem
from legal_judge.judge.config import JudgeConfig
from legal_judge.judge.mitigation import parse_mode, toml_line

__all__ = ["COMMANDS", "debias", "resolve_judge"]

console = Console()


def resolve_judge(value: str, *, name: str | None = None) -> JudgeConfig:
    """A judge from a spec (``openai:gpt-4o``), a judge TOML file, or an ensemble config.

    An ensemble config (a file with ``[[judges]]``, or ``demo``/``default``) gives its judge named
    ``name``, or its first judge. A judge TOML file holds the fields of a judge (``spec = ...``).

    Raises:
        InputError: an unreadable or invalid file.
        ConfigError: no judge of that name.
    """
    from legal_judge.benchmark.ensemble_config import load_ensemble_config, resolve_ensemble_path

    # The rule of `run --ensemble`: a bundled name wins over a same-named file in this folder.
    path = resolve_ensemble_path(value, missing_ok=True)
    if path is None:
        return JudgeConfig(spec=value)
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise InputError([Problem(str(path), None, None, f"cannot read: {exc}")]) from None
    if "judges" not in data:
        try:
            return JudgeConfig.model_validate(data.get("judge", data))
        except ValueError as exc:
            raise InputError([Problem(str(path), None, None, str(exc))]) from None
    judges = load_ensemble_config(value).judges  # the string: a Path drops the ./ of ./demo
    if name is None:
        return judges[0]
    for j in judges:
        if j.label == name:
            return j
    raise ConfigError(f"no judge named '{name}' in {value}", code="judge-unknown",
                      fix=f"use one of: {', '.join(j.label for j in judges)}")


def _csv(value: str | None) -> list[str] | None:
    return [v.strip() for v in value.split(",") if v.strip()] if value else None


def _fmt(x: float | None, spec: str = ".2f") -> str:
    return "n/a" if x is None else format(x, spec)


def _pct(x: float | None) -> str:
    return "n/a" if x is None else f"{100 * x:.0f}"


def _p(x: float | None) -> str:
    return "n/a" if x is None else ("<.001" if x < 0.001 else f"{x:.3f}".lstrip("0"))


def _over(cell: dict[str, Any]) -> str | Text:
    oc = cell.get("over_correction")
    if oc is None:
        return "" if cell.get("mcnemar") is None else "n/a"
    flip = " flip" if oc["sign_flip"] else ""
    return styled(f"YES{flip}", "red") if oc["flagged"] else f"no{flip}"


def _bias_title(bias: str, b: dict[str, Any]) -> str:
    """The bias and its recommendation in one line: what to use, and plain's stability."""
    r = b["recommendation"]
    bal = b["modes"]["plain"]["balanced"] or {}
    if r["basis"] == "significant":
        use = (f"use {r['mode']} ({_pct(r.get('accuracy_plain'))}% → {_pct(r.get('accuracy'))}%, "
               f"p Holm {_p(r.get('p_holm'))})")
    else:
        use = "keep plain (no mode helped significantly)"
    return (f"{bias}: {use}; PC {_fmt(bal.get('position_consistency'))}, "
            f"RS {_fmt(b['repetition_stability'])}")


def _bias_tables(report: dict[str, Any]) -> None:
    """One small table per bias, the modes as rows, the recommendation in its title."""
    for bias, b in report["biases"].items():
        rows: list[Any] = []
        for mode, c in b["modes"].items():
            lo, hi = c["ci95"]
            plain = mode == "plain"
            change = "" if plain or c["change"] is None else f"{100 * c['change']:+.0f}"
            rows.append([mode, str(c["n"]), f"{_pct(c['accuracy'])} ({_pct(lo)}–{_pct(hi)})",
                         change, "" if plain else _p((c["mcnemar"] or {}).get("p_value")),
                         "" if plain else _p(c.get("p_holm")), _over(c)])
        # The title is a line of its own: a table title would wrap at the table's width.
        console.print(_bias_title(bias, b), style="bold", markup=False, highlight=False)
        print_table(console, None,
                    [Col("mode", keep=True), Col("n", numeric=True),
                     Col("acc % (95% CI)", keep=True), Col("Δ pts", numeric=True),
                     Col("p", numeric=True), Col("p Holm", numeric=True),
                     Col("over-corr.", keep=True)], rows, compact=True)


def _cost_table(report: dict[str, Any]) -> None:
    # No title: the headers say it, and `debias compare` fits one screen (issue 33).
    print_table(console, None,
                [Col("mode", keep=True), Col("requests/verdict", numeric=True),
                 Col("tokens/trial", numeric=True, optional=True), Col("calls", numeric=True),
                 Col("cost", numeric=True)],
                [[mode, str(m["requests_per_verdict"]), _fmt(m["tokens_per_trial"], ",.0f"),
                  f"{m['calls']:,}",
                  "unknown" if m["cost_usd"] is None else f"${m['cost_usd']:.4f}"]
                 for mode, m in report["modes"].items()], compact=True)


def _advice(report: dict[str, Any]) -> None:
    """What the recommendation means for an ensemble: the TOML line, or that nothing helped."""
    helped = {b: v["recommendation"] for b, v in report["biases"].items()
              if v["recommendation"]["basis"] == "significant"}
    if not helped:
        console.print("No mode helped significantly: keep plain, or measure again with more "
                      "pairs.", markup=False, highlight=False)
        return
    # An ensemble scores one answer at a time: the pointwise line is the one to paste.
    console.print("In an ensemble (pointwise), paste into the judge's [[judges]] block:",
                  markup=False, highlight=False)
    for bias, r in helped.items():
        pointwise = r.get("pointwise_mode", r["mode"])
        if parse_mode(r["mode"]).base == "swap":
            console.print(f"  {bias}, pairwise: {toml_line(r['mode'], bias)}",
                          markup=False, highlight=False)
        line = (f"  {bias}: {toml_line(pointwise, bias)}" if pointwise != "plain" else
                f"  {bias}: keep plain (no pointwise mode helped; swap has no order to swap)")
        console.print(line, markup=False, highlight=False)
        effects = r.get("side_effects")
        if effects:
            console.print("    side effects of " + r["mode"] + " on the other biases: "
                          + ", ".join(f"{other} {_pts(e['change'])}"
                                      + (" (worse)" if e["worse"] else "")
                                      for other, e in effects.items()),
                          markup=False, highlight=False)
        elif effects is None and len(report["biases"]) > 1:
            console.print(f"    side effects on other biases: not measured (measure "
                          f"{parse_mode(r['mode']).base}-all to see them)",
                          markup=False, highlight=False)
    if len({r.get("pointwise_mode", r["mode"]) for r in helped.values()}) > 1:
        console.print("One setting per judge: pick one bias, or measure a combined mode "
                      "(aware+self-all).",
                      markup=False, highlight=False)


def _pts(change: float | None) -> str:
    return "n/a" if change is None else f"{change * 100:+.0f} pts"


def _render(report: dict[str, Any]) -> None:
    if report.get("simulated"):
        console.print("[yellow]SIMULATED judge: a demo of the method, never a judge of record."
                      "[/yellow]")
    console.print(f"Accuracy on known-answer pairs: {report['judge']}", markup=False,
                  highlight=False)
    _bias_tables(report)
    alpha = report.get("settings", {}).get("alpha", 0.05)
    console.print(f"use: cheapest mode beating plain (McNemar, p Holm < {alpha:g}) without "
                  "over-correcting; PC, RS: plain's position consistency, repetition stability",
                  markup=False, highlight=False)
    _cost_table(report)
    _advice(report)


@click.group()
def debias() -> None:
    """Bias mitigation inside the judge: measure it, or print the prompts."""


@debias.command()
@click.option("--judge", "judge_ref", required=True,
              help="Judge spec (simulated:demo-openai), judge TOML, or ensemble config.")
@click.option("--judge-name", default=None, help="Which judge of an ensemble config (default: first).")
@click.option("--modes", default=",".join(DEFAULT_MODES), show_default=True,
              help="Comma list: plain, swap (both orders, balanced position calibration), aware, "
                   "self, aware+self; the last three optionally -generic or -all.")
@click.option("--pairs", "pairs_path", type=click.Path(dir_okay=False, path_type=Path),
              default=None, help="Known-answer pair file (default: the bundled set).")
@click.option("--biases", default=None, help="Comma list of bias labels (default: all).")
@click.option("--orders", type=click.Choice(["both", "given"]), default="both", show_default=True,
              help="Ask each pair in both orders (controls for position) or the file's order only.")
@click.option("--repeats", type=click.IntRange(1, 20), default=3, show_default=True,
              help="Times plain is asked per trial for repetition stability (1 = off).")
@click.option("--alpha", type=click.FloatRange(0, 1, min_open=True, max_open=True), default=0.05,
              show_default=True, help="Significance level of the McNemar tests.")
@click.option("--concurrency", type=click.IntRange(1, 256), default=8, show_default=True)
@click.option("--no-cache", is_flag=True, help="Do not read the provider cache.")
@click.option("--json", "json_out", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Write the full report (with every trial) as JSON to this file ('-' = stdout).")
def compare(judge_ref: str, judge_name: str | None, modes: str, pairs_path: Path | None,
            biases: str | None, orders: str, repeats: int, alpha: float, concurrency: int,
            no_cache: bool, json_out: Path | None) -> None:
    """Which mitigation makes the judge pick the correct answer more often, per bias."""
    from legal_judge.debias.experiment import run_experiment, save_experiment
    from legal_judge.debias.pairs import load_pairs
    from legal_judge.providers.registry import get_provider
    from legal_judge.store import Store

    config = resolve_judge(judge_ref, name=judge_name)
    pairs = load_pairs(pairs_path)
    mode_list = _csv(modes) or ["plain"]
    store = Store()
    provider = get_provider(config.spec)

    async def go() -> dict[str, Any]:
        try:
            return await run_experiment(
                config, pairs, provider=provider, modes=mode_list, biases=_csv(biases),
                orders=orders, repeats=repeats, store=store,  # type: ignore[arg-type]
                use_cache=not no_cache, concurrency=concurrency, alpha=alpha)
        finally:
            await provider.aclose()

    report = asyncio.run(go())
    save_experiment(store, report)
    if json_out is not None and str(json_out) == "-":
        click.echo(json.dumps(report, indent=2, ensure_ascii=False))
        return
    if json_out is not None:
        json_out.write_text(json.dumps(report, indent=2, ensure_ascii=False), encoding="utf-8")
    _render(report)
    console.print(f"stored as debias experiment {report['id']}", soft_wrap=True)
    if json_out is not None:
        wrote(console, json_out, what="report JSON")


@debias.command()
@click.option("--bias", required=True,
              help="authority, confidence, formatting, position, verbosity, bandwagon, sentiment, "
                   "generic, or all.")
@click.option("--criterion", default="factual accuracy", show_default=True,
              help="The criterion, also what the judge is told to focus on.")
@click.option("--json", "as_json", is_flag=True, help="Print the prompts as one JSON object.")
def prompt(bias: str, criterion: str, as_json: bool) -> None:
    """Print the filled bias-aware warning, judge prompt and self-debiasing prompt."""
    from legal_judge.assets.catalogue import load_assets
    from legal_judge.judge.mitigation import prompt_texts

    texts = prompt_texts(load_assets(), bias.strip().lower(), criterion=criterion)
    if as_json:
        click.echo(json.dumps(texts, indent=2, ensure_ascii=False))
        return
    titles = {"bias_warning": "Bias-aware warning (add to the judge prompt)",
              "judge_prompt": "Step 1: bias-aware judge prompt",
              "self_debias": "Step 2: self-debiasing prompt (a separate message after the verdict)"}
    for key, title in titles.items():
        click.echo(f"=== {title} ===\n{texts[key]}\n")


COMMANDS: list[click.Command] = [debias]
