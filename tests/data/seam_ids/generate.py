"""Write ``ids.json``: the ids a store written by the code of 0228e7b (before issue 34's steps
4-6) holds for six demo items, for ``tests/benchmark/test_stored_ids.py``.

Run with the OLD code on the path, never the new one (the point is to pin what it wrote)::

    PYTHONPATH=/path/to/checkout-at-0228e7b python tests/data/seam_ids/generate.py
"""

from __future__ import annotations

import asyncio
import json
import sqlite3
import sys
import tempfile
from pathlib import Path

from legal_judge.benchmark.ensemble_config import load_ensemble_config
from legal_judge.benchmark.runner import run_benchmark
from legal_judge.calibration.data import ENSEMBLE, ensemble_judge_id, from_store
from legal_judge.dataset import load_dataset
from legal_judge.store import Store

HERE = Path(__file__).parent
RUN_ID = "run-seam-ids"
ITEMS = 6


def stored_ids(path: Path, run_id: str) -> dict[str, object]:
    """The ids a store holds for a run: its config's identities, verdict keys, cache keys."""
    db = sqlite3.connect(path)
    config = json.loads(db.execute("SELECT config_json FROM runs WHERE id = ?",
                                   (run_id,)).fetchone()[0])
    verdicts = {f"{i}|{j}": [jid, key] for i, j, jid, key in db.execute(
        "SELECT item_id, judge, judge_id, verdict_key FROM verdicts WHERE run_id = ?", (run_id,))}
    cache = sorted(k for (k,) in db.execute("SELECT key FROM provider_cache"))
    db.close()
    return {"run_id": run_id, "judge_id": config["judge_id"], "judge_ids": config["judge_ids"],
            "verdicts": dict(sorted(verdicts.items())), "provider_cache_keys": cache}


def main() -> None:
    import legal_judge

    print("writing with", legal_judge.__file__, file=sys.stderr)
    items = load_dataset(Path(legal_judge.__file__).parent / "data" / "sample_bench.jsonl")[:ITEMS]
    with tempfile.TemporaryDirectory() as tmp:
        store = Store(Path(tmp) / "store.sqlite3")
        asyncio.run(run_benchmark(items, load_ensemble_config("demo"), store=store, run_id=RUN_ID))
        ids = stored_ids(store.path, RUN_ID)
        ids["item_ids"] = [i.id for i in items]
        ids["calibration_ensemble_id"] = from_store(store, RUN_ID).judge_ids[ENSEMBLE]
        # A run config without a recorded id (older runs, files): the calibration's fallback.
        ids["fallback_ensemble_id"] = ensemble_judge_id({"judge_ids": ids["judge_ids"]})
    (HERE / "ids.json").write_text(json.dumps(ids, indent=1, sort_keys=True) + "\n")


if __name__ == "__main__":
    main()
