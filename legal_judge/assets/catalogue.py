"""The catalogue of versioned assets: where rubrics and templates are found, their versions and
hashes, and :class:`Assets`, the lookup every judge, audit and sync uses.

Rubrics live in ``rubrics/<name>.v<N>.yaml`` and templates in ``prompts/<name>.v<N>.j2`` at the top of the
repository; the wheel carries copies under ``legal_judge/_assets/``. A released version is never edited,
only superseded by ``v<N+1>``.

The search path: ``$LEGAL_JUDGE_ASSETS`` names one or more folders (separated by ``os.pathsep``, ``:``
on Linux and macOS), each holding ``rubrics/`` and/or ``prompts/``, searched before the bundled assets.
A team's folder therefore only holds its own files: a new rubric and a rubric set that uses it. The
same name and version found twice must be byte-identical (a full copy of the bundled tree is fine);
different content under a released name and version is refused. Every asset has a name, a version and the sha256 of its bytes; verdicts
record them so "the judge changed" is a fact, not a guess.

The file schemas are in :mod:`legal_judge.assets.rubrics`; templates and their sandbox in
:mod:`legal_judge.assets.templates`.
"""

from __future__ import annotations

import hashlib
import os
import re
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError

from legal_judge.assets.rubrics import DEFAULT_RUBRIC_SET, Rubric, RubricSet
from legal_judge.assets.templates import Template, syntax_problem
from legal_judge.errors import ConfigError, InputError, Problem

__all__ = ["Assets", "Bias", "asset_root", "asset_roots", "load_assets", "parse_yaml"]

_VERSIONED = re.compile(r"^(?P<name>[a-z][a-z0-9_]*)\.v(?P<version>\d+)\.(?P<ext>yaml|j2)$")


@dataclass(frozen=True)
class Bias:
    """A named bias with the description used in warnings."""

    name: str
    description: str


@dataclass
class Assets:
    """Every rubric, rubric set and template found, all versions, keyed by name then version."""

    root: Path
    rubrics: dict[str, dict[int, Rubric]] = field(default_factory=dict)
    rubric_sets: dict[str, dict[int, RubricSet]] = field(default_factory=dict)
    templates: dict[str, dict[int, Template]] = field(default_factory=dict)
    biases: dict[str, Bias] = field(default_factory=dict)

    def rubric(self, ref: str) -> Rubric:
        """A rubric by ``name`` (latest version) or ``name@N``."""
        return _pick(self.rubrics, ref, "rubric")

    def rubric_set(self, ref: str = DEFAULT_RUBRIC_SET) -> RubricSet:
        """A rubric set by ``name`` or ``name@N``."""
        return _pick(self.rubric_sets, ref, "rubric set")

    def template(self, ref: str) -> Template:
        """A template by ``name`` (latest version) or ``name@N``."""
        return _pick(self.templates, ref, "template")

    def bias(self, name: str) -> Bias:
        """A bias of the catalogue by name."""
        try:
            return self.biases[name]
        except KeyError:
            raise ConfigError(
                f"unknown bias '{name}'", code="bias-unknown",
                fix=f"use one of: {', '.join(sorted(self.biases))}",
            ) from None

    def active_rubrics(self, rubric_set: RubricSet, *, language: str | None = None) -> list[Rubric]:
        """The rubrics a judge scores for an answer in ``language``."""
        names = list(rubric_set.rubrics)
        for opt in rubric_set.optional_rubrics:
            if language and language in opt.when_language_in:
                names.append(opt.rubric)
        return [self.rubric(n) for n in names]

    def listing(self) -> list[dict[str, str]]:
        """One row per asset version: kind, name, version, sha256, path."""
        rows: list[dict[str, str]] = []
        tables: list[tuple[str, dict[str, dict[int, Any]]]] = [
            ("rubric", dict(self.rubrics)), ("rubric_set", dict(self.rubric_sets))]
        for kind, table in tables:
            for name, versions in sorted(table.items()):
                for v, asset in sorted(versions.items()):
                    rows.append({"kind": kind, "name": name, "version": str(v),
                                 "sha256": asset.sha256, "path": f"rubrics/{name}.v{v}.yaml"})
        for name, tversions in sorted(self.templates.items()):
            for v, t in sorted(tversions.items()):
                rows.append({"kind": "template", "name": name, "version": str(v),
                             "sha256": t.sha256, "path": t.path})
        return rows


def _pick(table: dict[str, dict[int, Any]], ref: str, what: str) -> Any:
    name, _, version = ref.partition("@")
    versions = table.get(name)
    if not versions:
        raise ConfigError(
            f"unknown {what} '{name}'", code=f"{what.replace(' ', '-')}-unknown",
            fix=f"use one of: {', '.join(sorted(table)) or '(none found)'}; `legal-judge prompts list` shows them",
        )
    if not version:
        return versions[max(versions)]
    if not version.isdigit() or int(version) not in versions:
        raise ConfigError(
            f"{what} '{name}' has no version {version}", code=f"{what.replace(' ', '-')}-version",
            fix=f"available versions: {', '.join(str(v) for v in sorted(versions))}",
        )
    return versions[int(version)]


def asset_root() -> Path:
    """Where the bundled ``rubrics/`` and ``prompts/`` are: the wheel copy, or the checkout."""
    packaged = Path(__file__).parent.parent / "_assets"  # legal_judge/_assets in the wheel
    if (packaged / "rubrics").is_dir():
        return packaged
    return Path(__file__).resolve().parents[2]  # the checkout: legal_judge/assets/ is two below


def asset_roots() -> list[Path]:
    """The search path: the folders of ``$LEGAL_JUDGE_ASSETS`` in order, then the bundled assets.

    Raises:
        ConfigError: a folder of ``$LEGAL_JUDGE_ASSETS`` does not exist or holds neither
            ``rubrics/`` nor ``prompts/``.
    """
    roots = []
    for part in (os.environ.get("LEGAL_JUDGE_ASSETS") or "").split(os.pathsep):
        if not part.strip():
            continue
        root = Path(part).expanduser()
        if not root.is_dir():
            raise ConfigError(f"LEGAL_JUDGE_ASSETS folder {root} does not exist",
                              code="assets-path", fix="create it, or fix the path in LEGAL_JUDGE_ASSETS")
        if not (root / "rubrics").is_dir() and not (root / "prompts").is_dir():
            raise ConfigError(f"LEGAL_JUDGE_ASSETS folder {root} has no rubrics/ or prompts/ folder",
                              code="assets-path",
                              fix=f"put your files in {root / 'rubrics'} (rubrics, rubric sets) or "
                                  f"{root / 'prompts'} (templates); point at the folder above them")
        roots.append(root.resolve())
    bundled = asset_root().resolve()
    return [*dict.fromkeys(r for r in roots if r != bundled), bundled]


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


# libyaml parses the bundled assets ten times faster than the pure-Python loader (about 0.1 s of
# every command's start); both build the same documents (a test compares them on every asset).
_FAST_LOADER: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def parse_yaml(text: str) -> Any:
    """A YAML document's data, as ``yaml.safe_load`` builds it.

    Raises:
        yaml.YAMLError: the pure-Python loader's error (its message and line, which libyaml's
            differ from), so a user reads the same problem whichever loader parsed.
    """
    try:
        return yaml.load(text, Loader=_FAST_LOADER)  # noqa: S506 (a safe loader)
    except yaml.YAMLError:
        return yaml.safe_load(text)  # raises the familiar error (or agrees, if libyaml alone failed)


def _read_yaml(path: Path) -> tuple[Any, bytes]:
    data = path.read_bytes()
    try:
        return parse_yaml(data.decode("utf-8")), data
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = mark.line + 1 if mark is not None else None
        raise InputError([Problem(str(path), line, None, f"invalid YAML: {exc}")]) from None
    except UnicodeDecodeError as exc:
        raise InputError([Problem(str(path), None, None, f"not UTF-8: {exc}")]) from None
    except RecursionError:
        raise InputError([Problem(str(path), None, None, "invalid YAML: nested too deeply")]) from None


def _validation_problems(path: Path, exc: ValidationError) -> list[Problem]:
    return [
        Problem(str(path), None, ".".join(str(p) for p in err["loc"]) or None, err["msg"])
        for err in exc.errors()
    ]


def _load_versioned(path: Path) -> tuple[str, int] | None:
    match = _VERSIONED.match(path.name)
    if not match:
        return None
    return match["name"], int(match["version"])


def _load_rubric_file(path: Path, assets: Assets, problems: list[Problem]) -> None:
    parsed = _load_versioned(path)
    if parsed is None:
        problems.append(Problem(str(path), None, None, "file name must be <name>.v<N>.yaml"))
        return
    name, version = parsed
    data, raw = _read_yaml(path)
    if not isinstance(data, dict):
        problems.append(Problem(str(path), 1, None, "expected a mapping at the top level"))
        return
    if data.get("name") != name or data.get("version") != version:
        problems.append(Problem(str(path), None, "name/version",
                                f"must match the file name ({name}, {version})"))
        return
    model: type[Rubric] | type[RubricSet] = RubricSet if "rubrics" in data else Rubric
    try:
        obj = model.model_validate({**data, "sha256": _sha256(raw)})
    except ValidationError as exc:
        problems.extend(_validation_problems(path, exc))
        return
    table: dict[str, dict[int, Any]] = (
        assets.rubric_sets if isinstance(obj, RubricSet) else assets.rubrics
    )
    table.setdefault(name, {})[version] = obj


def _check_sets(assets: Assets, problems: list[Problem]) -> None:
    for name, versions in assets.rubric_sets.items():
        for v, rs in versions.items():
            refs = list(rs.rubrics) + [o.rubric for o in rs.optional_rubrics]
            refs += [c.rubric for c in rs.pass_fail.fail_if] + [o.set.rubric for o in rs.overrides]
            for ref in refs:
                if ref.partition("@")[0] not in assets.rubrics:
                    problems.append(Problem(f"rubrics/{name}.v{v}.yaml", None, "rubrics",
                                            f"unknown rubric '{ref}'"))


def _load_biases(path: Path, assets: Assets) -> None:
    data, _ = _read_yaml(path)
    for row in data.get("biases", []):
        assets.biases[row["name"]] = Bias(name=row["name"], description=row["description"])


def _load_root(root: Path, problems: list[Problem]) -> Assets:
    assets = Assets(root=root)
    for path in sorted((root / "rubrics").glob("*.yaml")):
        _load_rubric_file(path, assets, problems)
    for path in sorted((root / "prompts").glob("*.j2")):
        parsed = _load_versioned(path)
        if parsed is None:
            problems.append(Problem(str(path), None, None, "file name must be <name>.v<N>.j2"))
            continue
        raw = path.read_bytes()
        source = raw.decode("utf-8")
        problem = syntax_problem(source, str(path))
        if problem is not None:
            problems.append(problem)
            continue
        name, version = parsed
        assets.templates.setdefault(name, {})[version] = Template(
            name=name, version=version, source=source, sha256=_sha256(raw),
            path=f"prompts/{path.name}",
        )
    return assets


def _merge(into: dict[str, dict[int, Any]], table: dict[str, dict[int, Any]], root: Path,
           where: dict[tuple[str, int], Path], kind: str, problems: list[Problem]) -> None:
    """Add ``table`` (found under ``root``) to ``into``; the first root found wins, and a second
    copy must be byte-identical (a released version is never edited)."""
    ext = "j2" if kind == "prompts" else "yaml"
    for name, versions in table.items():
        for version, asset in versions.items():
            have = into.setdefault(name, {}).get(version)
            if have is None:
                into[name][version] = asset
                where[(name, version)] = root
            elif have.sha256 != asset.sha256:
                first = where[(name, version)] / kind / f"{name}.v{version}.{ext}"
                problems.append(Problem(
                    str(root / kind / f"{name}.v{version}.{ext}"), None, None,
                    f"differs from {first}: a released version is never edited; save your "
                    f"change as {name}.v{max(versions) + 1}.{ext} or under a new name"))


@lru_cache(maxsize=4)
def _load(roots: tuple[Path, ...]) -> Assets:
    assets = Assets(root=roots[0])
    problems: list[Problem] = []
    where: dict[tuple[str, int], Path] = {}
    for root in roots:
        found = _load_root(root, problems)
        _merge(assets.rubrics, dict(found.rubrics), root, where, "rubrics", problems)
        _merge(assets.rubric_sets, dict(found.rubric_sets), root, where, "rubrics", problems)
        _merge(assets.templates, dict(found.templates), root, where, "prompts", problems)
    biases = sorted((p for root in roots for p in (root / "prompts").glob("biases.v*.yaml")),
                    key=lambda p: (_load_versioned(p) or ("", 0))[1])
    if biases:
        _load_biases(biases[-1], assets)
    _check_sets(assets, problems)
    if problems:
        raise InputError(problems, fix="fix the rubric or template files listed above")
    if not assets.rubric_sets or not assets.templates:
        raise ConfigError(
            f"no rubrics or prompts found under {', '.join(map(str, roots))}",
            code="assets-missing",
            fix="reinstall legal-judge, or set LEGAL_JUDGE_ASSETS to a folder with rubrics/ and prompts/",
        )
    return assets


def load_assets(root: Path | None = None) -> Assets:
    """Load and validate every rubric and template (cached per search path).

    Args:
        root: Load only this folder; default: the search path (:func:`asset_roots`).

    Raises:
        InputError: a rubric or template file is invalid, or a released name and version is
            found twice with different content; every problem is listed.
        ConfigError: a folder of ``$LEGAL_JUDGE_ASSETS`` is missing or empty.
    """
    roots = [root] if root is not None else asset_roots()
    return _load(tuple(r.resolve() for r in roots))
