"""A small, self-contained repeated-block detector for the architecture tests.

CI machines do not have the ``duplicates`` command, so the duplicates rule needs its own reader. This
one is deliberately simpler and stricter about what counts as "the same": it sees only lines that are
identical after normalising (no same-shape matching with other names), so its count is a lower bound
of what ``duplicates`` reports, and the rule applies the same ceiling to both.

Normalising a line: strip it, and drop it when blank, a comment only or part of an import statement
(two modules importing the same names share a vocabulary, not a block; ``duplicates`` passes over
import lines too). Docstrings stay: a copied
docstring is copied text too. A *run* is ``min_lines`` or more consecutive normalised lines that stand
identically in two places (in two files, or twice in one file without overlapping). Places are counted
as pairs of files, the way ``duplicates`` counts its rows: two files sharing three runs are one pair
(a reader fixes them together), a file repeating itself is one pair.
"""

from __future__ import annotations

import ast
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

MIN_LINES = 6


@dataclass(frozen=True)
class Place:
    """Where a shared run starts: a file (relative to the scanned root) and its 1-based line."""

    path: str
    line: int


@dataclass(frozen=True)
class Pair:
    """Two places sharing a run of ``length`` normalised lines (the longest run of the file pair)."""

    first: Place
    second: Place
    length: int

    def __str__(self) -> str:
        return (f"{self.first.path}:{self.first.line} ~ {self.second.path}:{self.second.line} "
                f"({self.length} lines)")


def _import_lines(text: str) -> set[int]:
    """The 1-based lines that belong to import statements (a parenthesised list spans several)."""
    try:
        parsed = ast.parse(text)
    except SyntaxError:
        return set()
    lines: set[int] = set()
    for node in ast.walk(parsed):
        if isinstance(node, ast.Import | ast.ImportFrom):
            lines.update(range(node.lineno, (node.end_lineno or node.lineno) + 1))
    return lines


def normalised_lines(text: str) -> list[tuple[int, str]]:
    """The lines that count, as (1-based line number, stripped text).

    Args:
        text: a source file's text.

    Returns:
        Every line that is neither blank, a comment only, nor part of an import statement, stripped
        of surrounding white space.
    """
    imports = _import_lines(text)
    kept = []
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        if line and not line.startswith("#") and number not in imports:
            kept.append((number, line))
    return kept


def _runs_between(a: list[tuple[int, str]], b: list[tuple[int, str]], same: bool,
                  min_lines: int) -> list[tuple[int, int, int]]:
    """Maximal common runs of two normalised files as (start in a, start in b, length).

    A run starts where two lines are equal and the lines before them are not; it extends while
    they stay equal. Within one file (``same``) the second place starts after the first and a run
    stops before it would overlap its own copy (a block of identical lines shifted by one).
    Only called for file pairs that share a ``min_lines`` window, so the quadratic scan stays small.
    """
    found = []
    for i in range(len(a)):
        for j in range(i + 1 if same else 0, len(b)):
            if a[i][1] != b[j][1] or (i > 0 and j > 0 and a[i - 1][1] == b[j - 1][1]
                                      and not (same and i - 1 == j - 1)):
                continue
            n = 0
            while (i + n < len(a) and j + n < len(b) and a[i + n][1] == b[j + n][1]
                   and not (same and i + n >= j)):
                n += 1
            if n >= min_lines:
                found.append((i, j, n))
    return found


def find_pairs(files: dict[str, str], min_lines: int = MIN_LINES) -> list[Pair]:
    """The pairs of files that share a run of ``min_lines`` or more identical normalised lines.

    Args:
        files: source text by path (any stable name).
        min_lines: the shortest run that makes a pair.

    Returns:
        One pair per file pair (a file repeating itself is a pair with itself), its longest run
        named, longest first.
    """
    lines = {path: normalised_lines(text) for path, text in files.items()}
    windows: dict[tuple[str, ...], list[str]] = defaultdict(list)
    for path, kept in lines.items():
        texts = [t for _, t in kept]
        for start in range(len(texts) - min_lines + 1):
            windows[tuple(texts[start:start + min_lines])].append(path)
    candidates: set[tuple[str, str]] = set()
    for paths in windows.values():
        for x in range(len(paths)):
            for y in range(x, len(paths)):
                if x != y or paths.count(paths[x]) > 1:
                    candidates.add(tuple(sorted((paths[x], paths[y]))))  # type: ignore[arg-type]
    pairs = []
    for first, second in sorted(candidates):
        a, b = lines[first], lines[second]
        runs = _runs_between(a, b, first == second, min_lines)
        if not runs:
            continue
        i, j, n = max(runs, key=lambda r: r[2])
        pairs.append(Pair(Place(first, a[i][0]), Place(second, b[j][0]), n))
    return sorted(pairs, key=lambda p: (-p.length, str(p)))


def read_tree(root: Path, suffixes: Iterable[str] = (".py",)) -> dict[str, str]:
    """Every source file below ``root`` by its path relative to ``root`` (POSIX form)."""
    return {path.relative_to(root).as_posix(): path.read_text(encoding="utf-8")
            for path in sorted(root.rglob("*")) if path.suffix in tuple(suffixes) and path.is_file()}
