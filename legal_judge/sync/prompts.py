"""The repository's prompts and rubrics as Langfuse text prompts (pure; no langfuse import).

Naming: the judge system prompt is ``llm-judge-v2`` (``LEGAL_JUDGE_JUDGE_PROMPT`` overrides it),
each rubric is ``legal-judge/rubric/<name>`` and every other template ``legal-judge/template/<name>``.
The judge prompt binds the rubrics with Langfuse prompt references
``@@@langfusePrompt:name=legal-judge/rubric/<name>|label=<label>@@@``, where the label is the one the
judge prompt is pushed with (``prompts push --label staging`` composes a judge that follows the
``staging`` rubrics; a push without a label follows ``latest``). A rubric edited and promoted in
Langfuse under that label is picked up by the judge prompt on the next fetch without a code change,
and a staging push never moves the ``production`` composition.

Each prompt's ``config`` carries ``sha256``: the hash of its text and the rest of its config. A push
creates a Langfuse version only when that hash differs from the newest version's.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from typing import Any

from legal_judge.assets.catalogue import Assets
from legal_judge.assets.rubrics import Rubric
from legal_judge.store import canonical_json
from legal_judge.sync.settings import judge_prompt_name

__all__ = [
    "LocalPrompt",
    "content_hash",
    "local_prompts",
    "parse_references",
    "prompt_reference",
    "reference_label",
    "remote_matches",
    "rubric_prompt_name",
]

JUDGE_TEMPLATE = "judge_system"


@dataclass(frozen=True)
class LocalPrompt:
    """One prompt as the repository defines it."""

    name: str
    kind: str  # "judge" | "rubric" | "template"
    text: str
    config: dict[str, Any]
    dependencies: tuple[str, ...] = ()

    @property
    def sha256(self) -> str:
        """The content hash stored in the Langfuse prompt's config."""
        return str(self.config["sha256"])

    @property
    def asset(self) -> str:
        """The repository asset (``name@version``) this prompt is made from."""
        return str(self.config["legal_judge"]["asset"])

    @property
    def asset_sha256(self) -> str:
        """That asset's sha256, as the catalogue (and ``prompts list``) has it."""
        return str(self.config["legal_judge"]["asset_sha256"])


def reference_label(push_label: str | None) -> str:
    """The label the judge prompt's rubric references follow: the push's own, else ``latest``."""
    return push_label or "latest"


def rubric_prompt_name(rubric: str) -> str:
    """The Langfuse name of a rubric prompt."""
    return f"legal-judge/rubric/{rubric}"


def prompt_reference(name: str, *, label: str) -> str:
    """A Langfuse prompt reference tag."""
    return f"@@@langfusePrompt:name={name}|label={label}@@@"


_REFERENCE = re.compile(r"@@@langfusePrompt:(.*?)@@@")


def parse_references(text: str) -> list[dict[str, str]]:
    """The prompt references of a raw (unresolved) prompt text: ``name`` and ``label``/``version``."""
    return [dict(p.split("=", 1) for p in tag.split("|") if "=" in p)
            for tag in _REFERENCE.findall(text)]


def content_hash(text: str, config: Any) -> str:
    """The hash of a prompt's text and config (the config's own ``sha256`` left out)."""
    cfg = {k: v for k, v in config.items() if k != "sha256"} if isinstance(config, dict) else config
    return hashlib.sha256(canonical_json({"prompt": text, "config": cfg}).encode()).hexdigest()


def remote_matches(local: LocalPrompt, text: Any, config: Any) -> bool:
    """True when a Langfuse version holds exactly this content.

    The stored hash alone is not enough: an edit in the Langfuse UI copies the config (and its
    hash) into the new version, so the text is hashed again here.
    """
    stored = config.get("sha256") if isinstance(config, dict) else None
    return stored == local.sha256 and content_hash(str(text), config) == local.sha256


def _with_hash(text: str, config: dict[str, Any]) -> dict[str, Any]:
    return {**config, "sha256": content_hash(text, config)}


def _rubric_text(assets: Assets, r: Rubric) -> str:
    # The same template the judge renders, so Langfuse and local runs show identical rubric text.
    from legal_judge.judge.judge import rubric_definitions

    return rubric_definitions(assets, [r])


def _rubric_prompt(assets: Assets, r: Rubric) -> LocalPrompt:
    cfg: dict[str, Any] = {"legal_judge": {
        "kind": "rubric", "asset": r.id, "asset_sha256": r.sha256, "rubric_kind": r.kind,
        "scale": r.scale.model_dump() if r.scale else None, "values": r.values}}
    text = _rubric_text(assets, r)
    return LocalPrompt(rubric_prompt_name(r.name), "rubric", text, _with_hash(text, cfg))


def local_prompts(assets: Assets, *, judge_name: str | None = None,
                  label: str | None = None) -> list[LocalPrompt]:
    """Every prompt to push, dependencies (rubrics) before the judge prompt that references them.

    Args:
        assets: The repository's assets.
        judge_name: The judge prompt's Langfuse name (default ``LEGAL_JUDGE_JUDGE_PROMPT`` or ``llm-judge-v2``).
        label: The label the judge prompt's rubric references name (default ``latest``).
    """
    judge_name = judge_name or judge_prompt_name()
    label = reference_label(label)
    rubric_set = assets.rubric_set()
    names = list(rubric_set.rubrics) + [o.rubric for o in rubric_set.optional_rubrics]
    rubrics = [_rubric_prompt(assets, assets.rubric(n)) for n in dict.fromkeys(names)]
    # A team's own rubrics (found on the assets search path) are versioned in Langfuse too; the
    # judge prompt binds the default set's.
    extra = [_rubric_prompt(assets, assets.rubric(n)) for n in sorted(assets.rubrics)
             if n not in names]
    template = assets.template(JUDGE_TEMPLATE)
    refs = [prompt_reference(p.name, label=label) for p in rubrics]
    # The rubric definitions are bound at the Langfuse prompt level, by reference (the seed's design).
    text = template.source.replace("{{ rubric_definitions }}", "\n\n".join(refs))
    cfg = {"legal_judge": {"kind": "judge", "asset": template.id, "asset_sha256": template.sha256,
                           "rubric_set": rubric_set.id, "rubric_label": label,
                           "rubrics": [p.name for p in rubrics]}}
    judge = LocalPrompt(judge_name, "judge", text, _with_hash(text, cfg),
                        tuple(p.name for p in rubrics))
    others = []
    for name in sorted(assets.templates):
        if name == JUDGE_TEMPLATE:
            continue
        t = assets.template(name)
        tcfg = {"legal_judge": {"kind": "template", "asset": t.id, "asset_sha256": t.sha256}}
        others.append(LocalPrompt(f"legal-judge/template/{name}", "template", t.source,
                                  _with_hash(t.source, tcfg)))
    return [*rubrics, *extra, judge, *others]
