"""The gate policy: every threshold a gate uses, in one reviewed file, printed by every gate.

DESIGN.md, "Decisions and the burden of proof": a gate answers "is there positive evidence that this
may ship?", and the thresholds behind that answer live in one place. The bundled default
(``legal_judge/data/policy.default.toml``) is overlaid by a team's file: ``--policy FILE``, else
``legal-judge.policy.toml`` in the working directory. A key the file leaves out keeps the default.

A command-line flag may **tighten** a setting (a lower significance, a smaller margin); a flag that
would loosen one is refused (exit 2) with the two ways to do it on purpose: a policy file (reviewed
like code) or ``--override KEY=VALUE``. An override is recorded in :class:`PolicyInForce` and shown
wherever the decision appears (terminal, JSON, JUnit properties, step summary, HTML). Every gate
prints :meth:`PolicyInForce.line`: the file, its sha256 and any overrides.
"""

from __future__ import annotations

import hashlib
import tomllib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from legal_judge.errors import ConfigError, InputError, Problem
from legal_judge.files import read_toml, toml_line
from legal_judge.policy.sections import (
    CORRECTIONS,
    DIRECTION,
    SEVERITIES,
    CalibrationPolicy,
    CertificationPolicy,
    Policy,
    ReleasePolicy,
    RunPolicy,
)

__all__ = ["BUNDLED_POLICY", "POLICY_FILENAME", "Override", "PolicyInForce", "load_policy"]

BUNDLED_POLICY = Path(__file__).parents[1] / "data" / "policy.default.toml"
#: The file a project keeps in the folder it runs legal-judge from.
POLICY_FILENAME = "legal-judge.policy.toml"
def _covers(a: Any, b: Any) -> bool:
    """Whether list setting ``a`` covers ``b`` ("all" covers every list)."""
    if a == "all":
        return True
    return b != "all" and set(b) <= set(a)


def _loosens(key: str, policy_value: Any, value: Any) -> bool:
    """Whether setting ``key`` from ``policy_value`` to ``value`` weakens the gate."""
    how = DIRECTION[key]
    if how == "lower":
        return bool(value > policy_value)
    if how == "higher":
        return bool(value < policy_value)
    if how == "false":
        return bool(value) and not policy_value
    if how == "fail-first":
        return value == "pass" and policy_value == "fail"
    if how == "severity":
        return SEVERITIES.index(value) > SEVERITIES.index(policy_value)
    if how == "correction":
        return CORRECTIONS.index(value) > CORRECTIONS.index(policy_value)
    if how == "superset":
        return not _covers(value, policy_value)
    return False


@dataclass(frozen=True)
class Override:
    """A setting changed from the policy file: by a tightening flag or an explicit override."""

    key: str
    value: Any
    policy_value: Any
    source: str  # "flag" (tightens only) or "override" (may loosen; always printed)

    @property
    def loosens(self) -> bool:
        """True when the change weakens the gate."""
        return _loosens(self.key, self.policy_value, self.value)

    def describe(self) -> str:
        """``significance=0.5 (policy 0.05)``."""
        return f"{self.key}={_show(self.value)} (policy {_show(self.policy_value)})"


def _show(value: Any) -> str:
    if isinstance(value, tuple | list):
        return "[" + ", ".join(str(v) for v in value) + "]"
    return str(value).lower() if isinstance(value, bool) else str(value)


@dataclass(frozen=True)
class PolicyInForce:
    """The policy a gate applied: the settings, where they came from, and what was changed."""

    policy: Policy
    path: str
    sha256: str
    bundled: bool
    overrides: tuple[Override, ...] = field(default_factory=tuple)

    @property
    def release(self) -> ReleasePolicy:
        """``[release]``."""
        return self.policy.release

    @property
    def certification(self) -> CertificationPolicy:
        """``[certification]``."""
        return self.policy.certification

    @property
    def run(self) -> RunPolicy:
        """``[run]``."""
        return self.policy.run

    @property
    def calibration(self) -> CalibrationPolicy:
        """``[calibration]``."""
        return self.policy.calibration

    def explicit(self) -> list[Override]:
        """The ``--override`` settings (each printed as "policy override: ...")."""
        return [o for o in self.overrides if o.source == "override"]

    def line(self, section: str | None = None) -> str:
        """One line naming the policy: ``policy: FILE (sha256 1a2b3c4d5e6f) [release]``."""
        where = "bundled default" if self.bundled else self.path
        text = f"policy: {where} (sha256 {self.sha256[:12]})"
        if section:
            text += f" [{section}]"
        tightened = [o.describe() for o in self.overrides if o.source == "flag"]
        if tightened:
            text += "; tightened by flags: " + ", ".join(tightened)
        return text

    def override_lines(self) -> list[str]:
        """``policy override: significance=0.5 (policy 0.05)``, one per explicit override."""
        return [f"policy override: {o.describe()}" for o in self.explicit()]

    def as_dict(self, section: str | None = None) -> dict[str, Any]:
        """The policy as JSON-ready data (the settings of one section, or all)."""
        settings = self.policy.model_dump(mode="json")
        return {"path": self.path, "sha256": self.sha256, "bundled": self.bundled,
                "section": section,
                "settings": settings[section] if section else settings,
                "overrides": [{"key": o.key, "value": o.value, "policy_value": o.policy_value,
                               "source": o.source, "loosens": o.loosens}
                              for o in self.overrides]}

    def properties(self, section: str | None = None) -> list[tuple[str, str]]:
        """The policy as ``(name, value)`` facts for JUnit properties and step summaries."""
        facts = [("policy", f"{'bundled default' if self.bundled else self.path} "
                            f"(sha256 {self.sha256[:12]})")]
        if section:
            for key, value in getattr(self.policy, section).model_dump().items():
                facts.append((f"policy.{section}.{key}", _show(value)))
        facts += [(f"policy override {o.key}", o.describe()) for o in self.explicit()]
        return facts

    def with_settings(self, flags: Mapping[str, Any] | None = None,
                      overrides: Iterable[str] = ()) -> PolicyInForce:
        """This policy with tightening ``flags`` and explicit ``overrides`` applied.

        Args:
            flags: ``{"section.key": value}`` from command-line flags the user gave (None values
                are ignored). A flag that would loosen the policy is refused.
            overrides: ``KEY=VALUE`` strings (``--override``); ``KEY`` is ``section.key`` or a key
                name found in one section only.

        Raises:
            ConfigError: a flag loosens the policy, an unknown key, or an invalid value (exit 2).
        """
        changes: dict[str, tuple[Any, str]] = {}
        for text in overrides:
            key, value = _parse_override(text)
            changes[key] = (value, "override")
        flagged = [k for k, v in (flags or {}).items() if v is not None and k not in changes]
        for key in flagged:
            changes[key] = ((flags or {})[key], "flag")
        if not changes:
            return self
        data = self.policy.model_dump()
        for key, (value, _) in changes.items():
            section, name = key.split(".", 1)
            data[section][name] = value
        # Checked before the direction: a value out of range ("--max-false-pass 2") is named as
        # such, not answered with an override that would be refused in turn.
        policy = _validate(data, source="--override / flags", sources={
            key: _flag_name(key) if how == "flag" else f"--override {_override_key(key)}"
            for key, (_, how) in changes.items()})
        for key in flagged:
            current, value = self._get(key), (flags or {})[key]
            if _loosens(key, current, _normalise(value)):
                raise ConfigError(
                    f"{_flag_name(key)} {_show(value)} loosens the policy ({key} is "
                    f"{_show(current)} in {self.line()})",
                    code="policy-loosened",
                    fix=f"a flag may only tighten the policy; to loosen it on purpose pass "
                        f"--override {_override_key(key)}={_show(value)} (printed with the "
                        f"decision) or set it in a policy file ({POLICY_FILENAME}, reviewed "
                        "like code)")
        recorded = tuple(Override(key, _normalise(getattr(getattr(policy, key.split(".")[0]),
                                                          key.split(".")[1])),
                                  self._get(key), how)
                         for key, (_, how) in changes.items()
                         if self._get(key) != _normalise(
                             getattr(getattr(policy, key.split(".")[0]), key.split(".")[1])))
        return PolicyInForce(policy, self.path, self.sha256, self.bundled,
                             self.overrides + recorded)

    def _get(self, key: str) -> Any:
        section, name = key.split(".", 1)
        return getattr(getattr(self.policy, section), name)


def _normalise(value: Any) -> Any:
    return tuple(value) if isinstance(value, list) else value


def _flag_name(key: str) -> str:
    return "--" + key.split(".", 1)[1].replace("_", "-")


def _resolve_key(key: str) -> str:
    if key in DIRECTION:
        return key
    found = [k for k in DIRECTION if k.split(".", 1)[1] == key]
    if len(found) == 1:
        return found[0]
    if found:  # min_kappa: [calibration] and [validation] both have one
        raise ConfigError(f"--override {key}: ambiguous key, set in " + " and ".join(found),
                          code="policy-invalid", fix=f"name its section: --override {found[0]}=...")
    raise ConfigError(f"--override {key}: no such policy setting", code="policy-invalid",
                      fix=f"use one of: {', '.join(sorted(DIRECTION))}")


def _override_key(key: str) -> str:
    """The shortest name ``--override`` resolves to ``key``: the setting's own name, or with its
    section where another section has a setting of that name."""
    name = key.split(".", 1)[1]
    return name if sum(k.split(".", 1)[1] == name for k in DIRECTION) == 1 else key


def _parse_override(text: str) -> tuple[str, Any]:
    key, sep, raw = text.partition("=")
    if not sep or not key.strip():
        raise ConfigError(f"--override {text!r}: expected KEY=VALUE", code="policy-invalid",
                          fix="write e.g. --override significance=0.1")
    key = _resolve_key(key.strip())
    try:
        value = tomllib.loads(f"v = {raw.strip()}")["v"]
    except tomllib.TOMLDecodeError:
        value = raw.strip()  # a bare word: "pass", "medium"
        if DIRECTION[key] == "superset" and value != "all":  # a list as the flags write one
            value = [v.strip() for v in value.split(",") if v.strip()]
    return key, value


def _validate(data: Mapping[str, Any], *, source: str, text: str = "",
              sources: Mapping[str, str] | None = None) -> Policy:
    """The policy ``data`` describes; ``sources`` names the flag or override that set a key."""
    try:
        return Policy.model_validate(data)
    except ValidationError as exc:
        problems = []
        for e in exc.errors():
            loc = ".".join(str(p) for p in e["loc"] if not isinstance(p, int)) or None
            msg = "unknown key" if e["type"] == "extra_forbidden" else e["msg"]
            where = (sources or {}).get(loc or "", source)
            problems.append(Problem(where, toml_line(text, loc), loc, msg))
        what = ("give the flag or override a value in its range, or leave it out" if sources
                else "correct the policy")
        raise InputError(problems, fix=f"{what} (the defaults and their reasons: "
                                       f"{BUNDLED_POLICY.name}; `legal-judge policy show`)"
                         ) from None


def load_policy(path: str | Path | None = None, *, cwd: Path | None = None) -> PolicyInForce:
    """The policy in force: ``path``, else ``legal-judge.policy.toml`` in ``cwd``, else bundled.

    A file overlays the bundled default key by key; its sha256 names it in every decision.

    Raises:
        ConfigError: ``path`` does not exist.
        InputError: the file is unreadable, not TOML, has an unknown key or a wrong value (each
            problem with file, line and field).
    """
    defaults, _, bundled_raw = read_toml(BUNDLED_POLICY)
    if path is None:
        found = (cwd or Path.cwd()) / POLICY_FILENAME
        if not found.is_file():
            return PolicyInForce(_validate(defaults, source=str(BUNDLED_POLICY)),
                                 str(BUNDLED_POLICY), hashlib.sha256(bundled_raw).hexdigest(),
                                 bundled=True)
        path = found
    path = Path(path)
    if not path.is_file():
        raise ConfigError(f"policy file {path} does not exist", code="policy-not-found",
                          fix=f"name an existing file with --policy, or drop --policy to use "
                              f"{POLICY_FILENAME} in this folder (or the bundled default)")
    data, text, raw = read_toml(path)
    merged: dict[str, Any] = {k: dict(v) if isinstance(v, dict) else v
                              for k, v in defaults.items()}
    for section, values in data.items():
        if isinstance(values, dict) and isinstance(merged.get(section), dict):
            merged[section].update(values)
        else:
            merged[section] = values
    return PolicyInForce(_validate(merged, source=str(path), text=text), str(path),
                         hashlib.sha256(raw).hexdigest(), bundled=False)
