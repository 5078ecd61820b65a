"""Count the product modules one item visits in ``legal-judge run`` (docs/ARCHITECTURE.md).

A module is *visited* when one of its functions runs (a profiler ``call`` event whose code lives
in ``legal_judge/``; module bodies run at import are not counted, every module is imported
first). Two figures, each on a fresh store (no cache) with the bundled simulated demo judges:

* per (item, judge): a one-item, one-judge run, counted from the end of ``RunState.start`` to the
  start of ``RunState.finish`` (the items' path: checks, cache, the judge call, the store,
  aggregation, the answer rules);
* the whole flow: the same run from ``plan_run`` to the end of ``RunState.finish``.

Each figure is given twice: every module a function of which ran (checks, parsers, pricing, the
simulated provider's internals included), and the modules on the call stack whenever the item
reached a provider or the store (the walk a reader follows from the run to the judge call and to
the stored rows).

Usage: ``PYTHONPATH=. python scripts/walk_count.py [--list]``.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import sys
import tempfile
import types
from pathlib import Path
from typing import Any

import legal_judge

ROOT = str(Path(legal_judge.__file__).parent)


def _module(filename: str) -> str | None:
    if not filename.startswith(ROOT):
        return None
    rel = Path(filename).relative_to(ROOT).with_suffix("")
    return "legal_judge." + ".".join(rel.parts)


#: The walk's ends: a call into one of these is the item reaching its provider or its store.
ENDS = ("legal_judge.providers.", "legal_judge.store.")


class Walk:
    """The modules whose functions ran while :meth:`on` was in force (``modules``), and those on
    the call stack each time the item reached a provider or the store (``chain``)."""

    def __init__(self) -> None:
        self.modules: set[str] = set()
        self.chain: set[str] = set()

    def _profile(self, frame: types.FrameType, event: str, arg: Any) -> None:
        if event == "call" and frame.f_code.co_name != "<module>":
            name = _module(frame.f_code.co_filename)
            if name is None:
                return
            self.modules.add(name)
            end = next((e for e in ENDS if name.startswith(e)), None)
            back = frame.f_back
            entered = end is not None and not (_module(back.f_code.co_filename) or "").startswith(
                end) if back is not None else end is not None
            if entered:  # the package's entry only: not its internals (retries, pricing, SQL)
                caller: types.FrameType | None = frame
                while caller is not None:
                    mod = _module(caller.f_code.co_filename)
                    if mod is not None:
                        self.chain.add(mod)
                    caller = caller.f_back

    def on(self) -> None:
        """Start counting (this thread; a run's checks stay on it without a citation lookup)."""
        sys.setprofile(self._profile)

    def off(self) -> None:
        """Stop counting."""
        sys.setprofile(None)


def _stopping(finish: Any, walk: Walk) -> Any:
    """``finish``, with the count stopped first."""
    def stop_then_finish(status: str, **kw: Any) -> Any:
        walk.off()
        return finish(status, **kw)

    return stop_then_finish


def count() -> tuple[Walk, Walk]:
    """The walks per (item, judge) and of the whole flow."""
    from legal_judge.benchmark import runner
    from legal_judge.benchmark.ensemble_config import load_ensemble_config
    from legal_judge.dataset import load_dataset, sample_dataset_path
    from legal_judge.store import Store

    item = load_dataset(sample_dataset_path())[:1]
    config = load_ensemble_config("demo")
    config = config.model_copy(update={"judges": config.judges[1:2]})
    results = []
    for whole in (False, True):
        with tempfile.TemporaryDirectory() as tmp:
            os.environ["LEGAL_JUDGE_HOME"] = tmp
            store = Store(Path(tmp) / "store.sqlite3")
            walk = Walk()
            if whole:
                walk.on()
            plan = runner.plan_run(item, config, store=store, use_cache=False)
            plan.start()
            if not whole:
                walk.on()
                plan.finish = _stopping(plan.finish, walk)  # type: ignore[method-assign]
            asyncio.run(runner.execute_plan(plan))
            walk.off()
            store.close()
            results.append(walk)
    return results[0], results[1]


def main() -> None:
    """Print both counts (and the modules, with ``--list``)."""
    import importlib
    import pkgutil

    for info in pkgutil.walk_packages(legal_judge.__path__, "legal_judge."):
        if ".devtools" not in info.name and "langfuse" not in info.name:
            with contextlib.suppress(ImportError):
                importlib.import_module(info.name)
    per_item, whole = count()
    print(f"per (item, judge): {len(per_item.modules)} modules run, {len(per_item.chain)} on the "
          f"way to a provider or the store; whole flow: {len(whole.modules)} run, "
          f"{len(whole.chain)} on the way")
    if "--list" in sys.argv:
        print("per (item, judge), on the way:", *sorted(per_item.chain), sep="\n  ")
        print("per (item, judge), run:", *sorted(per_item.modules), sep="\n  ")
        print("whole flow only:", *sorted(whole.modules - per_item.modules), sep="\n  ")


if __name__ == "__main__":
    main()
