"""What a run judges: the dataset and ensemble it reads, and which items (``--limit``, ``--sample``,
``--ids``: try before you pay).

A selection is recorded with the run (``config.selection``), so a partial run says what it is. The
verdicts it pays for are reused through the provider cache by a later run of the same items with the
same judges, and that run's summary counts them.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from legal_judge.benchmark.ensemble_config import EnsembleConfig
from legal_judge.errors import ConfigError
from legal_judge.models import BenchmarkItem
from legal_judge.store import Store
from legal_judge.sync.plan_tags import RELEASE_KEY

__all__ = ["ItemSelection", "RunInputs", "resolve_inputs", "select_items"]

_NO_JURISDICTION = "(no jurisdiction)"


@dataclass(frozen=True)
class ItemSelection:
    """At most one way of choosing items; all fields unset means every item.

    Attributes:
        limit: The first N items in dataset order.
        sample: N items drawn at random, stratified by jurisdiction when the items have one.
        seed: The sample's seed (drawn, and recorded, when omitted).
        ids: These item ids (dataset order is kept).
    """

    limit: int | None = None
    sample: int | None = None
    seed: int | None = None
    ids: tuple[str, ...] = ()

    @classmethod
    def from_options(cls, *, limit: int | None, sample: int | None, seed: int | None,
                     ids: str | None) -> ItemSelection:
        """The selection of ``run``'s options; refuses combinations that mean two things.

        Raises:
            ConfigError: more than one of --limit/--sample/--ids, --seed without --sample, or a
                size below 1.
        """
        wanted = tuple(dict.fromkeys(i.strip() for i in (ids or "").split(",") if i.strip()))
        given = [name for name, on in (("--limit", limit is not None),
                                       ("--sample", sample is not None), ("--ids", bool(wanted)))
                 if on]
        if len(given) > 1:
            raise ConfigError(f"{' and '.join(given)} choose items in different ways",
                              code="selection-options", fix="use one of --limit, --sample, --ids")
        if ids is not None and not wanted:
            raise ConfigError("--ids names no item", code="selection-options",
                              fix="give comma-separated item ids, e.g. --ids us-ca-001,fr-002")
        if seed is not None and sample is None:
            raise ConfigError("--seed only applies to --sample", code="selection-options",
                              fix="add --sample N, or drop --seed")
        for name, value in (("--limit", limit), ("--sample", sample)):
            if value is not None and value < 1:
                raise ConfigError(f"{name} {value}: at least one item", code="selection-options",
                                  fix=f"use {name} 1 or more")
        if sample is not None and seed is None:
            seed = int(np.random.default_rng().integers(2**31))
        return cls(limit=limit, sample=sample, seed=seed, ids=wanted)

    @property
    def everything(self) -> bool:
        """True when every item is judged."""
        return self.limit is None and self.sample is None and not self.ids

    def describe(self) -> str:
        """The options that reproduce this selection, e.g. ``--sample 10 --seed 7``."""
        if self.limit is not None:
            return f"--limit {self.limit}"
        if self.sample is not None:
            return f"--sample {self.sample} --seed {self.seed}"
        if self.ids:
            return "--ids " + ",".join(self.ids)
        return "all items"


def _sample(items: Sequence[BenchmarkItem], n: int, seed: int) -> list[int]:
    from legal_judge.stats import proportional_allocation

    strata: dict[str, list[int]] = defaultdict(list)
    for i, item in enumerate(items):
        strata[item.jurisdiction or _NO_JURISDICTION].append(i)
    rng = np.random.default_rng(seed)
    alloc = proportional_allocation({k: len(v) for k, v in sorted(strata.items())}, n)
    picked: list[int] = []
    for key in sorted(strata):
        picks = rng.choice(len(strata[key]), size=alloc[key], replace=False)
        picked += [strata[key][int(j)] for j in picks]
    return sorted(picked)


def select_items(items: Sequence[BenchmarkItem],
                 selection: ItemSelection) -> tuple[list[BenchmarkItem], dict[str, Any] | None]:
    """The items ``selection`` chooses (dataset order) and the record stored with the run.

    Returns:
        ``(items, record)``; ``record`` is None when every item is judged, else says how the items
        were chosen (``options``, ``selected``, ``of``, and ``strata`` for a sample).

    Raises:
        ConfigError: ``--ids`` names an item the dataset does not have.
    """
    if selection.everything:
        return list(items), None
    if selection.limit is not None:
        chosen = list(items[:selection.limit])
    elif selection.sample is not None:
        assert selection.seed is not None
        chosen = [items[i] for i in _sample(items, selection.sample, selection.seed)]
    else:
        known = {i.id for i in items}
        missing = [i for i in selection.ids if i not in known]
        if missing:
            shown = ", ".join(missing[:10]) + (" ..." if len(missing) > 10 else "")
            raise ConfigError(f"--ids: {len(missing)} id(s) not in the dataset: {shown}",
                              code="selection-unknown-id",
                              fix="`legal-judge validate DATASET` lists the dataset; ids are "
                                  "case-sensitive")
        wanted = set(selection.ids)
        chosen = [i for i in items if i.id in wanted]
    record: dict[str, Any] = {"options": selection.describe(), "selected": len(chosen),
                              "of": len(items)}
    if selection.sample is not None:
        counts: dict[str, int] = defaultdict(int)
        for item in chosen:
            counts[item.jurisdiction or _NO_JURISDICTION] += 1
        record["seed"] = selection.seed
        record["strata"] = dict(sorted(counts.items()))
    return chosen, record


@dataclass
class RunInputs:
    """What a ``legal-judge run`` judges: the items, the ensemble and how the items were chosen."""

    items: Iterable[BenchmarkItem]
    config: EnsembleConfig
    selection: dict[str, Any] | None = None

    def run_config(self, dataset: object, ensemble: str, *,
                   release: str | None) -> dict[str, Any]:
        """What a new run records in its config beside the ensemble's (online and batch alike).

        Args:
            dataset: the DATASET argument (a path or ``langfuse:NAME``), or None on a resume.
            ensemble: the ensemble TOML path or bundled name.
            release: the release this run judges (``run --release``), or None.

        Returns:
            The dataset and ensemble as given, the selection (when items were chosen) and the
            release (when given).
        """
        extra: dict[str, Any] = {"dataset": str(dataset) if dataset else None,
                                 "ensemble_path": ensemble}
        if self.selection is not None:
            extra["selection"] = self.selection
        if release is not None:
            extra[RELEASE_KEY] = release
        return extra


def resolve_inputs(store: Store, dataset: str | None, ensemble: str, *, resume: str | None,
                   selection: ItemSelection | None = None) -> RunInputs:
    """Items and config for ``legal-judge run`` (online or batch).

    A resumed run takes its stored config and items (it is the same run, not a new one); a new run
    reads DATASET (a file, or ``langfuse:NAME``) and the ensemble file, then keeps the items
    ``selection`` chooses (``--limit``, ``--sample``, ``--ids``); its record goes into the run's
    config so the run says it is partial.

    Raises:
        ConfigError: no dataset and nothing to resume; a selection on a resumed run; an unknown
            ``--ids`` item.
    """
    from legal_judge.benchmark.ensemble_config import load_ensemble_config

    if resume:
        if selection is not None and not selection.everything:
            raise ConfigError(f"--resume {resume} judges the run's own items; "
                              f"{selection.describe()} cannot change them",
                              code="selection-resume",
                              fix=f"run `legal-judge run --resume {resume}` without it")
        return RunInputs([], EnsembleConfig.model_validate(
            store.get_run(resume)["config"]["ensemble"]))
    if dataset is None:
        raise ConfigError("no dataset given", code="dataset-missing",
                          fix="pass a dataset file, e.g. legal-judge run bench.jsonl")
    if dataset.startswith("langfuse:"):
        from legal_judge.sync.langfuse_datasets import load_langfuse_dataset

        items = load_langfuse_dataset(dataset.removeprefix("langfuse:"))
        config = load_ensemble_config(ensemble)
        chosen, record = select_items(items, selection or ItemSelection())
        return RunInputs(chosen, config, record)
    from legal_judge.dataset.stream import LimitedItems, stream_dataset

    # Validated in one pass that keeps no item; the run reads the file again as it stores it.
    source = stream_dataset(dataset)
    config = load_ensemble_config(ensemble)
    selection = selection or ItemSelection()
    if selection.everything:
        return RunInputs(source, config)
    if selection.limit is not None:
        rows = source.rows or 0
        return RunInputs(LimitedItems(source, selection.limit), config, {
            "options": selection.describe(), "selected": min(selection.limit, rows), "of": rows})
    # A sample or a list of ids picks among every item: those are held (as before).
    chosen, record = select_items(list(source), selection)
    return RunInputs(chosen, config, record)

