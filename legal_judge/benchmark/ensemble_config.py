"""The ensemble configuration file (TOML), validated with file and field in every error.

.. code-block:: toml

    name = "default"
    rubric_set = "legal_judge_set"
    quorum = 2
    other_family_min_share = 0.6
    concurrency = 16
    cost_limit_usd = 20.0

    [[judges]]
    spec = "openai:gpt-4o"
    multilingual = true

    [[judges]]
    spec = "gemini:gemini-2.5-pro"
    multilingual = true

    [[judges]]
    spec = "mistral:mistral-large-latest"
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal, overload

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, ValidationError, model_validator

from legal_judge.assets.rubrics import DEFAULT_RUBRIC_SET
from legal_judge.errors import ConfigError, InputError, Problem
from legal_judge.files import read_toml, toml_line
from legal_judge.judge.config import JudgeConfig
from legal_judge.store import canonical_json

__all__ = ["ENSEMBLE", "EnsembleConfig", "bundled_config", "bundled_names", "ensemble_judge_id",
           "load_ensemble_config", "resolve_ensemble_path"]

log = logging.getLogger(__name__)

#: The ensemble's name where it stands beside its judges (a calibration's judges, a run's ids).
ENSEMBLE = "ensemble"


class EnsembleConfig(BaseModel):
    """An ensemble: judges plus the rules that combine them."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = "ensemble"
    judges: list[JudgeConfig] = Field(min_length=1)
    rubric_set: str = DEFAULT_RUBRIC_SET
    quorum: int = Field(default=2, ge=1)
    other_family_min_share: float = Field(default=0.6, gt=0, lt=1)
    allow_same_family_only: bool = False
    system_under_test: str | None = None
    family_overrides: dict[str, str] = Field(default_factory=dict)
    concurrency: int = Field(default=16, ge=1, le=1024)
    requests_per_minute: float | None = Field(default=None, gt=0)
    cost_limit_usd: float | None = Field(default=None, gt=0)
    disagreement_threshold: float = Field(default=2.0, gt=0)
    run_checks: bool = True
    citation_lookup: bool = False
    high_stakes: bool = False
    # Where the config was read from (a file or a bundled name), for error messages; not stored.
    _source: str | None = PrivateAttr(default=None)

    @property
    def source(self) -> str:
        """The file (or bundled name) the config was read from, else its name."""
        return self._source or f"the ensemble '{self.name}'"

    @model_validator(mode="after")
    def _names_unique(self) -> EnsembleConfig:
        labels = [j.label for j in self.judges]
        dupes = sorted({x for x in labels if labels.count(x) > 1})
        if dupes:
            raise ValueError(f"judge names must be unique; give each a 'name' ({', '.join(dupes)})")
        if self.quorum > len(self.judges):
            raise ValueError(f"quorum {self.quorum} exceeds the number of judges ({len(self.judges)})")
        return self


def bundled_config(name: str) -> Path:
    """Path of a config shipped with the package (``default``, ``demo``)."""
    return Path(__file__).parent.parent / "data" / f"ensemble.{name}.toml"


def bundled_names() -> list[str]:
    """The names of the bundled ensembles, sorted."""
    folder = Path(__file__).parent.parent / "data"
    return sorted(p.name.removeprefix("ensemble.").removesuffix(".toml")
                  for p in folder.glob("ensemble.*.toml"))


_warned_shadowed: set[str] = set()


def _is_path(ref: str) -> bool:
    return "/" in ref or "\\" in ref or ref.lower().endswith(".toml")


@overload
def resolve_ensemble_path(ref: str | Path, *, missing_ok: Literal[False] = False) -> Path: ...


@overload
def resolve_ensemble_path(ref: str | Path, *, missing_ok: bool) -> Path | None: ...


def resolve_ensemble_path(ref: str | Path, *, missing_ok: bool = False) -> Path | None:
    """The file an ``--ensemble`` argument names (the one rule every ``--ensemble``/``--judge`` follows).

    A bundled name (``default``, ``demo``) always means the bundled file, even when a file of that
    name sits in the working directory (an empty ``demo`` there must not break ``legal-judge
    demo``); an argument is a path when it contains a ``/`` or ends in ``.toml`` (``./demo`` reads
    the local file). Any other bare name is read as a file.

    Args:
        ref: The argument as the user wrote it.
        missing_ok: Return None, instead of raising, when ``ref`` names neither a bundled
            ensemble nor anything on disk and does not end in ``.toml``: for options that also
            take a judge spec (``audit run --judge``, ``debias --judge``; a spec may hold a
            ``/``, ``together:meta-llama/Llama-3``), which then read it as one.

    Raises:
        ConfigError: ``ensemble-not-found`` when no such file exists, with the bundled names.
    """
    text = str(ref)
    bundled = bundled_config(text)
    if not _is_path(text) and text in bundled_names() and bundled.is_file():
        if Path(text).exists() and text not in _warned_shadowed:
            # Once per process: one command may resolve its argument in several steps.
            _warned_shadowed.add(text)
            log.warning("'%s' is the bundled ensemble; the file %s in this folder is not read "
                        "(write ./%s to use it)", text, text, text)
        return bundled
    path = Path(text)
    if path.is_file():
        return path
    if missing_ok and not text.lower().endswith(".toml") and not path.exists():
        return None
    names = ", ".join(bundled_names())
    if path.is_dir():
        raise ConfigError(f"ensemble {text} is a folder, not a TOML file",
                          code="ensemble-not-found",
                          fix=f"name the .toml file inside it, or a bundled ensemble: {names}")
    what = f"ensemble file {text} does not exist" if _is_path(text) else \
        f"no ensemble '{text}': no bundled ensemble and no file of that name"
    raise ConfigError(what, code="ensemble-not-found",
                      fix=f"check the path (relative to {Path.cwd()}), or use a bundled ensemble: "
                          f"{names}")


def load_ensemble_config(path: str | Path) -> EnsembleConfig:
    """Read and validate an ensemble TOML file (``demo``/``default`` name the bundled ones).

    Raises:
        ConfigError: no such file (``ensemble-not-found``).
        InputError: unreadable file, TOML syntax (with line), unknown keys, wrong types.
    """
    source = str(path)
    path = resolve_ensemble_path(path)
    try:
        data, text, _ = read_toml(path)
    except RecursionError:
        raise InputError([Problem(str(path), None, None, "invalid TOML: nested too deeply")]) from None
    try:
        config = EnsembleConfig.model_validate(data)
    except ValidationError as exc:
        # Each problem with its line (the contract: file, line, field, fix); a check of the
        # whole file (quorum against the judges) has no field.
        problems = []
        for e in exc.errors():
            loc = ".".join(str(p) for p in e["loc"]) or None
            problems.append(Problem(str(path), toml_line(text, loc), loc,
                                    "unknown key" if e["type"] == "extra_forbidden"
                                    else str(e["msg"]).removeprefix("Value error, ")))
        raise InputError(problems) from None
    _refuse_pairwise_only(config, path)
    config._source = source if path == bundled_config(source) else str(path)
    return config


#: What a pointwise judge can use against position bias instead of ``swap``.
POINTWISE_POSITION_FIX = ('debias = { mode = "aware", bias = "position" } (a bias-aware warning) '
                          'or mode = "aware+self", then audit again')


def _refuse_pairwise_only(config: EnsembleConfig, path: Path) -> None:
    """An ensemble scores each answer alone (pointwise): a pairwise-only setting would do nothing.

    Raises:
        InputError: a judge with ``debias = { mode = "swap" }``.
    """
    problems = [Problem(str(path), None, f"judges.{n}.debias.mode",
                        f"judge {j.label}: swap changes pairwise judging only; for position bias "
                        f"in pointwise scoring use {POINTWISE_POSITION_FIX}")
                for n, j in enumerate(config.judges) if j.debias.mode == "swap"]
    if problems:
        raise InputError(problems, fix="an ensemble judges each answer alone against the rubrics: "
                                       "there is no order to swap (swap acts in `debias compare`)")


def ensemble_judge_id(run_config: Mapping[str, Any],
                      judge_ids: Mapping[str, str | None] | None = None, *,
                      fresh: bool = False) -> str:
    """The ensemble's identity (DESIGN: judge identity), as runs record it and calibrations,
    corrections and estimates key it: the one function both sides call.

    Args:
        run_config: A run's stored config (``ensemble``: its judges with their weights and the
            policy; ``judge_ids``: each judge's id by name; ``judge_id``: the id recorded), or
            the config of a run being created.
        judge_ids: The judges' ids when the config names none (as seen in a run's verdicts).
        fresh: A run being created: its id is computed from its judges' ids and weights and the
            weighting policy, whatever ``run_config`` records.

    Returns:
        The id a run recorded (``judge_id``, or ``ensemble_judge_id``), which every run stored
        since the runner recorded one has; for a new run, ``ens-`` + short sha256 of its judges'
        ``(judge id, weight)`` and policy; for a run stored without a recorded id (and judges
        known only by their ids), ``ens-`` + short sha256 of the sorted ``name=judge_id`` of its
        judges, the key its calibrations were stored under. Stored ids never change.
    """
    if not fresh:
        for key in ("judge_id", "ensemble_judge_id"):
            if isinstance(run_config.get(key), str):
                return str(run_config[key])
    recorded = run_config.get("judge_ids")
    members = recorded if isinstance(recorded, Mapping) else (judge_ids or {})
    if not fresh:
        # Before a run recorded its id, its calibrations keyed it by its judges' ids alone.
        named = sorted(f"{k}={v}" for k, v in members.items() if k != ENSEMBLE)
        return "ens-" + hashlib.sha256(canonical_json(named).encode()).hexdigest()[:12]
    ensemble = run_config["ensemble"]
    weights = {j.get("name") or j["spec"]: j["weight"] for j in ensemble["judges"]}
    payload = {"judges": sorted((members[label], weights[label]) for label in weights),
               "policy": {"quorum": ensemble["quorum"],
                          "other_family_min_share": ensemble["other_family_min_share"],
                          "allow_same_family_only": ensemble["allow_same_family_only"],
                          "rubric_set": ensemble["rubric_set"]}}
    return "ens-" + hashlib.sha256(canonical_json(payload).encode()).hexdigest()[:12]
