"""The audit's catalogues of named entries (bias dimensions, discrimination probes), read one way.

A catalogue is a YAML file with a list of entries, each naming a perturbation of a known set. The
built-in file ships with the package; a user's file of the same shape adds entries, and an entry of
the same name replaces the built-in one. An audit selects entries by name; ``audit dimensions``
lists them with where each comes from. Both catalogues follow these rules through
:class:`Catalogue`, so a user's file is read, checked and merged the same way for either.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any, Generic, Protocol, TypeVar

import yaml
from pydantic import BaseModel, ValidationError

from legal_judge.assets.catalogue import parse_yaml
from legal_judge.errors import ConfigError, InputError, Problem

__all__ = ["Catalogue", "read_catalogue"]


class _Entry(Protocol):
    @property
    def name(self) -> str: ...

    @property
    def perturbation(self) -> str: ...


E = TypeVar("E", bound=_Entry)
_M = TypeVar("_M", bound=BaseModel)


def read_catalogue(path: Path, model: type[_M]) -> _M:
    """A catalogue file validated against ``model``.

    Raises:
        InputError: unreadable file, invalid YAML (with its line), or a field the model refuses.
    """
    try:
        data = parse_yaml(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError([Problem(str(path), None, None, f"cannot read: {exc}")]) from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        raise InputError([Problem(str(path), mark.line + 1 if mark else None, None,
                                  f"invalid YAML: {exc}")]) from None
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        raise InputError([Problem(str(path), None, ".".join(str(p) for p in e["loc"]) or None,
                                  e["msg"]) for e in exc.errors()]) from None


@dataclass(frozen=True, kw_only=True, eq=False)  # eq=False: hashed by identity, for _read_once
class Catalogue(Generic[E]):
    """One kind of audit entry: its built-in file, the shape of a user's file, and how an audit
    names the entries it runs.

    Attributes:
        kind: The entry's name in messages (``dimension``, ``probe``).
        builtin_path: The built-in catalogue file.
        file_model: The model of a whole catalogue file.
        field: The file's list of entries (``dimensions``, ``probes``).
        perturbations: The perturbations an entry may name.
        option: The CLI option that adds a user's file (named in the fix of an unknown name).
        code: The error code of an unknown name.
    """

    kind: str
    builtin_path: Path
    file_model: type[BaseModel]
    field: str
    perturbations: Collection[str]
    option: str
    code: str

    def builtin(self) -> dict[str, E]:
        """The built-in entries by name, in file order (read once per process)."""
        return _read_once(self)

    def load(self, path: str | Path) -> dict[str, E]:
        """A user's entries by name, in file order (the file has the built-in file's shape).

        Raises:
            InputError: unreadable file, invalid YAML, unknown fields or perturbations.
        """
        path = Path(path)
        entries: list[E] = getattr(read_catalogue(path, self.file_model), self.field)
        known = self.perturbations
        problems = [Problem(str(path), None, f"{self.field}.{e.name}.perturbation",
                            f"unknown perturbation '{e.perturbation}' (use one of "
                            f"{', '.join(sorted(known))})")
                    for e in entries if e.perturbation not in known]
        if problems:
            raise InputError(problems)
        return {e.name: e for e in entries}

    def with_file(self, path: str | Path | None) -> tuple[dict[str, E], dict[str, str]]:
        """The built-in entries, then a user file's, and where each comes from (``built-in`` or
        the file's path).

        Raises:
            InputError: as :meth:`load`.
        """
        entries = dict(self.builtin())
        source = dict.fromkeys(entries, "built-in")
        if path is not None:
            extra = self.load(path)
            entries.update(extra)
            source.update(dict.fromkeys(extra, str(path)))
        return entries, source

    def select(self, names: list[str] | None, *, extra_file: str | Path | None = None,
               fix_note: str = "") -> list[E]:
        """The entries named, in the order given and each once (all when ``names`` is None).

        Args:
            names: Entry names, built-in or from ``extra_file``; None for every entry.
            extra_file: A user's catalogue file.
            fix_note: Added to the list of names in an unknown name's fix (``" (or none)"``).

        Raises:
            ConfigError: a name that is neither built in nor in the user file.
            InputError: as :meth:`load`.
        """
        available, _ = self.with_file(extra_file)
        if names is None:
            return list(available.values())
        unknown = [n for n in names if n not in available]
        if unknown:
            raise ConfigError(f"unknown {self.kind}(s): {', '.join(unknown)}", code=self.code,
                              fix=f"use some of: {', '.join(available)}{fix_note}; or add them "
                                  f"with {self.option}")
        return [available[n] for n in dict.fromkeys(names)]


@cache
def _read_once(catalogue: Catalogue[Any]) -> dict[str, Any]:
    return catalogue.load(catalogue.builtin_path)
