"""The experiment behind ``legal-judge debias compare``: which mitigation makes a judge right more often.

Each known-answer pair (``data/debias_pairs.jsonl``: a legal question, a plain correct answer and a
wrong answer dressed with one bias signal; by default with the reversed-signal controls of
``data/debias_controls.jsonl``, where the correct answer is dressed) is judged pairwise under every mode (``plain``, ``aware``,
``aware-generic``, ``aware-all``, ``self``, ``aware+self``, ``swap`` ...). A *trial* is one pair in one order:

* the order of the file (``wrong_first``), and with ``orders="both"`` also the swapped order; for the
  text biases both orders are trials of the bias (the signal is in the text, and counterbalancing
  the order keeps position bias out of their accuracy);
* for ``position`` pairs the swapped order puts the *correct* answer first: it is a reversed-signal
  **control**, like pairs marked ``"control": true`` (the correct answer carries the signal). A mode
  that lowers accuracy on controls, or flips the sign of the bias effect, over-corrects.

Under ``swap`` a trial's verdict asks both orders and combines them (balanced position calibration),
so the two trials of a pair get the same verdict (the second from the cache); the unit of the paired
McNemar test stays the trial, as for every mode.

``plain`` is also re-asked ``repeats - 1`` times with other seeds (repetition stability). The analysis
is in :mod:`legal_judge.debias.analysis`; calls are cached and logged, so a rerun after a failure
resumes without paying twice.
"""

from __future__ import annotations

import asyncio
import secrets
from collections.abc import Sequence
from dataclasses import asdict
from datetime import UTC, datetime
from typing import Any, Literal

from legal_judge.debias.analysis import analyze
from legal_judge.debias.pairs import DebiasPair, Trial, TrialOutcome
from legal_judge.debias.pairwise import OrderVerdict, PairwiseJudge
from legal_judge.errors import ConfigError
from legal_judge.judge.config import JudgeConfig
from legal_judge.judge.judge import Judge
from legal_judge.judge.mitigation import ModeSpec, parse_mode
from legal_judge.providers.base import is_simulated_spec
from legal_judge.store import Store, utcnow
from legal_judge.sync.outbox import EntityKind, enqueue

__all__ = [
    "DEFAULT_MODES",
    "load_experiment",
    "run_experiment",
    "save_experiment",
]

DEFAULT_MODES = ("plain", "aware", "aware-generic", "self", "aware+self", "swap")
Orders = Literal["given", "both"]


def trials_for(pairs: Sequence[DebiasPair], *, orders: Orders) -> list[Trial]:
    """The trials of the experiment (see the module docstring)."""
    out: list[Trial] = []
    for p in pairs:
        firsts = [p.wrong_first] + ([not p.wrong_first] if orders == "both" else [])
        for wf in firsts:
            control = p.control or (p.bias == "position" and not wf)
            out.append(Trial(p, wf, "control" if control else "test"))
    return out


class _Runner:
    """Builds one judge per (mode, bias, criterion) over a shared provider and runs the trials."""

    def __init__(self, config: JudgeConfig, provider: Any, *, store: Store | None,
                 use_cache: bool, run_id: str, concurrency: int) -> None:
        self.config, self.provider, self.store = config, provider, store
        self.use_cache, self.run_id = use_cache, run_id
        self.gate = asyncio.Semaphore(concurrency)
        self.judges: dict[tuple[str, str, str], PairwiseJudge] = {}

    def judge(self, mode: ModeSpec, bias: str, criterion: str) -> PairwiseJudge:
        key = (mode.name, bias, criterion)
        if key not in self.judges:
            cfg = self.config.model_copy(update={"debias": mode.config(bias, criterion=criterion)})
            j = Judge(cfg, self.provider, store=self.store, use_cache=self.use_cache)
            self.judges[key] = PairwiseJudge(j)
        return self.judges[key]

    async def run(self, mode: ModeSpec, trial: Trial, *, seed: int | None = None) -> TrialOutcome:
        p = trial.pair
        a, b = ((p.wrong_answer, p.correct_answer) if trial.wrong_first
                else (p.correct_answer, p.wrong_answer))
        async with self.gate:
            v: OrderVerdict = await self.judge(mode, p.bias, p.criterion).ask(
                p.question, a, b, item_id=f"{trial.key}:{mode.name}", run_id=self.run_id,
                seed=seed)
        correct_slot = "B" if trial.wrong_first else "A"
        return TrialOutcome(
            key=trial.key, pair_id=p.id, bias=p.bias, role=trial.role,
            wrong_first=trial.wrong_first, mode=mode.name, status=v.status, winner=v.winner,
            correct=v.winner == correct_slot, changed=v.changed, calls=v.calls,
            input_tokens=v.input_tokens, output_tokens=v.output_tokens, cost_usd=v.cost_usd,
            seed=seed)


def _check_modes(modes: Sequence[str]) -> list[ModeSpec]:
    specs = [parse_mode(m) for m in modes]
    names = [s.name for s in specs]
    if len(set(names)) != len(names):
        raise ConfigError("a mode is listed twice", code="debias-mode-duplicate",
                          fix="list each mode once, e.g. --modes plain,aware,self")
    # Every change is measured against plain, which always runs and comes first.
    return [parse_mode("plain"), *(s for s in specs if s.name != "plain")]


def _select(pairs: Sequence[DebiasPair], biases: Sequence[str] | None) -> list[DebiasPair]:
    if not biases:
        return list(pairs)
    present = {p.bias for p in pairs}
    missing = [b for b in biases if b not in present]
    if missing:
        raise ConfigError(f"no pairs for bias {', '.join(missing)}", code="debias-bias-unknown",
                          fix=f"use biases present in the pair file: {', '.join(sorted(present))}")
    return [p for p in pairs if p.bias in biases]


async def run_experiment(config: JudgeConfig, pairs: Sequence[DebiasPair], *,
                         provider: Any, modes: Sequence[str] = DEFAULT_MODES,
                         biases: Sequence[str] | None = None, orders: Orders = "both",
                         repeats: int = 3, store: Store | None = None, use_cache: bool = True,
                         concurrency: int = 8, alpha: float = 0.05) -> dict[str, Any]:
    """Judge every trial under every mode and analyse the outcomes.

    Args:
        config: The judge (its own ``debias`` setting is replaced by each mode's).
        pairs: The known-answer pairs.
        provider: The judge's provider (``get_provider(config.spec)``); the caller closes it.
        modes: Mode names (see :func:`legal_judge.judge.mitigation.parse_mode`); ``plain`` is always added.
        biases: Restrict to these bias labels (default: all in ``pairs``).
        orders: ``given`` (the file's order only) or ``both`` (also swapped; controls for position).
        repeats: ``plain`` is asked this many times per test trial (repetition stability; 1 = off).
        store: Where calls are cached and logged (None: neither).
        use_cache: Read the provider cache.
        concurrency: Concurrent requests.
        alpha: Significance level of the McNemar tests.

    Returns:
        The report (see :func:`legal_judge.debias.analysis.analyze`) with the experiment's id,
        the judge ids per mode and bias, the settings and every trial outcome.

    Raises:
        ConfigError: unknown or duplicate mode, bias without pairs.
        ProviderError: the provider failed after its retries (rerun: cached calls are reused).
    """
    specs = _check_modes(modes)
    chosen = _select(pairs, biases)
    exp_id = f"dx-{datetime.now(UTC):%Y%m%d-%H%M%S}-{secrets.token_hex(3)}"
    runner = _Runner(config, provider, store=store, use_cache=use_cache, run_id=exp_id,
                     concurrency=concurrency)
    trials = trials_for(chosen, orders=orders)
    tasks = [runner.run(m, t) for m in specs for t in trials]
    tasks += [runner.run(specs[0], t, seed=s) for t in trials if t.role == "test"
              for s in range(1, max(repeats, 1))]
    outcomes = list(await asyncio.gather(*tasks))
    report = analyze(outcomes, modes=[m.name for m in specs], alpha=alpha,
                     requests={m.name: m.requests for m in specs})
    # A specific warning names the bias, so an aware judge's id differs per bias.
    judge_ids = {m.name: {p.bias: runner.judge(m, p.bias, p.criterion).judge.judge_id
                          for p in chosen} for m in specs}
    report.update({
        "id": exp_id, "created_at": utcnow(), "judge": config.label, "spec": config.spec,
        "judge_id": next(iter(judge_ids["plain"].values())), "judge_ids": judge_ids,
        "simulated": is_simulated_spec(config.spec),
        "settings": {"modes": [m.name for m in specs], "biases": sorted({p.bias for p in chosen}),
                     "orders": orders, "repeats": repeats, "alpha": alpha,
                     "pairs": len(chosen), "trials": len(trials)},
        "outcomes": [asdict(o) for o in outcomes],
    })
    return report


def save_experiment(store: Store, report: dict[str, Any]) -> None:
    """Store the experiment in ``debias_experiments`` and queue its numbers for Langfuse."""
    config = {"judge": report["judge"], "spec": report["spec"], "judge_ids": report["judge_ids"],
              **report["settings"]}
    store.debias_experiments.save(report["id"], created_at=report["created_at"],
                                  judge_id=report["judge_id"], config=config, report=report)
    # The sync builds the Langfuse trace from the table row; the outbox only says what is new.
    enqueue(store, EntityKind.DEBIAS_EXPERIMENT, report["id"])


def load_experiment(store: Store, experiment_id: str) -> dict[str, Any] | None:
    """A stored experiment's report (as :func:`run_experiment` returned it), or None."""
    return store.debias_experiments.report(experiment_id)
