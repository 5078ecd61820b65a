"""A run over a Langfuse dataset as a Langfuse dataset run (experiment), pure; no langfuse import.

Langfuse v4 (SDK v5) has no dataset-run-items REST call any more: an experiment item is a trace
whose spans carry the ``langfuse.experiment.*`` attributes, which is what the SDK's
``run_experiment`` sends. :func:`dataset_run_links` computes those attributes for each item of a
run loaded from ``langfuse:DATASET``: the dataset run is named after the run id, each item links
its trace (root observation ``judge_item``) to the dataset item it was loaded from, so Langfuse's
dataset-run comparison shows two runs over the same dataset side by side.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from legal_judge.store import Store
from legal_judge.sync.mask import Masker
from legal_judge.sync.plan import ExperimentLink, item_trace_id, span_id

__all__ = ["DATASET_ITEM_KEY", "EXPERIMENT_ENVIRONMENT", "dataset_run_links", "experiment_id",
           "is_dataset_run"]

#: Where an item loaded from a Langfuse dataset keeps its dataset item (``metadata[KEY]``).
DATASET_ITEM_KEY = "langfuse_dataset_item"
#: The environment the SDK gives experiment traces (``LANGFUSE_SDK_EXPERIMENT_ENVIRONMENT``).
EXPERIMENT_ENVIRONMENT = "sdk-experiment"


def experiment_id(project_id: str, dataset_id: str, run_name: str) -> str:
    """The id Langfuse gives the experiment (dataset run) ``run_name`` of a dataset.

    The server's stable derivation, which the SDK's ``run_experiment`` mirrors byte for byte: the
    first 16 hex digits of the sha256 of ``["langfuse-experiment-v1", project, dataset, run]`` as
    compact JSON. The same run synced twice lands in the same experiment.
    """
    payload = json.dumps(["langfuse-experiment-v1", project_id, dataset_id, run_name],
                         separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()[:16]


def _dataset_item(item: dict[str, Any]) -> dict[str, str] | None:
    meta = item.get("metadata") if isinstance(item.get("metadata"), dict) else None
    link = (meta or {}).get(DATASET_ITEM_KEY)
    if isinstance(link, dict) and link.get("id") and link.get("dataset_id"):
        return {k: str(v) for k, v in link.items()}
    return None


def dataset_run_links(store: Store, run_id: str, *, project_id: str,
                      masker: Masker) -> dict[str, ExperimentLink]:
    """Trace id -> experiment link for each item of ``run_id`` that came from a Langfuse dataset.

    Empty for a run over a file. The dataset run is named after the run id; each item links its
    trace (root observation ``judge_item``) to the dataset item it was loaded from.
    """
    run = store.get_run(run_id)
    cfg = run.get("config") or {}
    description = (f"legal-judge run {run_id}: ensemble "
                   f"{(cfg.get('ensemble') or {}).get('name', 'n/a')}, judge_id "
                   f"{cfg.get('judge_id', 'n/a')}")
    run_meta = json.dumps({"run_id": run_id, "judge_id": cfg.get("judge_id"),
                           "rubric_set": cfg.get("rubric_set"), "source": "legal-judge"})
    out = {}
    for item in store.load_items(run_id):
        link = _dataset_item(item)
        if link is None:
            continue
        tid = item_trace_id(run_id, item["id"])
        expected = masker.deep({"expected_signals": item.get("expected_signals") or []})
        out[tid] = ExperimentLink(
            experiment_id=experiment_id(project_id, link["dataset_id"], run_id),
            experiment_name=run_id, dataset_id=link["dataset_id"], item_id=link["id"],
            root_observation_id=span_id(tid, "root"), description=description,
            expected_output=json.dumps(expected), metadata=run_meta,
            item_metadata=json.dumps({"item_id": item["id"]}))
    return out


def is_dataset_run(store: Store, run_id: str) -> bool:
    """True when at least one item of the run came from a Langfuse dataset."""
    return any(_dataset_item(i) is not None for i in store.iter_items(run_id))
