"""``legal-judge doctor``: the setup checks a user would otherwise do by hand, each with its fix.

Checks: the Python and package versions, which provider keys are set (names only, never values),
the store (``PRAGMA integrity_check`` and the schema version), an ensemble config (validity, then
:func:`legal_judge.benchmark.ensemble_check.check_ensemble`, the validation ``run`` uses, so doctor passes
exactly what run accepts; families and same-family weighting) and, when ``LANGFUSE_*`` is set,
Langfuse authentication and reachability (one request with a short timeout). A missing key for a
judge of the chosen ensemble is a problem; a key for a provider the ensemble does not use is info.
With ``ping`` each judge's endpoint gets one 1-token request (:mod:`legal_judge.providers.ping`);
without it the result says that reachability was not checked.
"""

from __future__ import annotations

import base64
import os
import sys
from dataclasses import dataclass, field
from importlib import metadata
from typing import Any, Literal

import httpx

from legal_judge.errors import ConfigError, LegalJudgeError

__all__ = ["KEY_ENV", "Check", "DoctorResult", "run_doctor"]

Status = Literal["ok", "info", "problem"]

# Provider prefix -> the environment variable its key is read from (providers/base.py's table).
KEY_ENV: dict[str, str] = {
    "openai": "OPENAI_API_KEY", "anthropic": "ANTHROPIC_API_KEY", "gemini": "GEMINI_API_KEY",
    "mistral": "MISTRAL_API_KEY", "together": "TOGETHER_API_KEY", "groq": "GROQ_API_KEY",
}
_REQUIRED = ("pydantic", "click", "rich", "jinja2", "numpy", "scipy", "matplotlib", "httpx",
             "langfuse", "openai", "anthropic", "eyecite")
_OPTIONAL = (("llama_cpp", "llama-cpp-python", "local"),)


@dataclass(frozen=True)
class Check:
    """One finding: ``problem`` findings carry the exact fix."""

    name: str
    status: Status
    detail: str
    fix: str | None = None


@dataclass
class DoctorResult:
    """Every check, in the order they ran."""

    checks: list[Check] = field(default_factory=list)

    @property
    def problems(self) -> list[Check]:
        """The checks that failed."""
        return [c for c in self.checks if c.status == "problem"]

    def as_dict(self, *, pinged: bool) -> dict[str, Any]:
        """``doctor --json``: every check (name, status, detail, fix) and whether all passed."""
        return {"passed": not self.problems, "problems": len(self.problems), "pinged": pinged,
                "checks": [{"name": c.name, "status": c.status, "detail": c.detail, "fix": c.fix}
                           for c in self.checks]}


def run_doctor(*, ensemble: str = "default", timeout_s: float = 5.0,
               ping: bool = False) -> DoctorResult:
    """Run every check.

    Args:
        ensemble: An ensemble TOML path or a bundled name (``default``, ``demo``).
        timeout_s: Seconds to wait for Langfuse, and for each judge with ``ping``.
        ping: Send one 1-token request per judge (:mod:`legal_judge.providers.ping`); without
            it the result says that reachability was not checked.

    Returns:
        The findings; ``result.problems`` is empty when the setup is good.
    """
    result = DoctorResult()
    result.checks += _versions()
    keys = _KeyUse()
    result.checks += _ensemble_checks(ensemble, keys)
    result.checks += _reachability(ensemble, timeout_s) if ping else [_NOT_PINGED]
    result.checks += _keys(keys)
    result.checks += _store()
    result.checks += _langfuse(timeout_s)
    return result


@dataclass
class _KeyUse:
    """Which judges of the ensemble read which key variable, and which of those are missing."""

    used: dict[str, list[str]] = field(default_factory=dict)
    missing: dict[str, list[str]] = field(default_factory=dict)


def _versions() -> list[Check]:
    from legal_judge import __version__

    out = [Check("python", "ok" if sys.version_info >= (3, 11) else "problem",
                 sys.version.split()[0],
                 None if sys.version_info >= (3, 11) else "install Python 3.11 or newer"),
           Check("legal-judge", "ok", __version__)]
    for dist in _REQUIRED:
        try:
            out.append(Check(dist, "ok", metadata.version(dist)))
        except metadata.PackageNotFoundError:
            out.append(Check(dist, "problem", "not installed", f"pip install -U {dist} "
                             "(or reinstall: pip install -e .)"))
    for module, dist, extra in _OPTIONAL:
        try:
            out.append(Check(dist, "ok", metadata.version(dist)))
        except metadata.PackageNotFoundError:
            out.append(Check(dist, "info", f"not installed (optional: local judges need "
                             f"pip install 'legal-judge[{extra}]'; module {module})"))
    return out


def _keys(keys: _KeyUse) -> list[Check]:
    out = []
    for env in [*KEY_ENV.values(), *sorted(set(keys.used) - set(KEY_ENV.values()))]:
        present = bool(os.environ.get(env, "").strip())
        users = keys.used.get(env)
        if env in keys.missing:
            out.append(Check(f"key {env}", "problem",
                             f"not set; needed by {', '.join(keys.missing[env])}",
                             f"export {env}=... (keys are read from the environment only), or "
                             "choose an ensemble without this provider"))
        elif users and present:
            out.append(Check(f"key {env}", "ok", f"set (used by {', '.join(users)})"))
        elif users:
            out.append(Check(f"key {env}", "info", f"not set (optional for {', '.join(users)})"))
        else:
            out.append(Check(f"key {env}", "info",
                             "set (not used by this ensemble)" if present else
                             "not set (not used by this ensemble)"))
    return out


def _store() -> list[Check]:
    """Where the store setting came from, the store's integrity (``PRAGMA integrity_check``) and
    schema; a damaged store, or a project file that cannot be used, is a problem."""
    from legal_judge.config import store_setting
    from legal_judge.store import MIGRATIONS, Store, damaged_store_fix

    try:
        setting = store_setting()
        store = Store(setting.target)
    except LegalJudgeError as exc:
        # Opening quick-checks the file: a damaged, full, locked or newer store is reported here.
        return [Check("store", "problem", exc.message, exc.fix)]
    try:
        found = store.integrity_problems()
        version = store.schema_version
    except LegalJudgeError as exc:
        return [Check("store", "problem", exc.message, exc.fix)]
    finally:
        store.close()
    out = [Check("store", "ok" if not found else "problem",
                 f"{store.path} (integrity_check: {'; '.join(found) if found else 'ok'}; "
                 f"from {setting.origin})",
                 damaged_store_fix(store.path) if found else None)]
    latest = len(MIGRATIONS)
    out.append(Check("store schema", "ok" if version == latest else "problem",
                     f"version {version} (this legal-judge: {latest})",
                     None if version == latest else "open the store once with this version "
                     "(migrations apply on open), e.g. legal-judge runs list"))
    return out


def _ensemble_checks(ref: str, keys: _KeyUse) -> list[Check]:
    """The ensemble through the validation ``run`` uses; fills ``keys`` with the keys it reads."""
    from legal_judge.benchmark.ensemble import (
        EnsemblePolicy,
        JudgeSlot,
        check_policy,
        compute_weights,
    )
    from legal_judge.benchmark.ensemble_check import check_ensemble
    from legal_judge.benchmark.ensemble_config import load_ensemble_config
    from legal_judge.providers.families import family_of

    try:
        config = load_ensemble_config(ref)
    except LegalJudgeError as exc:
        return [Check(f"ensemble {ref}", "problem", exc.message,
                      exc.fix or "fix the file, then run legal-judge doctor again")]
    found = check_ensemble(config)
    _close_providers(found.judges)
    keys.used = found.keys_used
    out = []
    for problem in found.problems:
        if problem.code == "missing-key" and problem.env_var:
            keys.missing.setdefault(problem.env_var, []).append(problem.judge or config.name)
        else:
            out.append(Check(problem.where, "problem", f"{config.source}: {problem.message}",
                             problem.fix))
    slots = [JudgeSlot(jc.label, found.families[jc.label], jc.weight) for jc in config.judges]
    out.append(Check(f"ensemble {config.name}", "ok" if not found.problems else "info",
                     f"{len(config.judges)} judges, quorum {config.quorum}: "
                     + ", ".join(f"{s.name} [{s.family}]" for s in slots)))
    policy = EnsemblePolicy(quorum=config.quorum,
                            other_family_min_share=config.other_family_min_share,
                            allow_same_family_only=config.allow_same_family_only,
                            disagreement_threshold=config.disagreement_threshold)
    sut = config.system_under_test
    sut_family = family_of(sut, overrides=config.family_overrides) if sut else None
    try:
        warnings = check_policy(slots, sut_family, policy)
    except LegalJudgeError as exc:
        return [*out, Check("same-family policy", "problem", exc.message, exc.fix)]
    out += [Check("same-family policy", "info", w) for w in warnings]
    weights = compute_weights(slots, sut_family, policy)
    where = f"system under test {sut} [{sut_family}]" if sut else "no system_under_test in " \
        "the config (decided per item)"
    out.append(Check("weights", "ok", f"{where}: " + "; ".join(
        f"{w.judge} {w.weight:.2f}{' same family' if w.same_family else ''}" for w in weights)
        + f" ({weights[0].reason})"))
    return out


#: What doctor says without ``--ping``: creating a judge proves its spec and key, not its server.
_NOT_PINGED = Check("judge endpoints", "info", "reachability not checked (no request was sent to "
                    "the judges); `legal-judge doctor --ping` sends one 1-token request per judge")


def _reachability(ref: str, timeout_s: float) -> list[Check]:
    """One bounded request per judge that can be created (``doctor --ping``)."""
    import asyncio

    from legal_judge.benchmark.ensemble_check import check_ensemble
    from legal_judge.benchmark.ensemble_config import load_ensemble_config
    from legal_judge.providers.ping import bounded_options, ping_all

    try:
        config = load_ensemble_config(ref)
    except LegalJudgeError:
        return []  # reported by the ensemble checks
    bounded = config.model_copy(update={"judges": [
        jc.model_copy(update={"options": bounded_options(jc.options, timeout_s=timeout_s)})
        for jc in config.judges]})
    found = check_ensemble(bounded)
    results = asyncio.run(ping_all([(j.label, j.provider) for j in found.judges]))
    # A judge that could not be created was not pinged: said, never left out (the cause is
    # reported with the ensemble's checks).
    out = [Check(f"reach {p.judge}", "info", f"not pinged: {p.message}") for p in found.problems]
    for r in results:
        if r.reach == "unreachable":
            where = r.endpoint or "its endpoint"
            out.append(Check(f"reach {r.judge}", "problem",
                             f"{where} unreachable: {r.detail.replace(f' at {where}', '')}",
                             f"start the server at {where} or correct the judge in "
                             f"{config.source} (URL, model, key), then `legal-judge doctor "
                             f"--ping --ensemble {ref}`"))
        else:
            out.append(Check(f"reach {r.judge}", "ok" if r.reach == "reachable" else "info",
                             f"{r.endpoint}: {r.detail}" if r.endpoint else r.detail))
    return out


def _close_providers(judges: list[Any]) -> None:
    import asyncio

    async def close() -> None:
        for judge in judges:
            await judge.provider.aclose()

    asyncio.run(close())


def _langfuse(timeout_s: float) -> list[Check]:
    from legal_judge.sync.settings import missing_variables, set_variables, settings_from_env

    try:
        settings = settings_from_env()
    except ConfigError as exc:
        return [Check("langfuse", "problem", exc.message, exc.fix)]
    if settings is None:
        if not set_variables():
            return [Check("langfuse", "info", "not configured (offline: everything stays in the "
                          "local store; set LANGFUSE_PUBLIC_KEY, LANGFUSE_SECRET_KEY and "
                          "LANGFUSE_BASE_URL to sync)")]
        missing = missing_variables()
        return [Check("langfuse", "problem", f"partly configured: {', '.join(missing)} missing",
                      f"set {', '.join(missing)} (or unset the other LANGFUSE_* variables)")]
    auth = base64.b64encode(f"{settings.public_key}:{settings.secret_key}".encode()).decode()
    url = f"{settings.base_url}/api/public/projects"
    try:
        resp = httpx.get(url, headers={"Authorization": f"Basic {auth}"},
                         timeout=min(timeout_s, settings.timeout_s))
    except httpx.HTTPError as exc:
        return [Check("langfuse", "problem", f"{settings.base_url} unreachable "
                      f"({type(exc).__name__}: {exc})",
                      "check LANGFUSE_BASE_URL (scheme, host, port) and that the server is "
                      "running; runs still work offline and `legal-judge sync` delivers later")]
    if resp.status_code in (401, 403):
        return [Check("langfuse", "problem", f"{settings.base_url} refused the keys "
                      f"(HTTP {resp.status_code})",
                      "copy LANGFUSE_PUBLIC_KEY and LANGFUSE_SECRET_KEY from the project's "
                      "settings page (API keys) of this Langfuse host")]
    if resp.status_code >= 400:
        return [Check("langfuse", "problem", f"{url} answered HTTP {resp.status_code}",
                      "check LANGFUSE_BASE_URL points at the Langfuse server root (no /api path)")]
    return [Check("langfuse", "ok", f"{settings.base_url}: authenticated (HTTP {resp.status_code})")]
