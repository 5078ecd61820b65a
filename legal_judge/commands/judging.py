"""``legal-judge judge``: one answer decided exactly as ``run`` decides an item.

The checks, the judges (with the checks' evidence), the answer rules and the aggregation are the
run's own (:mod:`legal_judge.benchmark.single`); nothing is stored but the caches unless
``--save`` asks for a one-item run.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import click
from rich.console import Console
from rich.text import Text

from legal_judge.commands.tables import Col, print_table
from legal_judge.errors import ConfigError, NotFoundError

__all__ = ["COMMANDS"]

console = Console()


def _item(item_id: str | None, dataset: Path | None, prompt: str | None, response: str | None,
          jurisdiction: str | None) -> Any:
    from legal_judge.dataset import load_dataset, sample_dataset_path
    from legal_judge.models import BenchmarkItem

    if item_id is not None and (prompt is not None or response is not None):
        raise ConfigError("--item and --prompt/--response name two answers",
                          code="judge-two-answers", fix="give --item ID, or --prompt and --response")
    if item_id is None:
        if prompt is None or response is None:
            raise ConfigError("nothing to judge", code="judge-no-answer",
                              fix="give --item ID (from --dataset or the bundled sample), or "
                                  "--prompt TEXT --response TEXT [--jurisdiction CODE]")
        import hashlib

        digest = hashlib.sha256(f"{prompt}\x00{response}".encode()).hexdigest()[:12]
        return BenchmarkItem(id=f"answer-{digest}", prompt=prompt, response=response,
                             jurisdiction=jurisdiction)
    items = {i.id: i for i in load_dataset(dataset or sample_dataset_path())}
    if item_id not in items:
        raise NotFoundError(f"no item '{item_id}' in the dataset",
                            fix=f"use one of: {', '.join(list(items)[:8])} ...")
    item = items[item_id]
    return item.model_copy(update={"jurisdiction": jurisdiction}) if jurisdiction else item


def _config(spec: str | None, ensemble: str | None) -> Any:
    from legal_judge.benchmark.ensemble_config import EnsembleConfig, load_ensemble_config
    from legal_judge.judge.config import JudgeConfig

    if (spec is None) == (ensemble is None):
        raise ConfigError("judge needs one judge or one ensemble", code="judge-which-judge",
                          fix="give --judge SPEC (e.g. simulated:demo-openai) or --ensemble NAME")
    if ensemble is not None:
        return load_ensemble_config(ensemble)
    # One judge is an ensemble of one: the quorum is that judge.
    return EnsembleConfig(name=f"judge {spec}", judges=[JudgeConfig(spec=str(spec))], quorum=1)


def _render(judged: Any) -> None:
    from legal_judge.benchmark.answer_rules import answer_rules
    from legal_judge.checks.findings import item_findings

    result, verdicts = judged.result, judged.verdicts
    labels = [v.judge for v in verdicts]
    rubrics = sorted({r for v in verdicts for r in v.scores} | set(result.scores))
    rows: list[list[Any]] = []
    for rubric in rubrics:
        decided = result.scores.get(rubric)
        judged_mean = result.raw_scores.get(rubric)
        rows.append([rubric, "-" if decided is None else f"{decided:g}",
                     "-" if judged_mean is None else f"{judged_mean:g}",
                     *[f"{v.scores[rubric]:g}" if rubric in v.scores else "-" for v in verdicts]])
    rows.append(["hallucination", result.hallucination or "-", result.hallucination or "-",
                 *[v.hallucination or "-" for v in verdicts]])
    print_table(console, f"{judged.item.id}: decision, judges' mean and each judge",
                [Col("rubric", keep=True), Col("decided", keep=True, numeric=True),
                 Col("judges", numeric=True), *[Col(label, numeric=True) for label in labels]],
                rows)
    effects = {r.kind: r.effect for r in answer_rules()}
    found = item_findings(result.checks)
    console.print("rule findings:" + ("" if found else " none" if result.checks
                                      else " not run (the ensemble sets run_checks = false)"))
    for f in found:
        console.print(Text(f"  {f.kind} [{effects.get(f.kind, '?')}]: {f.detail}"), soft_wrap=True)
    for o in result.overrides:
        console.print(Text(f"override: {o}"), soft_wrap=True)
    for r in result.rule_fail_reasons:
        console.print(Text(f"rule: {r} (the judges' vote: {result.raw_overall})"), soft_wrap=True)
    for flag in result.flags:
        console.print(Text(f"review: {flag}"), soft_wrap=True)
    votes = result.votes
    console.print(f"status: {result.status}  overall: {result.overall}  votes: pass "
                  f"{votes.get('pass', 0):.2f} / fail {votes.get('fail', 0):.2f}"
                  + (f"  reason: {result.reason}" if result.reason else ""))
    for v in verdicts:
        console.print(Text(f"judge {v.judge} (judge_id {v.judge_id}): {v.status}"
                           + (f", {v.overall}" if v.overall else "") + f"  cached: {v.cached}"
                           + (f"  reason: {v.reason}" if v.reason else "")), soft_wrap=True)


@click.command()
@click.option("--judge", "spec", default=None,
              help="One judge spec, e.g. openai:gpt-4o or simulated:demo-openai.")
@click.option("--ensemble", default=None, help="Or an ensemble (TOML path or bundled name).")
@click.option("--item", "item_id", default=None, help="Item id in the dataset.")
@click.option("--dataset", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Dataset file (default: the bundled sample).")
@click.option("--prompt", default=None, help="A one-off answer's question.")
@click.option("--response", default=None, help="A one-off answer.")
@click.option("--jurisdiction", default=None, help="The jurisdiction the answer must respect.")
@click.option("--save", is_flag=True, help="Store the judgment as a one-item run (default: only "
                                           "the caches are written).")
@click.option("--no-cache", is_flag=True, help="Do not read the provider cache.")
@click.option("--json", "as_json", is_flag=True, help="Print the decision as JSON.")
def judge(spec: str | None, ensemble: str | None, item_id: str | None, dataset: Path | None,
          prompt: str | None, response: str | None, jurisdiction: str | None, save: bool,
          no_cache: bool, as_json: bool) -> None:
    """Judge one answer as `run` does (checks, judges, rules) and print the decision."""
    from legal_judge.benchmark.single import judge_answer
    from legal_judge.store import Store

    item = _item(item_id, dataset, prompt, response, jurisdiction)
    config = _config(spec, ensemble)
    judged = judge_answer(item.prompt, item.response, item=item, config=config,
                          ensemble=ensemble or str(spec), store=Store(), use_cache=not no_cache,
                          source="cli", save=save)
    if judged.result is None:
        raise ConfigError(f"the judgment ended {judged.status}", code="judge-unfinished",
                          fix="rerun the command")
    if as_json:
        from legal_judge.checks.findings import item_findings

        click.echo(json.dumps({
            "run_id": judged.run_id, "saved": judged.run_id is not None,
            "item": judged.item.model_dump(mode="json"),
            "findings": [{"kind": f.kind, "detail": f.detail}
                         for f in item_findings(judged.result.checks)],
            "result": judged.result.model_dump(mode="json"),
            "verdicts": [v.model_dump(mode="json") for v in judged.verdicts]}, indent=2))
        return
    _render(judged)
    console.print(f"stored as run {judged.run_id}" if judged.run_id
                  else "not stored (--save stores it as a run)")


COMMANDS: list[click.Command] = [judge]
