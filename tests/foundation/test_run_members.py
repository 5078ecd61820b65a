"""A run's members are set by its own package (issue 34 step 2: ``batch/`` keeps orchestration only).

A run object (:class:`~legal_judge.benchmark.runner.RunState`, or the
:class:`~legal_judge.benchmark.pipeline.ItemJob` it builds) takes what a caller needs changed
through its constructor or a documented method; no module outside ``legal_judge/benchmark/``
assigns, augments or deletes one of its attributes, or a part of one (``run.calls = ...``,
``plan.job.judges = ...``, ``run.judges[0].provider = ...``, ``setattr(run, ...)``). A batch run
once replaced ``run.calls`` from ``batch/orchestrator.py``.

The check reads the source (``ast``): a name is a run object when it is bound to a call of
``plan_run``, ``RunState`` or ``ItemJob``, or annotated with one of the two classes.
"""

from __future__ import annotations

import ast
from pathlib import Path

from .test_architecture import PACKAGE, Tree, load_tree

OWNER = "benchmark"
RUN_CLASSES = {"RunState", "ItemJob"}
RUN_MAKERS = RUN_CLASSES | {"plan_run"}


def _called_name(node: ast.expr | None) -> str | None:
    """``f`` for ``f(...)``, ``m.f(...)`` and ``await f(...)``; None for anything else."""
    if isinstance(node, ast.Await):
        node = node.value
    if not isinstance(node, ast.Call):
        return None
    func = node.func
    return func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else None


def _annotated_run(annotation: ast.expr | None) -> bool:
    if annotation is None:
        return False
    names = {n.id for n in ast.walk(annotation) if isinstance(n, ast.Name)}
    names |= {n.attr for n in ast.walk(annotation) if isinstance(n, ast.Attribute)}
    names |= {n.value for n in ast.walk(annotation)
              if isinstance(n, ast.Constant) and isinstance(n.value, str)}
    return bool(names & RUN_CLASSES)


def _run_names(parsed: ast.Module) -> set[str]:
    """The names that hold a run object somewhere in the module."""
    names: set[str] = set()
    for node in ast.walk(parsed):
        if isinstance(node, ast.Assign) and _called_name(node.value) in RUN_MAKERS:
            names |= {t.id for t in node.targets if isinstance(t, ast.Name)}
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and (
                _annotated_run(node.annotation) or _called_name(node.value) in RUN_MAKERS):
            names.add(node.target.id)
        elif isinstance(node, ast.arg) and _annotated_run(node.annotation):
            names.add(node.arg)
    return names


def _root(node: ast.expr) -> str | None:
    """The name an attribute chain starts from: ``run`` for ``run.job.calls`` and for
    ``run.judges[0].provider`` (a member of a member is the run's too)."""
    while isinstance(node, ast.Attribute | ast.Subscript):
        node = node.value
    return node.id if isinstance(node, ast.Name) else None


def run_members_set_outside(tree: Tree) -> list[str]:
    """``module:line name.attr`` for each attribute of a run object set outside its package."""
    owner = f"{tree.name}.{OWNER}"
    found: list[str] = []
    for module, parsed in tree.trees.items():
        if module == owner or module.startswith(owner + "."):
            continue
        runs = _run_names(parsed)
        if not runs:
            continue
        for node in ast.walk(parsed):
            targets: list[ast.expr] = []
            if isinstance(node, ast.Assign):
                targets = [t for target in node.targets for t in
                           (target.elts if isinstance(target, ast.Tuple) else [target])]
            elif isinstance(node, ast.AugAssign | ast.AnnAssign):
                targets = [node.target]
            elif isinstance(node, ast.Delete):
                targets = node.targets
            elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
                  and node.func.id in ("setattr", "delattr") and node.args):
                if _root(node.args[0]) in runs:
                    found.append(f"{module}:{node.lineno} {node.func.id}({ast.unparse(node.args[0])})")
                continue
            for target in targets:
                if isinstance(target, ast.Attribute | ast.Subscript) and _root(target) in runs:
                    found.append(f"{module}:{node.lineno} {ast.unparse(target)}")
    return sorted(found)


def test_no_module_outside_benchmark_sets_a_member_of_a_run() -> None:
    assert run_members_set_outside(load_tree(PACKAGE, "legal_judge")) == []


def test_the_checker_sees_a_run_member_set_from_outside(tmp_path: Path) -> None:
    files = {
        "__init__.py": "",
        "benchmark/__init__.py": "",
        "benchmark/runner.py": ("class RunState:\n    pass\n\n"
                                "def plan_run():\n    run = RunState()\n    run.calls = 1\n"
                                "    return run\n"),
        "batch/__init__.py": "",
        "batch/orchestrator.py": (
            "from pkg.benchmark import runner\nfrom pkg.benchmark.runner import RunState, plan_run\n\n"
            "def go(judges):\n    run = plan_run()\n    run.calls = 2\n    run.job.judges = judges\n"
            "    run.warnings += ['x']\n    setattr(run, 'calls', 3)\n    judges[0].provider = 4\n"
            "    other = object()\n    other.calls = 5\n    run.judges[0].provider = 6\n"
            "    run.done[('i', 'j')] = {}\n\n"
            "async def resume(state: 'RunState', plan: runner.RunState | None):\n"
            "    state.done, x = {}, 1\n    del plan.job\n    plan2 = runner.plan_run()\n"
            "    plan2.on_progress = None\n"),
    }
    package = tmp_path / "pkg"
    for relative, text in files.items():
        path = package / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    assert run_members_set_outside(load_tree(package, "pkg")) == [
        "pkg.batch.orchestrator:13 run.judges[0].provider",
        "pkg.batch.orchestrator:14 run.done['i', 'j']",
        "pkg.batch.orchestrator:17 state.done", "pkg.batch.orchestrator:18 plan.job",
        "pkg.batch.orchestrator:20 plan2.on_progress", "pkg.batch.orchestrator:6 run.calls",
        "pkg.batch.orchestrator:7 run.job.judges", "pkg.batch.orchestrator:8 run.warnings",
        "pkg.batch.orchestrator:9 setattr(run)"]
