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

``--files`` gives issue 34's own figure instead: the product *files* a Python-level call enters
(all threads) during one judge's judgment of one item (one ``pipeline.judge_one``: the cache, the
judge call, parsing, pricing and its stored rows), and during one audit pair (one position pair and
one counterfactual pair of ``PairRunner``), with concurrency 1 so that no other item's work runs in
the window. Each flow runs twice in one process and only the second is counted (the first loads
what a process loads once); the figure is the median window (the typical judgment), printed with
the largest (a judge's first judgment, which also renders its system prompt once).

Usage: ``PYTHONPATH=. python scripts/walk_count.py [--list] [--files]``.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import sys
import tempfile
import threading
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


class Files:
    """The product files entered during each window (one set per window, all threads)."""

    def __init__(self) -> None:
        self.windows: list[set[str]] = []
        self._now: set[str] | None = None

    def _profile(self, frame: types.FrameType, event: str, arg: Any) -> None:
        if event == "call" and self._now is not None:
            name = frame.f_code.co_filename
            if name.startswith(ROOT):
                self._now.add(str(Path(name).relative_to(ROOT)))

    def wrap(self, owner: Any, name: str) -> None:
        """Count a window around every await of the coroutine function ``owner.name``."""
        inner = getattr(owner, name)

        async def counted(*args: Any, **kwargs: Any) -> Any:
            self._now = set()
            self.windows.append(self._now)
            sys.setprofile(self._profile)
            threading.setprofile(self._profile)
            try:
                return await inner(*args, **kwargs)
            finally:
                sys.setprofile(None)
                threading.setprofile(None)
                self._now = None

        setattr(owner, name, counted)

    def figure(self) -> set[str]:
        """The typical window: the median by size (the files of the last window of that size)."""
        ranked = sorted(self.windows, key=len)
        return ranked[(len(ranked) - 1) // 2]

    def largest(self) -> set[str]:
        """The largest window (a judge's first judgment also renders its system prompt once)."""
        return max(self.windows, key=len)


def count_files() -> tuple[Files, Files]:
    """Files per (item, judge) of ``run`` and per audit pair: each flow runs twice in one process
    and only the second is counted (the first loads the assets, the simulated judges' tables and
    each language's rubrics, once per process)."""
    from click.testing import CliRunner

    from legal_judge.audit import pairs
    from legal_judge.benchmark import pipeline, runner
    from legal_judge.benchmark.ensemble_config import load_ensemble_config
    from legal_judge.cli import cli
    from legal_judge.dataset import load_dataset, sample_dataset_path
    from legal_judge.store import Store

    config = load_ensemble_config("demo")
    # One judge (mistral's), on items of other families (the same-family rule), one at a time.
    config = config.model_copy(update={"judges": config.judges[2:3], "concurrency": 1})
    items = [i for i in load_dataset(sample_dataset_path())
             if "mistral" not in (i.system_under_test or "")][:8]
    run_files, audit_files = Files(), Files()
    for counted in (False, True):
        if counted:
            run_files.wrap(pipeline, "judge_one")
            for name in ("position_pair", "text_pair"):
                audit_files.wrap(pairs.PairRunner, name)
        with tempfile.TemporaryDirectory() as tmp:
            os.environ["LEGAL_JUDGE_HOME"] = tmp
            store = Store(Path(tmp) / "store.sqlite3")
            plan = runner.plan_run(items, config, store=store, use_cache=False)
            asyncio.run(runner.execute_plan(plan))
            store.close()
            out = CliRunner().invoke(cli, ["audit", "run", "--judge", "simulated:demo-openai",
                                           "--dimensions", "authority,position", "--pairs", "3",
                                           "--concurrency", "1", "--no-cache"])
            if out.exit_code not in (0, 1):
                raise SystemExit(f"audit run failed ({out.exit_code}): {out.output}")
    return run_files, audit_files


def main() -> None:
    """Print both counts (and the modules, with ``--list``)."""
    import importlib
    import pkgutil

    for info in pkgutil.walk_packages(legal_judge.__path__, "legal_judge."):
        if ".devtools" not in info.name and "langfuse" not in info.name:
            with contextlib.suppress(ImportError):
                importlib.import_module(info.name)
    if "--files" in sys.argv:
        run_files, audit_files = count_files()
        run_fig, audit_fig = run_files.figure(), audit_files.figure()
        print(f"files entered per (item, judge) of run: {len(run_fig)} (largest window "
              f"{len(run_files.largest())}); per audit pair: {len(audit_fig)} (largest "
              f"{len(audit_files.largest())})")
        if "--list" in sys.argv:
            print("per (item, judge):", *sorted(run_fig), sep="\n  ")
            print("per audit pair:", *sorted(audit_fig), sep="\n  ")
            print("largest windows only:", *sorted((run_files.largest() - run_fig)
                                                   | (audit_files.largest() - audit_fig)),
                  sep="\n  ")
        return
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
