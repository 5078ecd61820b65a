"""A benchmark dataset read as a stream: one JSON Lines line at a time, never the whole file.

``legal-judge run`` on a 100,000-item file held every item (about 9 KB each) before the run
started. A :class:`DatasetStream` instead validates the file in one pass that keeps nothing but
the ids seen (:meth:`DatasetStream.validate`: the same defects, with file, line and field, as
:func:`~legal_judge.dataset.load_dataset`, all at once, before the run exists), and each later
iteration reads the file again, yielding one validated item at a time; an iteration that meets a
defect (a file changed since) raises the same :class:`~legal_judge.errors.InputError` at its end,
so a run storing the items as they come rolls back and stores nothing.

CSV and JSON-array files are not line-oriented: they are loaded whole, as before.
"""

from __future__ import annotations

from collections.abc import Iterator
from itertools import islice
from pathlib import Path

from legal_judge.dataset.items import load_dataset, validate_row
from legal_judge.dataset.lines import decode_line, file_problem, jsonl_row
from legal_judge.errors import InputError, Problem
from legal_judge.models import BenchmarkItem

__all__ = ["DatasetStream", "LimitedItems", "stream_dataset"]


class DatasetStream:
    """A dataset file whose items are read again, one at a time, by every iteration."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.rows: int | None = None  # known once a pass has ended
        self._whole: list[BenchmarkItem] | None = None

    @property
    def streamed(self) -> bool:
        """True for a JSON Lines file (any suffix but .csv and .json: what load_dataset reads)."""
        return self.path.suffix.lower() not in (".csv", ".json")

    def validate(self) -> int:
        """Read the whole file once, keeping no item; the number of items.

        Raises:
            InputError: every defect of the file, as :func:`~legal_judge.dataset.load_dataset`.
        """
        for _ in self:
            pass
        assert self.rows is not None
        return self.rows

    def __iter__(self) -> Iterator[BenchmarkItem]:
        if not self.streamed:
            if self._whole is None:
                self._whole = load_dataset(self.path)
                self.rows = len(self._whole)
            yield from self._whole
            return
        yield from self._lines()

    def _lines(self) -> Iterator[BenchmarkItem]:
        path = self.path
        if (problem := file_problem(path)) is not None:
            raise InputError([problem], fix="check the file path" if not path.is_file() else None)
        problems: list[Problem] = []
        first_line: dict[str, int] = {}  # the only thing kept per item: duplicates are refused
        text_seen = False
        try:
            handle = path.open("rb")
        except OSError as exc:  # a directory, a permission problem
            raise InputError([Problem(str(path), None, None, f"cannot read: {exc.strerror}")],
                             fix="check the file path" if not path.is_file() else None) from exc
        with handle:
            for lineno, raw in enumerate(handle, start=1):
                raw = raw.removesuffix(b"\n")
                if lineno == 1:
                    raw = raw.removeprefix(b"\xef\xbb\xbf")  # a BOM is accepted
                line, ok = decode_line(path, lineno, raw, problems)
                text_seen = text_seen or bool(line.strip())
                if not ok or (row := jsonl_row(path, lineno, line, problems)) is None:
                    continue
                item = validate_row(path, lineno, row[0], problems)
                if item is None:
                    continue
                if item.id in first_line:
                    problems.append(Problem(str(path), lineno, "id", f"duplicate id '{item.id}' "
                                            f"(first on line {first_line[item.id]})"))
                    continue
                first_line[item.id] = lineno
                if not problems:
                    yield item
        if not text_seen:
            raise InputError([Problem(str(path), None, None, "the file is empty")],
                             fix="check the file path")
        if not first_line and not problems:
            problems.append(Problem(str(path), None, None, "no rows found"))
        if problems:
            problems.sort(key=lambda p: (p.line or 0))
            raise InputError(problems)
        self.rows = len(first_line)


class LimitedItems:
    """The first ``limit`` items of a re-readable source (``run --limit N`` on a stream)."""

    def __init__(self, source: DatasetStream, limit: int) -> None:
        self.source = source
        self.limit = limit

    def __iter__(self) -> Iterator[BenchmarkItem]:
        return islice(iter(self.source), self.limit)


def stream_dataset(path: str | Path) -> DatasetStream:
    """The dataset at ``path``, validated in one streaming pass (nothing kept).

    Raises:
        InputError: every defect of the file, each with file, line and field.
    """
    stream = DatasetStream(path)
    stream.validate()
    return stream
