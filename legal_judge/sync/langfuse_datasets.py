"""Benchmarks as Langfuse datasets: push a file, load a dataset as items, link a run's traces to it.

A run over ``langfuse:NAME`` keeps each item's dataset link in its metadata, so its traces become
the items of a Langfuse dataset run (the experiment comparison view), as ``run_experiment`` makes.
"""

from __future__ import annotations

from pathlib import Path

from langfuse.api.commons.errors import NotFoundError as LfNotFound

from legal_judge.errors import InputError, NotFoundError, Problem
from legal_judge.models import BenchmarkItem
from legal_judge.store import Store
from legal_judge.sync.langfuse_client import client_for, project_id
from legal_judge.sync.langfuse_errors import langfuse_failure
from legal_judge.sync.mask import Masker, load_masker
from legal_judge.sync.plan import TracePlan, det_id
from legal_judge.sync.plan_dataset import DATASET_ITEM_KEY, dataset_run_links, is_dataset_run
from legal_judge.sync.settings import require_settings

__all__ = ["link_dataset_run", "load_langfuse_dataset", "push_dataset"]


def link_dataset_run(store: Store, run_id: str, plans: list[TracePlan], *,
                     masker: Masker) -> list[TracePlan]:
    """Mark the traces of a run over a Langfuse dataset as the items of its dataset run.

    A run over a file is returned unchanged (no request is made).
    """
    if not is_dataset_run(store, run_id):
        return plans
    links = dataset_run_links(store, run_id, project_id=project_id(client_for(require_settings())),
                              masker=masker)
    for plan in plans:
        plan.experiment = links.get(plan.trace_id)
    return plans


def push_dataset(path: str | Path, *, name: str, masker: Masker | None = None) -> int:
    """Upload a benchmark file as a Langfuse dataset (item ids derive from name + item id)."""
    from legal_judge.dataset import load_dataset

    items = load_dataset(path)
    masker = masker if masker is not None else load_masker()
    c = client_for(require_settings())
    try:
        c.lf.create_dataset(name=name, description=f"legal-judge benchmark from {Path(path).name}",
                            metadata={"source": "legal-judge"})
        for it in items:
            c.lf.create_dataset_item(
                dataset_name=name, id=det_id(f"dataset:{name}:{it.id}"),
                input=masker.deep({"prompt": it.prompt, "response": it.response,
                                   "jurisdiction": it.jurisdiction,
                                   "system_under_test": it.system_under_test}),
                expected_output=masker.deep({"expected_signals": it.expected_signals}),
                metadata=masker.deep({"item_id": it.id, **it.metadata}))
    except Exception as exc:
        raise langfuse_failure(exc, f"dataset push of {name}") from None
    return len(items)


def load_langfuse_dataset(name: str) -> list[BenchmarkItem]:
    """A Langfuse dataset as benchmark items (for ``legal-judge run langfuse:NAME``).

    Raises:
        InputError: every item with no prompt, an id holding a control character or an
            ``expected_pass`` that is no verdict (exit 2), with its position and field.
    """
    from legal_judge.dataset import id_problem, normalise_expected_pass

    c = client_for(require_settings())
    try:
        ds = c.lf.get_dataset(name)
    except LfNotFound:
        raise NotFoundError(f"no Langfuse dataset {name}",
                            fix="`legal-judge datasets push FILE --name NAME` creates it") from None
    except Exception as exc:
        raise langfuse_failure(exc, f"loading dataset {name}") from None
    out, problems = [], []
    where = f"langfuse:{name}"
    for i, it in enumerate(ds.items, start=1):
        inp = it.input if isinstance(it.input, dict) else {"prompt": it.input}
        meta = dict(it.metadata) if isinstance(it.metadata, dict) else {}
        # Kept with the item, so the run's traces link back to it as a dataset run.
        link = {"id": it.id, "dataset_id": it.dataset_id or ds.id, "dataset_name": name}
        exp = it.expected_output if isinstance(it.expected_output, dict) else {}
        item_id = str(meta.pop("item_id", it.id))
        # The same rules as a dataset file: a printable id, a boolean expected_pass.
        if (why := id_problem(item_id)) is not None:
            problems.append(Problem(where, i, "metadata.item_id", f"item {it.id}: {why}"))
            continue
        if "expected_pass" in meta:
            flag, why = normalise_expected_pass(meta["expected_pass"])
            if flag is None:
                problems.append(Problem(where, i, "metadata.expected_pass",
                                        f"item {it.id}: {why}"))
                continue
            meta["expected_pass"] = flag
        try:
            out.append(BenchmarkItem(
                id=item_id, prompt=str(inp.get("prompt") or ""),
                response=inp.get("response") or "", jurisdiction=inp.get("jurisdiction"),
                system_under_test=inp.get("system_under_test"), dataset=f"langfuse:{name}",
                expected_signals=exp.get("expected_signals") or [],
                metadata={**meta, DATASET_ITEM_KEY: link}))
        except Exception as exc:
            problems.append(Problem(where, i, None, f"item {it.id}: {exc}"))
    if problems:
        raise InputError(problems, fix=f"correct these items of the Langfuse dataset {name} (in "
                         "Langfuse, or in the benchmark file, then `legal-judge datasets push "
                         f"FILE --name {name}`): items need input.prompt and input.response, "
                         "a metadata.item_id without control characters and a boolean "
                         "metadata.expected_pass")
    return out
