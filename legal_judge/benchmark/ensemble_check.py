"""One validation of an ensemble, shared by ``run`` and ``doctor``: every problem at once.

An ensemble is usable when every judge can be created: its spec parses (provider prefix, model,
server URL), the provider is known, its options are valid, its key is in the environment, its
optional package and model file are installed, and the rubric set exists. Creating the providers
is the check itself (no call is made), so ``doctor`` and ``run`` cannot disagree about a judge.
Each problem names the judge and its fix, and all of them are reported together: a user fixes
the file once, not one key per attempt, and a refused run leaves nothing behind.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from pydantic import ValidationError

from legal_judge.benchmark.ensemble_config import EnsembleConfig
from legal_judge.errors import ConfigError, LegalJudgeError, MissingKeyError
from legal_judge.judge.config import JudgeConfig
from legal_judge.judge.judge import Judge
from legal_judge.store import Store

__all__ = ["EnsembleCheck", "EnsembleInvalid", "EnsembleProblem", "check_ensemble"]


@dataclass(frozen=True)
class EnsembleProblem:
    """One thing that stops an ensemble from running.

    Attributes:
        judge: The judge's display name, or None for the ensemble as a whole.
        position: The judge's place in the file (1 = the first ``[[judges]]``).
        message: What is wrong.
        fix: What to do about it.
        code: The stable error code (``missing-key``, ``provider-unknown``, ...).
        env_var: The missing key's variable, for ``missing-key``.
    """

    judge: str | None
    message: str
    fix: str | None = None
    code: str = "config-invalid"
    env_var: str | None = None
    position: int | None = None

    @property
    def where(self) -> str:
        """``judge 2 'name'`` (the name left out when the message already quotes it)."""
        if self.judge is None:
            return "ensemble"
        place = f"judge {self.position}" if self.position else "judge"
        return place if f"'{self.judge}'" in self.message else f"{place} '{self.judge}'"

    def __str__(self) -> str:
        return f"{self.where}: {self.message}" + (f"\n    fix: {self.fix}" if self.fix else "")


class EnsembleInvalid(ConfigError):
    """An ensemble with problems; every one of them is in the message (exit 2)."""

    def __init__(self, source: str, problems: list[EnsembleProblem]) -> None:
        n = len(problems)
        body = "\n".join(f"  {p}" for p in problems)
        super().__init__(
            f"{source}: {n} problem{'s' if n != 1 else ''} in the ensemble, nothing was run:\n{body}",
            code="ensemble-invalid",
            fix=f"correct {'them' if n != 1 else 'it'} and run again (`legal-judge doctor "
                f"--ensemble {source}` checks everything at once)")
        self.source = source
        self.problems = list(problems)


@dataclass
class EnsembleCheck:
    """What checking an ensemble found.

    Attributes:
        config: The ensemble checked.
        judges: The judges that could be created (all of them when ``problems`` is empty).
        families: Judge name -> model family (from the provider when it could be created).
        problems: Everything that stops the ensemble from running, in judge order.
        keys_used: Key variable -> the judges that read it (set or not).
    """

    config: EnsembleConfig
    judges: list[Judge] = field(default_factory=list)
    families: dict[str, str] = field(default_factory=dict)
    problems: list[EnsembleProblem] = field(default_factory=list)
    keys_used: dict[str, list[str]] = field(default_factory=dict)

    def judges_or_raise(self) -> list[Judge]:
        """The judges, or :class:`EnsembleInvalid` listing every problem."""
        if self.problems:
            raise EnsembleInvalid(self.config.source, self.problems)
        return self.judges


def check_ensemble(config: EnsembleConfig, *, store: Store | None = None, use_cache: bool = True,
                   http_client: Any = None) -> EnsembleCheck:
    """Create every judge of ``config``; collect each problem instead of stopping at the first.

    Args:
        config: The ensemble.
        store: Where the judges log calls and cache responses (None for a check only).
        use_cache: Read the provider cache.
        http_client: An httpx.AsyncClient for the SDK providers (tests and benchmarks).

    Returns:
        The judges created and the problems found; no provider is called.
    """
    from legal_judge.assets.catalogue import load_assets
    from legal_judge.benchmark.answer_rules import check_rubric_set

    check = EnsembleCheck(config)
    rubrics_ok = True
    try:
        # Its overrides must be rows of the answer-rules table: refused here, before any call.
        check_rubric_set(load_assets().rubric_set(config.rubric_set))
    except LegalJudgeError as exc:
        rubrics_ok = False
        check.problems.append(_problem(None, exc))
    for position, jc in enumerate(config.judges, start=1):
        provider = _provider(jc, config, http_client, check, position)
        if provider is None:
            check.families[jc.label] = jc.family or _family_from_spec(jc, config)
            continue
        check.families[jc.label] = jc.family or str(provider.family)
        key_env = getattr(provider, "key_env", None)
        if isinstance(key_env, str):
            check.keys_used.setdefault(key_env, []).append(jc.label)
        if rubrics_ok:
            try:
                check.judges.append(Judge(jc, provider, rubric_set=config.rubric_set, store=store,
                                          use_cache=use_cache))
            except LegalJudgeError as exc:
                check.problems.append(_problem(jc.label, exc, position))
    return check


def _provider(jc: JudgeConfig, config: EnsembleConfig, http_client: Any, check: EnsembleCheck,
              position: int) -> Any:
    """The judge's provider, or None with its problems added to ``check``."""
    from legal_judge.providers.base import ProviderOptions
    from legal_judge.providers.registry import get_provider

    opts = dict(jc.options)
    if jc.family:
        opts.setdefault("family", jc.family)
    if config.requests_per_minute and "requests_per_minute" not in opts:
        opts["requests_per_minute"] = config.requests_per_minute
    opts.setdefault("max_concurrency", config.concurrency)
    options_ok = True
    try:
        options = ProviderOptions(**opts)
    except ValidationError as exc:
        options_ok = False
        check.problems.append(_options_problem(jc.label, exc, position))
        # The rest of the judge (its spec, its key) is still checked, with default options.
        options = ProviderOptions()
    try:
        provider = get_provider(jc.spec, options=options, http_client=http_client)
    except LegalJudgeError as exc:
        check.problems.append(_problem(jc.label, exc, position))
        if isinstance(exc, MissingKeyError):
            check.keys_used.setdefault(exc.env_var, []).append(jc.label)
        return None
    except ValueError as exc:  # a spec parameter of the wrong type (simulated:x?latency_ms=abc)
        check.problems.append(EnsembleProblem(
            jc.label, f"invalid spec {jc.spec!r}: {exc}", code="provider-spec-invalid",
            fix="correct the spec; the README lists each provider's spec", position=position))
        return None
    return provider if options_ok else None


def _options_problem(judge: str, exc: ValidationError, position: int) -> EnsembleProblem:
    from legal_judge.providers.base import ProviderOptions

    errors = exc.errors()
    details = "; ".join(f"options.{'.'.join(map(str, e['loc']))}: "
                        f"{str(e['msg']).removeprefix('Value error, ')}" for e in errors)
    unknown = any(e["type"] == "extra_forbidden" for e in errors)
    return EnsembleProblem(
        judge, f"invalid options: {details}", code="judge-options-invalid", position=position,
        fix=("options may set: " + ", ".join(ProviderOptions.model_fields)) if unknown else
        "correct the value named above")


def _problem(judge: str | None, exc: LegalJudgeError, position: int | None = None
             ) -> EnsembleProblem:
    return EnsembleProblem(judge, exc.message, exc.fix, code=getattr(exc, "code", "config-invalid"),
                           env_var=getattr(exc, "env_var", None), position=position)


def _family_from_spec(jc: JudgeConfig, config: EnsembleConfig) -> str:
    from legal_judge.providers.base import parse_spec
    from legal_judge.providers.families import family_of

    try:
        model = parse_spec(jc.spec).model
    except LegalJudgeError:
        return "unknown"
    return str(family_of(model, overrides=config.family_overrides))
