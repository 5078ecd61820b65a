"""The analysis of a debias experiment (pure: outcomes in, report dict out).

Per bias x mode: accuracy on the test trials with its Wilson 95% CI, the change against ``plain``
with the exact McNemar test (paired by trial), reversed-signal controls and over-correction, the
balanced (both orders, tie rule) figures with position consistency and preference fairness, tokens.
Per bias: repetition stability of ``plain`` and a recommendation.

Over-correction (``ref/research-anchors.md`` 2.8): the bias effect is ``accuracy(controls) -
accuracy(tests)``, positive when the judge follows the signal. A mode over-corrects when its effect
is significantly negative (Fisher exact test on the two accuracies): the judge now penalises the
signal. A drop in control accuracy alone is not over-correction: a biased judge's controls are
inflated by the bias (the signal sits on the correct answer), so removing the bias lowers them to the
judge's plain level; that drop is reported (McNemar), not flagged.

Significance: per bias, the McNemar p-values of the modes compared with ``plain`` are Holm-adjusted
across those modes (``p_holm`` beside the raw ``p_value``); a mode is ``significant`` when its
adjusted p is below the significance level.

Recommendation: a mode is recommended only when it beats ``plain`` significantly (a positive change
with a Holm-adjusted p below the level) and neither over-corrects nor hurts; among those, the
cheapest: fewest requests per verdict first (a self pass is a second full request, swap asks both
orders), then the warning before swapping before the self pass, then the specific phrasing before
the generic one and the full list (the paper's primary setting when the bias is known), then fewer
tokens. Otherwise the recommendation is ``plain`` with the basis "no mode helped significantly"; the
largest observed gain is kept under ``largest_gain`` for the record, never as a recommendation.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from typing import Any

from scipy import stats as sps

from legal_judge.debias.pairs import TrialOutcome
from legal_judge.debias.pairwise import OrderVerdict, combine_orders, position_summary
from legal_judge.judge.mitigation import parse_mode
from legal_judge.stats import (
    adjust_pvalues,
    mcnemar_from_outcomes,
    proportion_ci,
    repetition_stability,
)

__all__ = ["NO_SIGNIFICANT_MODE", "PAPER_EXPECTATION", "analyze", "langfuse_scores", "recommend"]

#: The basis of a ``plain`` recommendation: no mode beat plain significantly (Holm).
NO_SIGNIFICANT_MODE = "no mode helped significantly"

# "Before" is stronger against signals visible right away, "after" against content-dependent ones,
# and position is checked more reliably by swapping (the seed's control knobs and limitations).
PAPER_EXPECTATION = {"authority": "aware", "confidence": "aware", "bandwagon": "aware",
                     "sentiment": "aware", "verbosity": "self", "formatting": "self",
                     "position": "swap"}
_STRATEGY_ORDER = {"aware": 0, "swap": 1, "self": 2, "aware+self": 3}
_SCOPE_ORDER = {"specific": 0, "generic": 1, "all": 2}


def _tokens(o: TrialOutcome) -> int | None:
    if o.input_tokens is None or o.output_tokens is None:
        return None
    return o.input_tokens + o.output_tokens


def _mean_tokens(rows: Sequence[TrialOutcome]) -> float | None:
    values = [_tokens(o) for o in rows]
    if not rows or any(v is None for v in values):
        return None
    return sum(v for v in values if v is not None) / len(rows)


def _accuracy(rows: Sequence[TrialOutcome]) -> dict[str, Any]:
    n, k = len(rows), sum(o.correct for o in rows)
    lo, hi = proportion_ci(k, n) if n else (None, None)
    return {"n": n, "correct": k, "accuracy": k / n if n else None, "ci95": [lo, hi],
            "unscored": sum(o.status != "ok" for o in rows)}


def _paired(base: Sequence[TrialOutcome], other: Sequence[TrialOutcome]) -> dict[str, Any] | None:
    by_key = {o.key: o for o in other}
    keys = [o.key for o in base if o.key in by_key]
    if not keys:
        return None
    before = {o.key: o.correct for o in base}
    res = mcnemar_from_outcomes([before[k] for k in keys], [by_key[k].correct for k in keys])
    return {"n": res.n, "b": res.b, "c": res.c, "p_value": res.p_value,
            "change": res.rate_change}


def _balanced(rows: Sequence[TrialOutcome]) -> dict[str, Any] | None:
    by_pair: dict[str, dict[bool, TrialOutcome]] = defaultdict(dict)
    for o in rows:
        by_pair[o.pair_id][o.wrong_first] = o
    combined = []
    for orders in by_pair.values():
        if len(orders) == 2:
            # Identity A = the wrong answer (shown first in the wrong-first order).
            combined.append(combine_orders(OrderVerdict("ok", winner=orders[True].winner),  # type: ignore[arg-type]
                                           OrderVerdict("ok", winner=orders[False].winner)))  # type: ignore[arg-type]
    if not combined:
        return None
    n = len(combined)
    right = sum(p.winner == "B" for p in combined)
    ties = sum(p.winner == "tie" for p in combined)
    return {"n_pairs": n, "accuracy": right / n, "wrong_rate": (n - right - ties) / n,
            "tie_rate": ties / n, **position_summary(combined)}


def _effect(tests: Sequence[TrialOutcome], controls: Sequence[TrialOutcome]) -> dict[str, Any]:
    kt, kc = sum(o.correct for o in tests), sum(o.correct for o in controls)
    table = [[kc, len(controls) - kc], [kt, len(tests) - kt]]
    p = float(sps.fisher_exact(table).pvalue)
    return {"effect": kc / len(controls) - kt / len(tests), "p_value": p}


def _over_correction(plain: dict[str, list[TrialOutcome]], mode: dict[str, list[TrialOutcome]],
                     alpha: float) -> dict[str, Any] | None:
    if not plain["control"] or not mode["control"] or not mode["test"]:
        return None
    before, after = _effect(plain["test"], plain["control"]), _effect(mode["test"], mode["control"])
    control = _paired(plain["control"], mode["control"])
    flip = before["effect"] > 0 > after["effect"]
    drop = bool(control and control["change"] < 0 and control["p_value"] < alpha)
    penalises = after["effect"] < 0 and after["p_value"] < alpha
    return {
        "effect_plain": before["effect"], "effect_mode": after["effect"],
        "effect_mode_p": after["p_value"], "sign_flip": flip,
        "control_accuracy_plain": sum(o.correct for o in plain["control"]) / len(plain["control"]),
        "control_accuracy": sum(o.correct for o in mode["control"]) / len(mode["control"]),
        "control_mcnemar_p": control["p_value"] if control else None,
        "control_drop_significant": drop,
        "flagged": penalises,
    }


def _cell(rows: dict[str, list[TrialOutcome]], plain: dict[str, list[TrialOutcome]], mode: str,
          alpha: float) -> dict[str, Any]:
    cell = _accuracy(rows["test"])
    cell["tokens_per_trial"] = _mean_tokens(rows["test"])
    changed = [o.changed for o in rows["test"] if o.changed is not None]
    cell["self_changed_rate"] = sum(changed) / len(changed) if changed else None
    cell["balanced"] = _balanced(rows["test"] + rows["control"])
    if mode == "plain":
        cell.update(change=0.0, mcnemar=None, p_holm=None, significant=False,
                    over_correction=None, worse=False)
        return cell
    test = _paired(plain["test"], rows["test"])
    cell["change"] = test["change"] if test else None
    cell["mcnemar"] = test
    cell["over_correction"] = _over_correction(plain, rows, alpha)
    return cell


def _holm(cells: dict[str, dict[str, Any]], alpha: float) -> None:
    """Holm across the modes compared with plain; sets ``p_holm``, ``significant``, ``worse``."""
    tested = [m for m, c in cells.items() if m != "plain" and c["mcnemar"] is not None]
    adjusted = adjust_pvalues([cells[m]["mcnemar"]["p_value"] for m in tested], "holm")
    for m, c in cells.items():
        if m == "plain":
            continue
        c["p_holm"] = float(adjusted[tested.index(m)]) if m in tested else None
        c["significant"] = c["p_holm"] is not None and c["p_holm"] < alpha
        c["worse"] = bool(c["significant"] and (c["change"] or 0) < 0)


def recommend(bias: str, cells: dict[str, dict[str, Any]], *,
              requests: dict[str, int]) -> dict[str, Any]:
    """The recommended mode for one bias (rule in the module docstring)."""
    def cost(m: str) -> tuple[Any, ...]:
        spec = parse_mode(m)
        return (requests[m], _STRATEGY_ORDER.get(spec.base, 9), _SCOPE_ORDER[spec.scope],
                cells[m]["tokens_per_trial"] or 0.0)

    ok = [m for m, c in cells.items() if m != "plain" and (c["change"] or 0) > 0
          and not (c["over_correction"] or {}).get("flagged") and not c["worse"]]
    significant = sorted((m for m in ok if cells[m]["significant"]), key=cost)
    expected = PAPER_EXPECTATION.get(bias)
    if not significant:
        gain = max(ok, key=lambda m: (cells[m]["change"], [-x for x in cost(m)[:3]]), default=None)
        return {"mode": "plain", "strategy": "plain", "basis": NO_SIGNIFICANT_MODE,
                "applies_to": "pointwise and pairwise", "pointwise_mode": "plain",
                "accuracy_plain": cells["plain"]["accuracy"], "paper_expectation": expected,
                "agrees_with_paper": None, "alternatives": [],
                "largest_gain": None if gain is None else {
                    "mode": gain, "change": cells[gain]["change"],
                    "p_value": cells[gain]["mcnemar"]["p_value"],
                    "p_holm": cells[gain]["p_holm"]}}
    best = significant[0]
    c = cells[best]
    strategy = parse_mode(best).base
    # The experiment judges pairs; an ensemble scores one answer at a time, where swap has no
    # order to swap: its pointwise recommendation is the cheapest other mode that helped.
    pointwise = next((m for m in significant if parse_mode(m).base != "swap"), "plain")
    return {
        "mode": best, "strategy": strategy, "basis": "significant", "change": c["change"],
        "applies_to": "pairwise" if strategy == "swap" else "pointwise and pairwise",
        "pointwise_mode": pointwise,
        "p_value": c["mcnemar"]["p_value"], "p_holm": c["p_holm"],
        "accuracy_plain": cells["plain"]["accuracy"],
        "accuracy": c["accuracy"], "requests_per_verdict": requests[best],
        "tokens_per_trial": c["tokens_per_trial"], "paper_expectation": expected,
        "agrees_with_paper": None if expected is None else strategy == expected,
        "alternatives": [m for m in significant if m != best],
    }


def _split(outcomes: Sequence[TrialOutcome]) -> dict[str, dict[str, dict[str, list[Any]]]]:
    grid: dict[str, dict[str, dict[str, list[Any]]]] = defaultdict(
        lambda: defaultdict(lambda: {"test": [], "control": []}))
    for o in outcomes:
        if o.seed is None:
            grid[o.bias][o.mode][o.role].append(o)
    return grid


def _stability(outcomes: Sequence[TrialOutcome], bias: str) -> float | None:
    reps: dict[str, list[str]] = defaultdict(list)
    for o in outcomes:
        if o.bias == bias and o.mode == "plain" and o.role == "test":
            reps[o.key].append(o.winner or "tie")
    if not reps or max(len(v) for v in reps.values()) < 2:
        return None
    return repetition_stability(list(reps.values()))


def _mode_totals(outcomes: Sequence[TrialOutcome], modes: Sequence[str],
                 requests: dict[str, int]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for m in modes:
        rows = [o for o in outcomes if o.mode == m and o.seed is None]
        costs = [o.cost_usd for o in rows]
        known = [c for c in costs if c is not None]
        out[m] = {"requests_per_verdict": requests[m], "calls": sum(o.calls for o in rows),
                  "input_tokens": sum(o.input_tokens or 0 for o in rows),
                  "output_tokens": sum(o.output_tokens or 0 for o in rows),
                  "tokens_per_trial": _mean_tokens(rows),
                  "cost_usd": sum(known) if len(known) == len(costs) else None}
    return out


def _side_effects(biases: dict[str, Any]) -> None:
    """Each recommended mode's effect on the other biases measured (a mode that fixes one bias
    may worsen another: ``aware`` for bandwagon made position worse)."""
    for bias, b in biases.items():
        rec = b["recommendation"]
        if rec["mode"] == "plain":
            rec["side_effects"] = {}
            continue
        if parse_mode(rec["mode"]).scope == "specific" and parse_mode(rec["mode"]).base != "swap":
            # A warning naming this bias was measured on this bias only: under another bias the
            # same mode name warned about that other bias, which is not the recommended setting.
            rec["side_effects"] = None
            continue
        rec["side_effects"] = {
            other: {"change": o["modes"][rec["mode"]]["change"],
                    "worse": bool(o["modes"][rec["mode"]]["worse"])}
            for other, o in biases.items() if other != bias and rec["mode"] in o["modes"]}


def analyze(outcomes: Sequence[TrialOutcome], *, modes: Sequence[str], requests: dict[str, int],
            alpha: float = 0.05) -> dict[str, Any]:
    """The report of a debias experiment.

    Args:
        outcomes: Every trial outcome (repeats carry a ``seed``).
        modes: Mode names, ``plain`` first.
        requests: Provider requests per verdict of each mode.
        alpha: Significance level.

    Returns:
        ``{"modes": {mode: totals}, "biases": {bias: {"modes": {mode: cell},
        "repetition_stability", "recommendation"}}, "recommendations": {bias: mode}}``.
    """
    grid = _split(outcomes)
    biases: dict[str, Any] = {}
    for bias in sorted(grid):
        plain = grid[bias]["plain"]
        cells = {m: _cell(grid[bias][m], plain, m, alpha) for m in modes}
        _holm(cells, alpha)
        biases[bias] = {"n_pairs": len({o.pair_id for o in plain["test"]}), "modes": cells,
                        "repetition_stability": _stability(outcomes, bias),
                        "recommendation": recommend(bias, cells, requests=requests)}
    _side_effects(biases)
    return {"modes": _mode_totals(outcomes, modes, requests), "biases": biases,
            "recommendations": {b: v["recommendation"]["mode"] for b, v in biases.items()}}


def langfuse_scores(report: dict[str, Any]) -> list[dict[str, Any]]:
    """The experiment's numbers as Langfuse scores (for the sync; pure).

    ``debias.<bias>.<mode>.accuracy`` / ``.change`` / ``.p_value`` / ``.p_holm`` (NUMERIC),
    ``debias.<bias>.<mode>.significant`` and ``.over_corrected`` (BOOLEAN),
    ``debias.<bias>.recommendation`` (CATEGORICAL: a mode, ``plain`` when no mode helped
    significantly) and ``debias.<mode>.tokens_per_trial`` (NUMERIC). Each score says the bias it
    belongs to (``bias``; None for the per-mode totals).
    """
    out: list[dict[str, Any]] = []

    def add(name: str, value: Any, data_type: str, bias: str | None, comment: str | None = None
            ) -> None:
        if value is not None:
            out.append({"name": name, "value": value, "data_type": data_type, "bias": bias,
                        "comment": comment})

    for bias, b in report["biases"].items():
        for mode, c in b["modes"].items():
            add(f"debias.{bias}.{mode}.accuracy", c["accuracy"], "NUMERIC", bias)
            if mode != "plain":
                add(f"debias.{bias}.{mode}.change", c["change"], "NUMERIC", bias)
                add(f"debias.{bias}.{mode}.p_value", (c["mcnemar"] or {}).get("p_value"),
                    "NUMERIC", bias)
                add(f"debias.{bias}.{mode}.p_holm", c.get("p_holm"), "NUMERIC", bias)
                if c["mcnemar"] is not None:
                    add(f"debias.{bias}.{mode}.significant", float(bool(c["significant"])),
                        "BOOLEAN", bias)
                oc = c["over_correction"]
                add(f"debias.{bias}.{mode}.over_corrected",
                    None if oc is None else float(oc["flagged"]), "BOOLEAN", bias)
        rec = b["recommendation"]
        add(f"debias.{bias}.recommendation", rec["mode"], "CATEGORICAL", bias, rec["basis"])
    for mode, m in report["modes"].items():
        add(f"debias.{mode}.tokens_per_trial", m["tokens_per_trial"], "NUMERIC", None)
    return out
