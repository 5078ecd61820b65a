"""Print the coverage study of the judge-error-corrected intervals (issue 21, item 8).

    python scripts/coverage_study.py              # 1,000 repetitions, seed 21
    python scripts/coverage_study.py --reps 200 --seed 3
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from legal_judge.devtools.coverage import N_ITEMS, N_LABELS, coverage_study  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--reps", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=21)
    args = parser.parse_args()
    print(f"{N_ITEMS} items, {N_LABELS} random lawyer labels, {args.reps} repetitions, "
          f"seed {args.seed}; nominal coverage 95%")
    for name, f in coverage_study(args.reps, args.seed).items():
        print(f"{name:>11}: " + ", ".join(
            f"{k} {v:.1%}" if k.startswith("coverage") else f"{k} {v:.3f}" for k, v in f.items()))


if __name__ == "__main__":
    main()
