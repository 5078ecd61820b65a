"""Print the validation study of the escalation guarantee (issue 30).

    python scripts/escalation_study.py              # 1,000 repetitions, seed 30
    python scripts/escalation_study.py --reps 200 --seed 3

The simulation is :mod:`legal_judge.devtools.escalation_study` (its docstring describes it).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from legal_judge.devtools.escalation_study import (  # noqa: E402
    N_ITEMS,
    N_LABELS,
    escalation_study,
)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--reps", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=30)
    args = parser.parse_args()
    print(f"{N_ITEMS} items, {N_LABELS} lawyer labels, {args.reps} repetitions, seed "
          f"{args.seed}; confidence 95%: the guarantee should hold in >= 95% of repetitions")
    for title, shifted in (("labels: a random sample of the run", False),
                           ("labels: easy answers only (a different distribution)", True)):
        print(title)
        for name, f in escalation_study(args.reps, args.seed, shifted=shifted).items():
            print(f"  {name}: held {f['held']:.1%}, guaranteed {f['guaranteed']:.1%}, "
                  f"mean coverage when guaranteed {f['coverage']:.1%}, exchangeability "
                  f"warning {f['warned']:.1%}")


if __name__ == "__main__":
    main()
