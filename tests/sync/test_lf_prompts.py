"""Prompt push/pull/promote/diff and composed versions against the stand-in."""

from __future__ import annotations

import pytest
from click.testing import CliRunner
from standin import LangfuseStandin

from legal_judge.cli import cli
from legal_judge.commands.langfuse import COMMANDS, prompts
from legal_judge.errors import ConfigError, NotFoundError
from legal_judge.sync.langfuse_prompts import (
    diff_prompts,
    promote_prompt,
    pull_prompt,
    push_prompts,
    resolve_prompt_versions,
)
from legal_judge.sync.prompts import prompt_reference


def _versions(standin: LangfuseStandin, name: str) -> list[dict]:
    return standin.state.prompts.get(name, [])


def _ui_edit(standin: LangfuseStandin, name: str, text: str | None = None) -> int:
    """What an edit in the Langfuse UI does: a new version (config copied) that takes ``latest``."""
    versions = standin.state.prompts[name]
    for p in versions:
        p["labels"] = [lb for lb in p["labels"] if lb != "latest"]
    new = {**versions[-1], "version": len(versions) + 1, "labels": ["latest"]}
    if text is not None:
        new["prompt"] = text
    versions.append(new)
    return int(new["version"])


def test_push_twice_creates_one_version(standin: LangfuseStandin) -> None:
    first = push_prompts(label="staging")
    assert {r["action"] for r in first} == {"created"}
    second = push_prompts(label="staging")
    assert {r["action"] for r in second} == {"unchanged"}
    judge = _versions(standin, "llm-judge-v2")
    assert len(judge) == 1 and "staging" in judge[0]["labels"] and "latest" in judge[0]["labels"]
    rubric = _versions(standin, "legal-judge/rubric/legal_soundness")
    assert len(rubric) == 1
    # A staging push sets staging and nothing else: production is never touched (issue 20 #8) ...
    assert set(rubric[0]["labels"]) == {"staging", "latest"}
    assert not [(n, p["version"]) for n, vs in standin.state.prompts.items() for p in vs
                if "production" in p["labels"]]
    # ... and the judge follows the staging rubrics.
    assert prompt_reference("legal-judge/rubric/legal_soundness", label="staging") in \
        judge[0]["prompt"]
    assert "label=production" not in judge[0]["prompt"]
    assert judge[0]["config"]["sha256"] == first[[r["name"] for r in first].index(
        "llm-judge-v2")]["prompt_sha256"]
    assert not standin.state.rejected


def test_changed_content_creates_a_version_and_rubric_edits_flow_into_the_judge(
        standin: LangfuseStandin, monkeypatch: pytest.MonkeyPatch) -> None:
    push_prompts(label="production")
    # a lawyer edits a rubric in Langfuse and promotes it: the judge prompt picks it up unchanged
    name = "legal-judge/rubric/completeness"
    assert _ui_edit(standin, name, "EDITED COMPLETENESS") == 2
    promote_prompt(name, 2, label="production")
    got = pull_prompt("llm-judge-v2", label="production")
    assert "EDITED COMPLETENESS" in got["prompt"] and "@@@langfusePrompt" not in got["prompt"]
    versions = resolve_prompt_versions(label="production")
    assert versions["llm-judge-v2"] == 1 and versions[name] == 2
    assert versions["legal-judge/rubric/legal_soundness"] == 1
    rows = {r["name"]: r for r in diff_prompts()}
    assert rows[name]["status"] == "changed" and rows["llm-judge-v2"]["status"] == "same"
    # the repository is the source of truth: the next push restores the repo text as v3
    pushed = {r["name"]: r for r in push_prompts()}
    assert pushed[name]["action"] == "created" and pushed[name]["version"] == 3
    # a renamed judge prompt is a new prompt
    monkeypatch.setenv("LEGAL_JUDGE_JUDGE_PROMPT", "legal-judge/judge")
    assert {r["name"]: r["action"] for r in push_prompts()}["legal-judge/judge"] == "created"


def test_promote_moves_the_label(standin: LangfuseStandin) -> None:
    push_prompts()
    name = "legal-judge/template/json_retry"
    _ui_edit(standin, name)
    assert "production" in promote_prompt(name, 2)
    labels = {p["version"]: p["labels"] for p in standin.state.prompts[name]}
    assert "production" not in labels[1] and "production" in labels[2]
    with pytest.raises(NotFoundError):
        promote_prompt(name, 9)
    with pytest.raises(NotFoundError):
        pull_prompt("no-such-prompt")


def test_cli_prompts(standin: LangfuseStandin) -> None:
    assert {c.name for c in COMMANDS} == {"prompts", "sync", "datasets"}
    runner = CliRunner()
    out = runner.invoke(prompts, ["list"])
    assert out.exit_code == 0, out.output
    assert "legal_soundness" in out.output and "judge_system" in out.output
    out = runner.invoke(prompts, ["push", "--label", "staging"])
    assert out.exit_code == 0 and "created" in out.output, out.output
    out = runner.invoke(prompts, ["push", "--label", "staging"])
    assert "created" not in out.output and "unchanged" in out.output
    # The staging judge references staging rubrics: promoting it to production is refused ...
    out = runner.invoke(cli, ["prompts", "promote", "llm-judge-v2", "1", "--label", "production"])
    assert out.exit_code == 2 and "push --label production" in out.output, out.output
    # ... a production push labels the same rubric versions and composes the production judge.
    out = runner.invoke(prompts, ["push", "--label", "production"])
    assert out.exit_code == 0 and "labeled" in out.output, out.output
    out = runner.invoke(prompts, ["pull", "llm-judge-v2", "--label", "production"])
    assert out.exit_code == 0 and "senior legal AI quality evaluator" in out.output
    assert "resolved legal-judge/rubric/legal_soundness (label production) -> v1" in out.output
    out = runner.invoke(prompts, ["diff"])
    assert out.exit_code == 0 and "same" in out.output


def test_staging_push_leaves_production_and_the_judges_follow_their_own_label(
        standin: LangfuseStandin) -> None:
    push_prompts(label="production")
    # A lawyer edits a rubric in Langfuse and promotes it: production now composes the edit.
    name = "legal-judge/rubric/completeness"
    promote_prompt(name, _ui_edit(standin, name, "EDITED COMPLETENESS"), label="production")
    def production() -> dict[str, list[int]]:
        return {n: [p["version"] for p in vs if "production" in p["labels"]]
                for n, vs in standin.state.prompts.items()}

    before = production()
    pushed = {r["name"]: r for r in push_prompts(label="staging")}
    # The repository's rubric text comes back as a new staging version; unchanged prompts only
    # gain the staging label on the version that holds their content.
    assert pushed[name]["action"] == "created" and pushed[name]["version"] == 3
    assert pushed["legal-judge/rubric/legal_soundness"]["action"] == "labeled"
    assert pushed["llm-judge-v2"]["action"] == "created"
    assert production() == before  # production untouched (latest moves, as Langfuse does)
    staging = pull_prompt("llm-judge-v2", label="staging")
    assert "EDITED COMPLETENESS" not in staging["prompt"] and "@@@" not in staging["prompt"]
    assert {r["name"]: r["version"] for r in staging["references"]}[name] == 3
    production = pull_prompt("llm-judge-v2", label="production")
    assert "EDITED COMPLETENESS" in production["prompt"]
    assert resolve_prompt_versions(label="staging")[name] == 3
    assert resolve_prompt_versions(label="production")[name] == 2
    # Pushing staging again changes nothing; the repository's judge is the same as both versions.
    assert {r["action"] for r in push_prompts(label="staging")} == {"unchanged"}
    rows = {r["name"]: r["status"] for r in diff_prompts(label="production")}
    assert rows["llm-judge-v2"] == "same" and rows[name] == "changed"


def test_promote_refuses_a_judge_whose_references_follow_another_label(
        standin: LangfuseStandin) -> None:
    push_prompts(label="staging")
    with pytest.raises(ConfigError, match="references its rubrics by label 'staging'"):
        promote_prompt("llm-judge-v2", 1, label="production")
    assert "production" not in standin.state.prompts["llm-judge-v2"][0]["labels"]
    promote_prompt("legal-judge/rubric/completeness", 1, label="reviewed")  # no references: fine
