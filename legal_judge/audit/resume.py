"""``audit run --resume AUDIT_ID``: continue an audit that did not finish, from the store alone.

Everything needed is stored when an audit starts: the settings (design seed included) in the
``audits`` row, the base items in the ``audit_started`` log entry, and the ``--judge`` value it was
run with (``source``). Resuming rebuilds the same target and checks it is the same judge (same
judge_id: prompts, rubrics, model); :func:`~legal_judge.audit.execute.run_audit` then checks the
design rebuilds the pairs it logged. Judgments made before the interruption come back from the
provider and verdict caches (nothing is paid twice); a batch audit also adopts its stored,
uncollected batches (``legal_judge.batch.audit``).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from legal_judge.audit.design import AuditSettings, setting_errors
from legal_judge.audit.execute import RESUMABLE
from legal_judge.audit.log import AuditLog
from legal_judge.audit.target import AuditTarget, load_targets
from legal_judge.errors import ConfigError, NotFoundError
from legal_judge.models import BenchmarkItem
from legal_judge.run_owner import refuse_if_owned
from legal_judge.store import Store

__all__ = ["ResumePlan", "audit_source", "resume_plan", "resume_target"]


@dataclass(frozen=True)
class ResumePlan:
    """What a stored audit needs to continue."""

    audit_id: str
    judge_id: str
    status: str
    settings: AuditSettings
    items: list[BenchmarkItem]
    source: dict[str, Any]

    @property
    def batch(self) -> bool:
        """Whether the audit was started with ``--batch``."""
        return bool(self.source.get("batch"))


def audit_source(judge_config: str, *, batch: bool, use_cache: bool = True) -> dict[str, Any]:
    """The ``source`` stored with a new audit: the ``--judge`` value (a file as an absolute path).

    Args:
        judge_config: The ``--judge`` value: a spec, a bundled ensemble name or a file.
        batch: Whether the judge calls go through provider batches.
        use_cache: False for ``--no-cache``: stored only then, and kept by a resume.
    """
    from legal_judge.benchmark.ensemble_config import resolve_ensemble_path

    path = Path(judge_config)
    # A bundled name stays a name (resolved again on resume), even beside a same-named file here.
    bundled = path.suffix not in (".yaml", ".yml") and \
        resolve_ensemble_path(judge_config, missing_ok=True) not in (None, path)
    value = str(path.resolve()) if path.is_file() and not bundled else judge_config
    return {"judge": value, "batch": batch, **({} if use_cache else {"use_cache": False})}


def resume_plan(store: Store, audit_id: str) -> ResumePlan:
    """Read what the audit ``audit_id`` needs to continue.

    Raises:
        NotFoundError: no such audit.
        ConfigError: the audit finished, another live process is executing it
            (``audit-in-progress``), or it was started before audits could be resumed.
    """
    row = store.audits.get(audit_id)
    if row is None:
        raise NotFoundError(f"no audit '{audit_id}' in the store",
                            fix="list audits with `legal-judge audit list`")
    status = str(row["status"])
    if status not in RESUMABLE:
        raise ConfigError(f"audit {audit_id} has status {status}: there is nothing to resume",
                          code="audit-resume-finished",
                          fix=f"its report is stored: `legal-judge audit gate {audit_id}`")
    refuse_if_owned(store, audit_id, kind="audit")  # running, and its process is alive
    config = json.loads(row["config_json"])
    started = AuditLog(store).entries(audit_id, kind="audit_started")
    source = config.get("source")
    if not source or not started:
        raise ConfigError(f"audit {audit_id} was started by a version that cannot resume audits",
                          code="audit-resume-unsupported",
                          fix="run the audit again; judgments already made come from the cache")
    items = [BenchmarkItem.model_validate(x) for x in started[0].payload["items"]]
    try:
        settings = AuditSettings.model_validate(config["settings"])
    except ValidationError as exc:  # stored by a version that took them, then failed on them
        why = "; ".join(f"{field}: {msg}" if field else msg
                        for field, msg in setting_errors(exc))
        raise ConfigError(f"audit {audit_id} cannot be resumed: its settings are refused ({why})",
                          code="audit-resume-settings",
                          fix="start a new audit with valid settings; judgments already made "
                              "come from the cache") from None
    return ResumePlan(audit_id, str(row["judge_id"]), status, settings, items, source)


async def resume_target(plan: ResumePlan, store: Store) -> AuditTarget:
    """The audit's judge, rebuilt from its stored ``--judge`` value (the cache is read unless
    the audit was started with ``--no-cache``).

    Raises:
        ConfigError: the judge is gone, or is not the same judge any more (another judge_id).
    """
    try:
        targets = load_targets(plan.source["judge"], store=store, rubric=plan.settings.rubric,
                               all_judges=True,
                               # A `--no-cache` audit stays uncached when resumed (issue 33).
                               use_cache=bool(plan.source.get("use_cache", True)),
                               request_seed=plan.settings.request_seed)
    except (ConfigError, OSError) as exc:
        raise ConfigError(f"audit {plan.audit_id}: cannot rebuild its judge from "
                          f"'{plan.source['judge']}': {exc}", code="audit-resume-judge",
                          fix="restore that file, or start a new audit") from None
    chosen = [t for t in targets if t.judge_id == plan.judge_id][:1]
    for other in targets:
        if other not in chosen:
            await other.aclose()
    if not chosen:
        raise ConfigError(
            f"audit {plan.audit_id}: '{plan.source['judge']}' is no longer the judge it audited "
            f"(judge_id {plan.judge_id[:12]}...; its prompts, rubrics or settings changed)",
            code="audit-resume-judge", fix="start a new audit of the judge as it is now")
    return chosen[0]
