"""Items laid out for a reviewer: the run report's item table and each item's detail card.

The outcomes (status, pass/fail, the lists an item belongs to) come from
:func:`legal_judge.benchmark.item_outcomes.item_outcomes`; this module only lays them out.
"""

from __future__ import annotations

from typing import Any

from legal_judge.benchmark.item_outcomes import CATEGORIES, ItemOutcome
from legal_judge.reports import model as rm

__all__ = ["FILTER_LABELS", "findings_blocks", "item_card", "items_section", "verdict_label"]

#: The label of each list, as the filter buttons show it.
FILTER_LABELS: dict[str, str] = {
    "failed": "Failed",
    "passed_should_fail": "Passed but should fail",
    "split": "Judges split",
    "overridden": "Overridden",
    "inconclusive": "Inconclusive",
    "flagged": "Flagged for review",
    "failed_should_pass": "Failed but should pass",
}
_EXPECTED = ("passed_should_fail", "failed_should_pass")
# The lists a reviewer asked for first, then the others.
_ORDER: tuple[str, ...] = tuple(sorted(CATEGORIES, key=list(FILTER_LABELS).index))


def verdict_label(o: ItemOutcome) -> str:
    """``pass``, ``fail`` or the status in capitals (INCONCLUSIVE) when the item was not scored."""
    return str(o.overall) if o.status == "ok" and o.overall else o.status.upper()


def _tone(o: ItemOutcome) -> rm.Tone:
    if o.status != "ok":
        return "warning"
    return "ok" if o.overall == "pass" else "danger"


def _expected_label(o: ItemOutcome) -> str:
    if o.expected_pass is None:
        return "-"
    return "should pass" if o.expected_pass else "should fail"


def _cells(o: ItemOutcome, rubrics: list[str], *, with_expected: bool) -> list[str]:
    cells = [o.item_id, verdict_label(o)]
    if with_expected:
        cells.append(_expected_label(o))
    cells.append(f"{o.judge_votes['pass']} / {o.judge_votes['fail']}")
    cells += [rm.fmt(o.scores.get(r), none="-") for r in rubrics]
    cells += [o.hallucination or "-", rm.fmt(o.max_range, ".1f", none="-"),
              ", ".join(x.split(":", 1)[0] for x in o.overrides) or "-"]
    return cells


def items_section(outcomes: list[ItemOutcome], items: list[dict[str, Any]],
                  checks: dict[str, dict[str, Any]], *, votes: dict[str, dict[str, float]]
                  ) -> rm.Section:
    """The "Items" section: every item in one filterable table, each row opening the item.

    Args:
        outcomes: One outcome per item (``item_outcomes``).
        items: The run's items (prompt, answer, jurisdiction, ...), by the same ids.
        checks: The rule-based check results per item id (``EnsembleResult.checks``).
        votes: The ensemble's weighted votes per item id.
    """
    by_id = {i["id"]: i for i in items}
    rubrics = sorted({r for o in outcomes for r in o.scores})
    with_expected = any(o.expected_pass is not None for o in outcomes)
    labels = [r.replace("_", " ") for r in rubrics]  # lets long rubric names wrap
    columns = ["item", "ensemble", *(["expected"] if with_expected else []),
               "judges pass / fail", *labels, "hallucination", "max range", "overrides"]
    keys = [k for k in _ORDER if with_expected or k not in _EXPECTED]
    filters = [rm.Filter("all", "All items", len(outcomes)),
               *[rm.Filter(k, FILTER_LABELS[k], sum(k in o.categories for o in outcomes))
                 for k in keys]]
    rows = [rm.ItemRow(o.item_id, _cells(o, rubrics, with_expected=with_expected),
                       list(o.categories),
                       item_card(o, by_id.get(o.item_id, {"id": o.item_id}),
                                 checks.get(o.item_id, {}), votes.get(o.item_id, {})),
                       _tone(o))
            for o in outcomes]
    blocks: list[Any] = [rm.Note(
        "Every item of the run and the lists it belongs to. In the HTML report a button shows "
        "one list and a row opens its item (prompt, answer, each judge's scores and rationale, "
        "the rule-based checks); printing prints the chosen list with every item opened.")]
    if not with_expected:
        blocks.append(rm.Note("The dataset gives no expected conclusion (metadata.expected_pass), "
                              "so there is no 'passed but should fail' list."))
    blocks.append(rm.ItemTable("Items: ensemble verdict, scores (0-5), judges and overrides",
                               columns, rows, filters,
                               numeric=[*labels, "max range", "judges pass / fail"],
                               expanded=[o.item_id for o in outcomes if "flagged" in o.categories]))
    return rm.Section("Items", blocks, "items")


def item_card(o: ItemOutcome, item: dict[str, Any], checks: dict[str, Any],
              votes: dict[str, float]) -> rm.Card:
    """One item in full: prompt, answer, expected conclusion, each judge's scores and rationale,
    and the rule-based findings."""
    rubrics = sorted({r for j in o.judges for r in j.scores} | set(o.scores))
    badges: list[tuple[str, rm.Tone]] = [(f"ensemble: {verdict_label(o)}", _tone(o))]
    if o.expected_pass is not None:
        agrees = o.status == "ok" and (o.overall == "pass") == o.expected_pass
        badges.append((f"expected: {_expected_label(o)}", "ok" if agrees else "danger"))
    if o.hallucination:
        badges.append((f"hallucination: {o.hallucination}",
                       "danger" if o.hallucination == "hallucinated" else "info"))
    badges.extend((f, "warning") for f in o.flags)
    scores = [[j.judge, j.status, j.overall or "-", j.hallucination or "-",
               *[rm.fmt(j.scores.get(r), none="-") for r in rubrics]] for j in o.judges]
    scores.append(["ensemble", o.status, o.overall or "-", o.hallucination or "-",
                   *[rm.fmt(o.scores.get(r), none="-") for r in rubrics]])
    # One row per rubric, one column per judge: the judges' reasons read side by side.
    keys = sorted({r for j in o.judges for r in j.rationales})
    rationales = [[r, *[j.rationales.get(r, "-") for j in o.judges]] for r in keys]
    if any(j.reason for j in o.judges):
        rationales.append(["reason (unscored)", *[j.reason or "-" for j in o.judges]])
    facts = [("jurisdiction", str(item.get("jurisdiction") or "n/a")),
             ("system under test", str(item.get("system_under_test") or "n/a")),
             ("votes", ", ".join(f"{k} {v:.2f}" for k, v in sorted(votes.items())) or "n/a"),
             ("overrides", "; ".join(o.overrides) or "none")]
    if o.status != "ok":
        facts.append(("why not scored", o.reason or "n/a"))
    blocks: list[Any] = [rm.KeyValues(facts), rm.Text("Prompt", str(item.get("prompt", ""))),
                         rm.Text("Answer under evaluation", str(item.get("response", "")))]
    if o.expected_conclusion:
        blocks.append(rm.Text("Expected conclusion (from the dataset)", o.expected_conclusion))
    blocks += [rm.Table("Scores per judge", ["judge", "status", "overall", "hallucination", *rubrics],
                        scores, numeric=rubrics),
               rm.Table("Each judge's rationale", ["rubric", *[j.judge for j in o.judges]],
                        rationales),
               *findings_blocks(checks)]
    return rm.Card(o.item_id, badges, blocks)


def findings_blocks(checks: dict[str, Any]) -> list[Any]:
    """The rule-based check findings of one item (citations, jurisdiction, refusal, hedging)."""
    f = checks.get("findings") or {}
    if not f:
        return [rm.Note("No rule-based checks ran on this item.")]
    cites = f.get("citations") or {}
    rows = [[c.get("text", ""), c.get("kind", ""), c.get("status", ""),
             "; ".join(r.get("message", "") for r in c.get("reasons", [])) or "-"]
            for c in cites.get("findings", [])]
    other = [("rule-based reasons", "; ".join(checks.get("reasons", [])) or "none"),
             ("jurisdiction", (f.get("jurisdiction") or {}).get("message") or "no problem found"),
             ("refusal", "refused" if (f.get("refusal") or {}).get("refused") else "no"),
             ("hedging only", "yes" if (f.get("hedging") or {}).get("hedging_only") else "no"),
             ("adversarial", "yes" if f.get("adversarial") else "no")]
    return [rm.KeyValues(other),
            rm.Table("Rule-based citation findings", ["citation", "kind", "status", "why"], rows)]
