"""The repository's prompts in Langfuse: push, pull, promote, diff, and the versions a run uses.

What a prompt is (names, texts, references, content hashes) is :mod:`legal_judge.sync.prompts`;
this module only talks to Langfuse. Requests are made without SDK retries: a failure is a
:class:`~legal_judge.errors.SyncError` (exit 3) that names the operation, and a rerun resumes.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import quote

from langfuse.api import CreateTextPromptRequest
from langfuse.api.commons.errors import NotFoundError as LfNotFound

from legal_judge.assets.catalogue import load_assets
from legal_judge.errors import ConfigError, NotFoundError, SyncError
from legal_judge.sync.langfuse_client import LangfuseClient, client_for
from legal_judge.sync.langfuse_errors import langfuse_failure
from legal_judge.sync.prompts import (
    local_prompts,
    parse_references,
    reference_label,
    remote_matches,
)
from legal_judge.sync.settings import judge_prompt_name, require_settings

__all__ = ["diff_prompts", "promote_prompt", "pull_prompt", "push_prompts", "resolve_prompt_versions"]


def _enc(name: str) -> str:
    return quote(name, safe="")


def _get(c: LangfuseClient, name: str, *, label: str | None = None, version: int | None = None,
         resolve: bool = True) -> Any:
    try:
        # resolve is sent either way: `prompts pull` promises resolved references whatever the
        # server's default.
        return c.lf.api.prompts.get(_enc(name), label=label, version=version, resolve=resolve,
                                    request_options={"max_retries": 0})
    except LfNotFound:
        return None


def _relabel(c: LangfuseClient, name: str, version: int, label: str) -> Any:
    return c.lf.api.prompt_version.update(name=_enc(name), version=version, new_labels=[label])


def push_prompts(*, label: str | None = None, judge_name: str | None = None) -> list[dict[str, Any]]:
    """Create a Langfuse version for each repository prompt whose content hash changed.

    Only ``label`` is set, and only on the versions this push creates or finds holding the
    repository's content (``latest`` is Langfuse's own); the judge prompt references its rubrics
    with the same label (``latest`` without one), so a staging push leaves production as it was.

    Returns:
        One row per prompt: name, kind, asset, action (``created``/``labeled``/``unchanged``),
        version, sha256 (the asset's, as ``prompts list`` shows it) and prompt_sha256 (the
        composed prompt's content hash, stored in its Langfuse config).

    Raises:
        SyncError: Langfuse refused or was unreachable.
    """
    c = client_for(require_settings())
    rows = []
    try:
        for lp in local_prompts(load_assets(), judge_name=judge_name, label=reference_label(label)):
            # The version holding this label already may hold the content though a newer one
            # (a UI edit) took `latest`: then nothing is created for this label.
            found = [p for p in (_get(c, lp.name, label=label, resolve=False) if label else None,
                                 _get(c, lp.name, label="latest", resolve=False))
                     if p is not None and remote_matches(lp, p.prompt, p.config)]
            if found:
                cur, action = found[0], "unchanged"
                if label and label not in cur.labels:
                    _relabel(c, lp.name, int(cur.version), label)
                    action = "labeled"
                rows.append({"name": lp.name, "kind": lp.kind, "asset": lp.asset,
                             "action": action, "version": cur.version,
                             "sha256": lp.asset_sha256, "prompt_sha256": lp.sha256})
                continue
            made = c.lf.api.prompts.create(request=CreateTextPromptRequest(
                name=lp.name, prompt=lp.text, config=lp.config, labels=[label] if label else [],
                tags=["legal_judge", lp.kind],
                commit_message=f"legal-judge push ({lp.config['legal_judge']['asset']})"))
            rows.append({"name": lp.name, "kind": lp.kind, "asset": lp.asset,
                         "action": "created", "version": made.version,
                         "sha256": lp.asset_sha256, "prompt_sha256": lp.sha256})
    except (ConfigError, SyncError):
        raise
    except Exception as exc:
        raise langfuse_failure(exc, "prompt push") from None
    return rows


def _references(c: LangfuseClient, raw: str) -> list[dict[str, Any]]:
    """Each reference of a raw prompt with the version it resolves to now (None: unresolved)."""
    out = []
    for ref in parse_references(raw):
        version = int(ref["version"]) if "version" in ref else None
        dep = _get(c, ref.get("name", ""), label=None if version else ref.get("label"),
                   version=version, resolve=False)
        out.append({"name": ref.get("name"), "label": ref.get("label"),
                    "version": int(dep.version) if dep is not None else None})
    return out


def pull_prompt(name: str, *, label: str | None = "production",
                version: int | None = None) -> dict[str, Any]:
    """One prompt version with its references resolved, and the versions they resolved to.

    Returns:
        ``name``, ``version``, ``labels``, ``prompt`` (resolved text), ``config`` and
        ``references`` (name, label, resolved version per reference of the stored text).
    """
    c = client_for(require_settings())
    by_label = None if version else label
    try:
        got = _get(c, name, label=by_label, version=version)
        raw = _get(c, name, label=by_label, version=version, resolve=False) if got else None
        refs = _references(c, raw.prompt) if raw is not None else []
    except Exception as exc:
        raise langfuse_failure(exc, f"fetching prompt {name}") from None
    if got is None:
        raise NotFoundError(f"no Langfuse prompt {name} with {'version ' + str(version) if version else 'label ' + str(label)}",
                            fix="`legal-judge prompts diff` lists the prompts and their versions")
    return {"name": got.name, "version": got.version, "labels": list(got.labels),
            "prompt": got.prompt, "config": got.config, "references": refs}


def promote_prompt(name: str, version: int, *, label: str = "production") -> list[str]:
    """Move ``label`` to ``version`` of ``name``; returns that version's labels.

    Raises:
        ConfigError: the version references its rubrics by another label (labelled ``label`` it
            would compose the other label's rubrics).
        NotFoundError: no such version.
    """
    c = client_for(require_settings())
    try:
        raw = _get(c, name, version=version, resolve=False)
        refs = parse_references(raw.prompt) if raw is not None else []
        others = sorted({r["label"] for r in refs
                         if "version" not in r and r.get("label") not in (None, label)})
        if others:
            raise ConfigError(
                f"{name} v{version} references its rubrics by label '{others[0]}': labelled "
                f"'{label}' it would compose the '{others[0]}' rubrics",
                code="prompt-reference-label",
                fix=f"`legal-judge prompts push --label {label}` labels the rubric versions "
                    f"'{label}' and creates the judge version that references them")
        got = _relabel(c, name, version, label)
    except LfNotFound:
        raise NotFoundError(f"no Langfuse prompt {name} version {version}",
                            fix="`legal-judge prompts diff` shows the versions") from None
    except ConfigError:
        raise
    except Exception as exc:
        raise langfuse_failure(exc, "prompt promote") from None
    return list(got.labels)


def diff_prompts(*, label: str = "latest") -> list[dict[str, Any]]:
    """Repository prompts against Langfuse's ``label`` version: same / changed / missing.

    ``sha256`` is the repository asset's (the catalogue's, as ``prompts list`` shows it: the
    judge prompt's is its template's) and ``remote_sha256`` the asset the Langfuse version was
    pushed from; ``prompt_sha256`` / ``remote_prompt_sha256`` are the composed prompts' content
    hashes that decide same or changed.

    The judge prompt is compared as composed for the label that version's references follow
    (recorded in its config), so a judge pushed with ``--label production`` is "same" under any
    label as long as the repository's content did not change.
    """
    c = client_for(require_settings())
    out = []
    assets = load_assets()
    try:
        for lp in local_prompts(assets, label=label):
            cur = _get(c, lp.name, label=label, resolve=False)
            ref = ((cur.config or {}).get("legal_judge") or {}).get("rubric_label") \
                if cur is not None and lp.kind == "judge" else None
            if ref and ref != label:
                lp = next(p for p in local_prompts(assets, label=str(ref)) if p.name == lp.name)
            remote = (cur.config or {}) if cur is not None else {}
            origin = remote.get("legal_judge") if isinstance(remote, dict) else None
            out.append({"name": lp.name, "kind": lp.kind, "asset": lp.asset,
                        "sha256": lp.asset_sha256,
                        "remote_version": cur.version if cur else None,
                        "remote_sha256": (origin or {}).get("asset_sha256")
                        if isinstance(origin, dict) else None,
                        "prompt_sha256": lp.sha256,
                        "remote_prompt_sha256": remote.get("sha256")
                        if isinstance(remote, dict) else None,
                        "status": "missing" if cur is None else
                        ("same" if remote_matches(lp, cur.prompt, cur.config) else "changed")})
    except Exception as exc:
        raise langfuse_failure(exc, "prompt diff") from None
    return out


def resolve_prompt_versions(*, label: str = "production",
                            judge_name: str | None = None) -> dict[str, int]:
    """The composed prompt versions a run uses: the judge prompt and each rubric it references.

    The runner records the result in its run config under ``langfuse_prompts`` (generations then
    link to that judge prompt version; old runs keep theirs).
    """
    c = client_for(require_settings())
    name = judge_name or judge_prompt_name()
    try:
        judge = _get(c, name, label=label, resolve=False)
        if judge is None:
            raise SyncError(f"no Langfuse prompt {name} with label {label}",
                            fix="run `legal-judge prompts push` and promote a version")
        versions = {name: int(judge.version)}
        for ref in _references(c, judge.prompt):
            if ref["version"] is not None:
                versions[str(ref["name"])] = int(ref["version"])
    except SyncError:
        raise
    except Exception as exc:
        raise langfuse_failure(exc, "resolving prompt versions") from None
    return versions
