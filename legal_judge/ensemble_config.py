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

import tomllib
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from legal_judge.errors import InputError, Problem
from legal_judge.judge import JudgeConfig

__all__ = ["EnsembleConfig", "bundled_config", "load_ensemble_config"]


class EnsembleConfig(BaseModel):
    """An ensemble: judges plus the rules that combine them."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = "ensemble"
    judges: list[JudgeConfig] = Field(min_length=1)
    rubric_set: str = "legal_judge_set"
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
    return Path(__file__).parent / "data" / f"ensemble.{name}.toml"


def load_ensemble_config(path: str | Path) -> EnsembleConfig:
    """Read and validate an ensemble TOML file (``demo``/``default`` name the bundled ones).

    Raises:
        InputError: unreadable file, TOML syntax (with line), unknown keys, wrong types.
    """
    path = Path(path)
    if not path.exists() and bundled_config(str(path)).exists():
        path = bundled_config(str(path))
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError([Problem(str(path), None, None, f"cannot read: {exc}")]) from None
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        line = getattr(exc, "lineno", None)
        raise InputError([Problem(str(path), line, None, f"invalid TOML: {exc}")]) from None
    except RecursionError:
        raise InputError([Problem(str(path), None, None, "invalid TOML: nested too deeply")]) from None
    try:
        return EnsembleConfig.model_validate(data)
    except ValidationError as exc:
        problems = [Problem(str(path), None, ".".join(str(p) for p in e["loc"]) or None,
                            "unknown key" if e["type"] == "extra_forbidden" else e["msg"])
                    for e in exc.errors()]
        raise InputError(problems) from None
