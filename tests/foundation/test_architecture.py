"""The layer rules of docs/ARCHITECTURE.md, checked on the source of ``legal_judge``.

The rules are read from the code's own imports (``ast``), without importing anything:

- no import cycle among ``legal_judge`` modules, counting function-level (lazy) imports and imports under
  ``if TYPE_CHECKING:``: both hide a cycle from Python, not from a reader (two modules that need each
  other are one concern, or share a third that owns what both need);
- no ``from legal_judge.x import _private``, no ``module._private`` and no ``obj._private`` where the
  private name is not defined in the module that uses it (it then belongs to another module's object);
- ``langfuse`` is imported only in ``legal_judge/sync/langfuse*.py``;
- SQL text and a Store's ``.db`` connection appear only in ``legal_judge/store/``;
- no module over 400 lines, except those listed in ``LONG_MODULES`` with the reason;
- at most 12 top-level modules (``__init__`` and ``__main__`` aside): everything else lives in the
  package that owns its concern;
- at most 15 pairs of places that repeat a block of 6 or more identical lines (``dup_detector``), and,
  where the machine has the ``duplicates`` command, no pair it reports (same lines or same shape)
  but the reviewed coincidences of ``SHAPE_COINCIDENCES``: one helper where two places do the same
  thing.

Each rule is also run on a small synthetic package that breaks it, so a checker that sees nothing fails.
"""

from __future__ import annotations

import ast
import re
import shutil
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from .dup_detector import find_pairs, read_tree

PACKAGE = Path(__file__).resolve().parents[2] / "legal_judge"

MAX_LINES = 400

# A module may be longer only with a reason a reviewer accepts; the list is meant to shrink.
LONG_MODULES: dict[str, str] = {}

_SQL = re.compile(
    r"\b(SELECT\b.+\bFROM|INSERT\s+(OR\s+\w+\s+)?INTO|UPDATE\s+\w+\s+SET|DELETE\s+FROM|"
    r"CREATE\s+(TABLE|INDEX|VIEW)|ALTER\s+TABLE|DROP\s+TABLE|PRAGMA\s+\w+)\b",
    re.IGNORECASE | re.DOTALL,
)


@dataclass
class Tree:
    """The modules of one package, with their parsed source and import edges."""

    root: Path
    name: str
    files: dict[str, Path] = field(default_factory=dict)
    trees: dict[str, ast.Module] = field(default_factory=dict)
    edges: dict[str, set[str]] = field(default_factory=dict)
    private: list[str] = field(default_factory=list)
    langfuse: list[str] = field(default_factory=list)


def _module_name(package: Path, name: str, path: Path) -> str:
    parts = [name, *path.relative_to(package).with_suffix("").parts]
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def load_tree(package: Path, name: str) -> Tree:
    """Parse every module of ``package`` (imported as ``name``) and record its imports."""
    tree = Tree(root=package, name=name)
    for path in sorted(package.rglob("*.py")):
        module = _module_name(package, name, path)
        tree.files[module] = path
        tree.trees[module] = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    for module, parsed in tree.trees.items():
        tree.edges[module] = set()
        aliases: dict[str, str] = {}
        for node in ast.walk(parsed):
            if isinstance(node, ast.Import):
                for alias in node.names:
                    _note_external(tree, module, alias.name)
                    if alias.name.split(".")[0] == name:
                        target = _owning_module(tree, alias.name)
                        tree.edges[module].add(target)
                        aliases[alias.asname or alias.name] = target
            elif isinstance(node, ast.ImportFrom):
                source = _absolute(tree, module, node.level, node.module)
                _note_external(tree, module, source)
                if source.split(".")[0] != name:
                    continue
                for alias in node.names:
                    submodule = f"{source}.{alias.name}"
                    if submodule in tree.files:
                        tree.edges[module].add(submodule)
                        aliases[alias.asname or alias.name] = submodule
                        continue
                    target = _owning_module(tree, source)
                    tree.edges[module].add(target)
                    if _is_private(alias.name) and target != module:
                        tree.private.append(f"{module} imports {target}.{alias.name}")
        for node in ast.walk(parsed):
            if (
                isinstance(node, ast.Attribute)
                and isinstance(node.value, ast.Name)
                and node.value.id in aliases
                and _is_private(node.attr)
                and aliases[node.value.id] != module
            ):
                tree.private.append(f"{module} uses {aliases[node.value.id]}.{node.attr}")
        tree.edges[module].discard(module)
    return tree


def _is_private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__")


def _note_external(tree: Tree, module: str, imported: str) -> None:
    if imported.split(".")[0] == "langfuse":
        tree.langfuse.append(module)


def _absolute(tree: Tree, module: str, level: int, name: str | None) -> str:
    if level == 0:
        return name or ""
    base = module.split(".")
    if tree.files[module].name != "__init__.py":
        base = base[:-1]
    base = base[: len(base) - (level - 1)]
    return ".".join([*base, name] if name else base)


def _owning_module(tree: Tree, dotted: str) -> str:
    while dotted not in tree.files and "." in dotted:
        dotted = dotted.rsplit(".", 1)[0]
    return dotted


def cycles(tree: Tree) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    counter = 0
    for start in tree.files:
        if start in index:
            continue
        work: list[tuple[str, Iterator[str]]] = [(start, iter(sorted(tree.edges[start])))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in tree.files:
                    continue
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(tree.edges[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component: list[str] = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def _in(tree: Tree, module: str, package: str) -> bool:
    prefix = f"{tree.name}.{package}"
    return module == prefix or module.startswith(prefix + ".")


def langfuse_outside_sync(tree: Tree) -> list[str]:
    """Modules that import ``langfuse`` but are not ``sync/langfuse*.py``."""
    allowed = f"{tree.name}.sync.langfuse"
    return sorted({module for module in tree.langfuse if not module.startswith(allowed)})


def sql_outside_store(tree: Tree) -> list[str]:
    """``module:line`` of SQL text or ``.db`` use outside the store package."""
    found: list[str] = []
    for module, parsed in tree.trees.items():
        if _in(tree, module, "store"):
            continue
        for node in ast.walk(parsed):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and _SQL.search(node.value):
                if _is_docstring(parsed, node):
                    continue
                found.append(f"{module}:{node.lineno} SQL text")
            elif isinstance(node, ast.Attribute) and node.attr == "db":
                found.append(f"{module}:{node.lineno} .db")
    return found


def _is_docstring(parsed: ast.Module, constant: ast.Constant) -> bool:
    for node in ast.walk(parsed):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and body[0].value is constant:
                return True
    return False


# Private attributes of third-party objects used on purpose, with the reason (the SDK offers no public way).
FOREIGN_PRIVATE: dict[str, str] = {
    "_otel_tracer": "Langfuse v5 exposes no public way to start a span at a stored (past) timestamp",
    "_create_observation_from_otel_span": "Langfuse v5 wraps a started OTel span only through this",
    "_otel_span": "ending a Langfuse v5 observation at a stored timestamp needs its OTel span",
}


def private_attributes(tree: Tree, foreign: dict[str, str] | None = None) -> list[str]:
    """``module:line name`` where a module uses a private attribute it does not define itself."""
    foreign = foreign or {}
    found: list[str] = []
    for module, parsed in tree.trees.items():
        defined: set[str] = set()
        for node in ast.walk(parsed):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                defined.add(node.name)
            elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store):
                defined.add(node.attr)
            elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                defined.add(node.id)
            elif isinstance(node, ast.keyword) and node.arg:
                defined.add(node.arg)
        for node in ast.walk(parsed):
            if (
                isinstance(node, ast.Attribute)
                and _is_private(node.attr)
                and node.attr not in defined
                and node.attr not in foreign
            ):
                found.append(f"{module}:{node.lineno} {ast.unparse(node.value)}.{node.attr}")
    return sorted(found)


def long_modules(tree: Tree, limit: int = MAX_LINES, allowed: dict[str, str] | None = None) -> list[str]:
    """Modules over ``limit`` lines that are not listed in ``allowed``."""
    allowed = allowed or {}
    found = []
    for module, path in tree.files.items():
        lines = len(path.read_text(encoding="utf-8").splitlines())
        if lines > limit and module not in allowed:
            found.append(f"{module}: {lines} lines")
    return found


# Packages a judge call passes through: its identity rides on the request (``CallContext``), never
# in a ContextVar that a reader cannot follow from the call site.
CALL_PATH = ("judge", "providers", "batch", "audit", "debias", "benchmark")
# Classes only their own package may subclass: a judge's behaviour is changed by what it is given
# (a provider, a context), not by an override from another package.
SEALED = {"Judge": "judge", "JudgeTarget": "audit"}


def context_vars_in_call_path(tree: Tree) -> list[str]:
    """``module:line`` of each ``ContextVar`` a call-path module uses."""
    found: list[str] = []
    for module, parsed in tree.trees.items():
        if not any(_in(tree, module, package) for package in CALL_PATH):
            continue
        for node in ast.walk(parsed):
            names = ([node.id] if isinstance(node, ast.Name) else
                     [node.attr] if isinstance(node, ast.Attribute) else
                     [a.name for a in node.names] if isinstance(node, ast.ImportFrom) else [])
            if "ContextVar" in names:
                found.append(f"{module}:{node.lineno}")
    return sorted(set(found))


def sealed_subclasses(tree: Tree) -> list[str]:
    """``module.Class(Base)`` for each subclass of a sealed class outside the base's package."""
    found: list[str] = []
    for module, parsed in tree.trees.items():
        for node in ast.walk(parsed):
            if not isinstance(node, ast.ClassDef):
                continue
            for base in node.bases:
                name = (base.id if isinstance(base, ast.Name) else
                        base.attr if isinstance(base, ast.Attribute) else None)
                if name in SEALED and not _in(tree, module, SEALED[name]):
                    found.append(f"{module}.{node.name}({name})")
    return found


@pytest.fixture(scope="module")
def tree() -> Tree:
    return load_tree(PACKAGE, "legal_judge")


def test_no_import_cycles(tree: Tree) -> None:
    assert cycles(tree) == []


def test_no_private_names_cross_modules(tree: Tree) -> None:
    assert tree.private == []


def test_no_private_attributes_of_other_modules(tree: Tree) -> None:
    assert private_attributes(tree, foreign=FOREIGN_PRIVATE) == []


def test_langfuse_is_imported_only_in_sync_langfuse_modules(tree: Tree) -> None:
    assert langfuse_outside_sync(tree) == []
    assert any(module.startswith("legal_judge.sync.langfuse") for module in tree.langfuse)


def test_sql_lives_only_in_the_store(tree: Tree) -> None:
    assert sql_outside_store(tree) == []


def test_modules_stay_under_400_lines(tree: Tree) -> None:
    assert long_modules(tree, allowed=LONG_MODULES) == []


MAX_TOP_LEVEL = 12


def top_level_modules(tree: Tree) -> list[str]:
    """The modules directly under the package (not packages, not ``__init__``/``__main__``)."""
    return sorted(path.stem for module, path in tree.files.items()
                  if path.parent == tree.root and path.stem not in ("__init__", "__main__"))


def test_at_most_twelve_top_level_modules(tree: Tree) -> None:
    top = top_level_modules(tree)
    assert len(top) <= MAX_TOP_LEVEL, f"{len(top)} top-level modules: {top}"


def test_the_top_level_count_sees_modules_and_not_packages(tmp_path: Path) -> None:
    pkg = tmp_path / "pkg"
    (pkg / "sub").mkdir(parents=True)
    for name in ("__init__.py", "__main__.py", "a.py", "b.py", "sub/__init__.py", "sub/c.py"):
        (pkg / name).write_text("", encoding="utf-8")
    assert top_level_modules(load_tree(pkg, "pkg")) == ["a", "b"]


def test_every_long_module_exception_is_still_long_and_has_a_reason(tree: Tree) -> None:
    for module, reason in LONG_MODULES.items():
        assert module in tree.files, f"{module} is listed in LONG_MODULES but does not exist"
        assert len(reason) > 20, f"{module}: say why it is long"
        assert len(tree.files[module].read_text(encoding="utf-8").splitlines()) > MAX_LINES, (
            f"{module} is no longer over {MAX_LINES} lines: take it off LONG_MODULES"
        )


MAX_DUPLICATE_PAIRS = 15


def test_product_duplicates_stay_at_or_below_fifteen_pairs() -> None:
    pairs = find_pairs(read_tree(PACKAGE))
    listing = "\n".join(str(pair) for pair in pairs)
    assert len(pairs) <= MAX_DUPLICATE_PAIRS, (
        f"{len(pairs)} pairs of places share 6 or more lines (at most {MAX_DUPLICATE_PAIRS}): "
        f"make one helper where two places do the same thing\n{listing}")


def _duplicates_pair_count(first_line: str) -> int:
    """The pair count of ``duplicates``' first line (``37 pairs of places …`` or ``no duplicates …``)."""
    if first_line.startswith("no duplicates"):
        return 0
    match = re.match(r"(\d+) pairs? of places", first_line)
    assert match, f"unexpected first line from duplicates: {first_line!r}"
    return int(match[1])


# Pairs the `duplicates` command reports by *shape* (same line forms, other names and values) or
# by import lists that are not one piece of logic written twice, each with the reason it stays.
# Keyed by file pair, so moving lines does not matter; a pair fixed later is taken off. Every other
# pair it reports is a block written twice: one helper, a table or a shared base fixes it. (Issue
# 34 aimed at 15 pairs in all; these reviewed coincidences alone are more, see the list.)
SHAPE_COINCIDENCES: dict[tuple[str, str], str] = {
    ("calibration/escalation_schema.py", "stats/selective.py"): "the stored escalation report "
        "(pydantic, stored shape fixed) carries figures of the stats result (a frozen "
        "dataclass); stats must not depend on calibration",
    ("calibration/schema.py", "stats/divergence.py"): "the stored PassFailRow (pydantic, stored "
        "shape fixed) carries the counts of stats' PassFailConfusion; stats must not depend on "
        "calibration",
    ("checks/citation_rules.py", "checks/citation_rules.py"): "a table of rule functions with one "
        "signature and one return form (return _err(rule, message) / return [])",
    ("store/migrations.py", "store/migrations.py"): "append-only migrations: two that add owner "
        "columns (one helper, _owner_columns), each followed by a _script migration",
    ("policy/core.py", "policy/core.py"): "one read-only property per policy section",
    ("benchmark/outcome.py", "checks/citation_regex.py"): "two unrelated dataclasses",
    ("benchmark/shards.py", "reports/data.py"): "two unrelated dataclasses (a sharded run's "
        "state, a report's stored data) with defaulted dict fields",
    ("calibration/validation_schema.py", "stats/proportions.py"): "two unrelated models",
    ("assets/catalogue.py", "batch/base.py"): "a regex constant then a two-field dataclass",
    ("audit/generic.py", "calibration/validation_schema.py"): "two unrelated models",
    ("benchmark/pipeline.py", "devtools/openai_stub.py"): "two dataclasses of defaulted fields",
    ("calibration/validation_schema.py", "reports/site.py"): "two unrelated models",
    ("reports/site.py", "stats/proportions.py"): "two unrelated dataclasses",
    ("stats/estimates.py", "sync/langfuse_client.py"): "the tail of two unrelated dataclasses",
    ("audit/design.py", "audit/probes.py"): "optional fields (x: T | None = None) of two models",
    ("audit/design.py", "checks/report.py"): "optional fields of two models",
    ("audit/probes.py", "checks/report.py"): "optional fields of two models",
    ("checks/eyecite_layer.py", "checks/report.py"): "optional fields of two models",
    ("benchmark/ensemble.py", "calibration/rubrics.py"): "a two-line __all__ then a frozen "
        "dataclass of name, kind/family and float fields: two unrelated dataclasses",
}

_ROW = re.compile(r"^D\d+ (\S+?):\d+-\d+ ~ (\S+?):\d+-\d+")


def _reported_pairs(out: str) -> list[tuple[str, str]]:
    """The file pairs of ``duplicates``' rows, each sorted."""
    found = (_ROW.match(line) for line in out.splitlines())
    return [(min(m[1], m[2]), max(m[1], m[2])) for m in found if m]


def test_every_pair_the_duplicates_command_reports_is_fixed_or_reviewed() -> None:
    command = shutil.which("duplicates")
    if command is None:
        pytest.skip("the `duplicates` command is not installed here (CI); "
                    "test_product_duplicates_stay_at_or_below_fifteen_pairs holds the rule")
    out = subprocess.run([command, "--seconds", "200", "--most", "200", "--repo", str(PACKAGE)],
                         capture_output=True, text=True, timeout=300, check=False).stdout
    lines = out.splitlines()
    assert lines, "duplicates printed nothing"
    incomplete = [line for line in lines if line.startswith("incomplete:")]
    assert not incomplete, f"duplicates did not read the whole package: {incomplete}"
    pairs = _reported_pairs(out)
    assert len(pairs) == _duplicates_pair_count(lines[0]), out
    repeated = [f"{a} ~ {b}" for a, b in pairs if (a, b) not in SHAPE_COINCIDENCES]
    assert repeated == [], (
        f"{len(repeated)} of {len(pairs)} pairs repeat a block: make one helper where two places "
        "do the same thing, or (a coincidence of shape only) add the file pair to "
        f"SHAPE_COINCIDENCES with the reason\n{out}")


def test_the_coincidences_are_sorted_pairs_with_a_reason() -> None:
    for (first, second), reason in SHAPE_COINCIDENCES.items():
        # Files are not required to exist: modules being merged elsewhere may leave a stale
        # entry, which matches nothing and is taken off when noticed.
        assert first <= second, f"write the pair sorted: {second}, {first}"
        assert first.endswith(".py") and second.endswith(".py"), (first, second)
        assert len(reason) > 10, f"{first} ~ {second}: say why the pair stays"


def test_the_duplicates_rows_are_read_as_sorted_file_pairs() -> None:
    out = ("2 pairs of places (9 files read), each sharing runs\n"
           "D1 b.py:32-40 ~ a.py:62-70 (+1 more run)\n"
           "D2 store/x.py:195-207 ~ store/x.py:220-233 shape (+1 more run)\n")
    assert _reported_pairs(out) == [("a.py", "b.py"), ("store/x.py", "store/x.py")]


def test_the_duplicates_count_is_read_from_the_first_line() -> None:
    assert _duplicates_pair_count("37 pairs of places (279 files read), each sharing runs") == 37
    assert _duplicates_pair_count("1 pair of places (3 files read)") == 1
    assert _duplicates_pair_count("no duplicates (279 files read)") == 0


_SHARED = [f"    total = total + {i} * weight  # step {i}" for i in range(7)]


def _module(shared: list[str], before: str) -> str:
    # Distinct lines around the shared block, so only the block itself can match.
    return "\n".join([f"def {before}(total, weight):", f"    {before}_only = 1", *shared,
                      "", "    # a comment-only line and blank lines do not count", "",
                      f"    return total + {before}_only", ""])


def test_the_detector_finds_a_seven_line_block_shared_by_two_files(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text(_module(_SHARED, "first"), encoding="utf-8")
    (tmp_path / "b.py").write_text("\n\n" + _module([s.lstrip() for s in _SHARED], "second"),
                                   encoding="utf-8")
    pairs = find_pairs(read_tree(tmp_path))
    assert [(p.first.path, p.first.line, p.second.path, p.second.line, p.length) for p in pairs] == [
        ("a.py", 3, "b.py", 5, 7)]


def test_the_detector_passes_over_five_shared_lines_and_imports(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text(_module(_SHARED[:5], "first"), encoding="utf-8")
    (tmp_path / "b.py").write_text(_module(_SHARED[:5], "second"), encoding="utf-8")
    names = "".join(f"    name_{i},\n" for i in range(8))
    (tmp_path / "c.py").write_text(f"from pkg.base import (\n{names})\nX = 1\n", encoding="utf-8")
    (tmp_path / "d.py").write_text(f"from pkg.base import (\n{names})\nY = 2\n", encoding="utf-8")
    assert find_pairs(read_tree(tmp_path)) == []


def test_the_detector_sees_a_block_repeated_within_one_file(tmp_path: Path) -> None:
    text = _module(_SHARED, "first") + _module(_SHARED, "second")
    (tmp_path / "a.py").write_text(text, encoding="utf-8")
    (tmp_path / "same.py").write_text("x = 0\n" * 12, encoding="utf-8")
    pairs = find_pairs(read_tree(tmp_path))
    assert [(p.first.path, p.second.path, p.length) for p in pairs] == [
        ("a.py", "a.py", 7), ("same.py", "same.py", 6)]


# -- the checkers themselves, on a package made to break every rule -------------------------------------


def test_no_context_var_carries_call_identity(tree: Tree) -> None:
    assert context_vars_in_call_path(tree) == []


def test_only_their_own_package_subclasses_the_judge_and_the_audit_target(tree: Tree) -> None:
    assert sealed_subclasses(tree) == []


def test_the_call_path_checkers_see_a_context_var_and_a_foreign_subclass(tmp_path: Path) -> None:
    package = _write(tmp_path, {
        "__init__.py": "",
        "judge/__init__.py": "",
        "judge/judge.py": "class Judge:\n    pass\n\nclass Local(Judge):\n    pass\n",
        "batch/__init__.py": "",
        "batch/routing.py": ("import contextvars\nfrom contextvars import ContextVar\n"
                             "from pkg.judge.judge import Judge\n"
                             "A = ContextVar('a')\nB = contextvars.ContextVar('b')\n"
                             "class BatchJudge(Judge):\n    pass\n"),
        "sync/__init__.py": "",
        "sync/client.py": "from contextvars import ContextVar\nSPAN = ContextVar('s')\n",
    })
    synthetic = load_tree(package, "pkg")
    assert context_vars_in_call_path(synthetic) == ["pkg.batch.routing:2", "pkg.batch.routing:4",
                                                    "pkg.batch.routing:5"]
    assert sealed_subclasses(synthetic) == ["pkg.batch.routing.BatchJudge(Judge)"]


def _write(root: Path, files: dict[str, str]) -> Path:
    package = root / "pkg"
    for relative, text in files.items():
        path = package / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return package


def test_the_checkers_see_each_kind_of_violation(tmp_path: Path) -> None:
    package = _write(
        tmp_path,
        {
            "__init__.py": "",
            "a.py": "from pkg.b import helper\n",
            "b.py": "def helper():\n    from pkg import a  # a lazy import still closes the cycle\n",
            "c.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from pkg.f import F\n",
            "f.py": "from pkg.c import y  # a type-only import back still closes the cycle\n",
            "d.py": "from pkg.c import x\nfrom pkg.b import _secret\nimport pkg.a as mod\nmod._hidden()\n",
            "e.py": "class E:\n    def __init__(self):\n        self._own = 1\n\ndef f(client):\n    return client._conn\n",
            "report.py": 'import langfuse\nQUERY = "SELECT id FROM runs"\ndef f(store):\n    return store.db\n',
            "store/__init__.py": 'Q = "INSERT INTO runs VALUES (1)"\n',
            "sync/__init__.py": "",
            "sync/langfuse_client.py": "from langfuse import Langfuse\n",
            "big.py": "x = 1\n" * 401,
        },
    )
    synthetic = load_tree(package, "pkg")
    assert sorted(cycles(synthetic)) == [["pkg.a", "pkg.b"], ["pkg.c", "pkg.f"]]
    assert sorted(synthetic.private) == ["pkg.d imports pkg.b._secret", "pkg.d uses pkg.a._hidden"]
    assert private_attributes(synthetic) == ["pkg.d:4 mod._hidden", "pkg.e:6 client._conn"]
    assert langfuse_outside_sync(synthetic) == ["pkg.report"]
    assert sql_outside_store(synthetic) == ["pkg.report:2 SQL text", "pkg.report:4 .db"]
    assert long_modules(synthetic) == ["pkg.big: 401 lines"]
    assert long_modules(synthetic, allowed={"pkg.big": "a reason"}) == []
