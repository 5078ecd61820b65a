"""The audit's validation study with the simulated judge: verdicts over seeded repetitions.

    python scripts/audit_validation.py                    # 200 repetitions per profile, defaults
    python scripts/audit_validation.py --repetitions 20   # a quick look
    python scripts/audit_validation.py --out study.json --workers 2

Each repetition audits the bundled sample as ``legal-judge audit run`` does, with its own design and
request seed: ``fair`` and the biased profiles at the defaults (nine dimensions, 60 pairs each, every
probe); ``constant`` and ``insensitive``, whose verdict the probes decide, with every probe but three
dimensions of 20 pairs (``--blind-defaults`` audits them at the defaults too). Printed: the
verdict counts per profile (``constant`` and ``insensitive`` must never be certified, ``fair`` must be
certified in at least 80%, the biased profiles must be biased), the probes that failed, the pairs per
dimension ``fair`` needs to be certified at margin 0.5, and what the probes add in judge calls.
Prints figures; asserts nothing.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from legal_judge.audit.design import build_design  # noqa: E402
from legal_judge.audit.dimensions import resolve_dimensions  # noqa: E402
from legal_judge.audit.probes import resolve_probes  # noqa: E402
from legal_judge.audit.validation import validation_study  # noqa: E402
from legal_judge.dataset import load_dataset, sample_dataset_path  # noqa: E402

ALL = list(d.name for d in resolve_dimensions(None))
THREE = ["verbosity", "authority", "formatting"]
# profile -> (repetitions cap, dimensions, pairs per dimension); None: the defaults.
PROFILES: dict[str, tuple[int | None, list[str] | None, int | None]] = {
    "fair": (None, None, None), "constant": (None, THREE, 20), "insensitive": (None, THREE, 20),
    "demo-openai": (20, None, None), "biased": (20, None, None)}


def _cost() -> dict[str, Any]:
    items = load_dataset(sample_dataset_path())
    design = build_design(items, resolve_dimensions(None), pairs=60, seed=0,
                          probes=resolve_probes(None))
    dims = 2 * len(design.pairs) + sum(min(20, len(p)) for p in design.by_dimension().values())
    variants = {(p.original.prompt, p.original.response) for p in design.probe_pairs} | \
        {(p.degraded.prompt, p.degraded.response) for p in design.probe_pairs}
    return {"dimension_judgments": dims, "probe_judgments": 2 * len(design.probe_pairs),
            "probe_distinct_variants": len(variants),
            "added_share_with_cache": len(variants) / dims,
            "added_share_without_cache": 2 * len(design.probe_pairs) / dims}


def main() -> None:
    """Command-line entry point."""
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repetitions", type=int, default=200)
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--pairs-grid", default="5,10,15",
                        help="pairs per dimension tried for the fair profile")
    parser.add_argument("--grid-repetitions", type=int, default=40)
    parser.add_argument("--biased-repetitions", type=int, default=20)
    parser.add_argument("--blind-defaults", action="store_true",
                        help="audit constant and insensitive at the defaults too (slower)")
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    out: dict[str, Any] = {"cost": _cost(), "profiles": {}, "pairs_grid": {}}
    print("probe cost:", json.dumps(out["cost"]))
    for profile, (cap, dims, pairs) in PROFILES.items():
        if args.blind_defaults:
            dims, pairs = None, None
        reps = min(args.repetitions, args.biased_repetitions if cap else args.repetitions)
        t0 = time.time()
        res = validation_study(f"simulated:{profile}", dims or ALL, repetitions=reps,
                               pairs=pairs or 60, probes=None, items="sample",
                               workers=args.workers)
        out["profiles"][profile] = {
            "repetitions": reps, "dimensions": len(dims or ALL), "pairs": pairs or 60,
            "verdicts": res.verdict_counts,
            "probe_failures": res.probe_failed_counts, "flagged": res.flagged_counts,
            "equivalent": res.equivalent_counts, "seconds": round(time.time() - t0, 1)}
        print(profile, json.dumps(out["profiles"][profile]), flush=True)
    for pairs in (int(p) for p in args.pairs_grid.split(",")):
        res = validation_study("simulated:fair", ALL, repetitions=args.grid_repetitions,
                               pairs=pairs, probes=None, items="sample", workers=args.workers)
        out["pairs_grid"][pairs] = {"repetitions": args.grid_repetitions,
                                    "certified": res.verdict_rate("certified"),
                                    "verdicts": res.verdict_counts}
        print(f"fair, {pairs} pairs per dimension:", json.dumps(out["pairs_grid"][pairs]),
              flush=True)
    if args.out:
        args.out.write_text(json.dumps(out, indent=2), encoding="utf-8")


if __name__ == "__main__":
    main()
