"""The assets search path: a team folder holds only its own rubrics; the bundled ones stay."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from legal_judge.assets.catalogue import asset_root, asset_roots, load_assets
from legal_judge.errors import ConfigError, InputError

TEAM = Path(__file__).resolve().parents[1] / "data" / "team_assets"


def test_a_team_folder_adds_its_rubric_and_set_to_the_bundled_ones(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LEGAL_JUDGE_ASSETS", str(TEAM))
    assert asset_roots() == [TEAM.resolve(), asset_root().resolve()]
    assets = load_assets()
    assert assets.rubric("plain_language").scale is not None
    team = assets.rubric_set("team_set")
    assert "plain_language" in team.rubrics and "plain_language <= 1" in team.describe_rule()
    assert assets.rubric("legal_soundness").version == 1  # bundled, still there
    assert assets.rubric_set().name == "legal_judge_set" and assets.templates
    names = {(r["kind"], r["name"]) for r in assets.listing()}
    assert ("rubric", "plain_language") in names and ("rubric_set", "team_set") in names


def test_without_the_variable_only_the_bundled_assets(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("LEGAL_JUDGE_ASSETS", raising=False)
    assert asset_roots() == [asset_root().resolve()]
    assert "plain_language" not in load_assets().rubrics


def test_a_full_identical_copy_is_fine_an_edited_release_is_not(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    copy = tmp_path / "copy"
    shutil.copytree(asset_root() / "rubrics", copy / "rubrics")
    monkeypatch.setenv("LEGAL_JUDGE_ASSETS", str(copy))
    assert load_assets().rubric("completeness").sha256 == load_assets(asset_root()).rubric(
        "completeness").sha256
    edited = tmp_path / "edited"  # (loaded assets are cached per search path: a new folder)
    shutil.copytree(copy, edited)
    monkeypatch.setenv("LEGAL_JUDGE_ASSETS", str(edited))
    path = edited / "rubrics" / "completeness.v1.yaml"
    path.write_text(path.read_text(encoding="utf-8").replace("Completeness", "Thoroughness", 1),
                    encoding="utf-8")
    with pytest.raises(InputError) as exc:
        load_assets()
    text = str(exc.value) + " ".join(p.message for p in exc.value.problems)
    assert "completeness.v1.yaml" in text and "never edited" in text
    assert "completeness.v2.yaml" in text


def test_folders_are_searched_in_order_and_checked(tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    other = tmp_path / "other" / "rubrics"
    other.mkdir(parents=True)
    shutil.copy(TEAM / "rubrics" / "plain_language.v1.yaml", other)
    monkeypatch.setenv("LEGAL_JUDGE_ASSETS", f"{TEAM}:{other.parent}")
    assert [r.name for r in asset_roots()][:2] == ["team_assets", "other"]
    assert load_assets().rubric("plain_language")  # the same file twice: identical, accepted
    monkeypatch.setenv("LEGAL_JUDGE_ASSETS", str(tmp_path / "missing"))
    with pytest.raises(ConfigError, match="does not exist"):
        asset_roots()
    (tmp_path / "flat").mkdir()
    monkeypatch.setenv("LEGAL_JUDGE_ASSETS", str(tmp_path / "flat"))
    with pytest.raises(ConfigError, match="no rubrics/ or prompts/ folder"):
        asset_roots()


def test_a_team_set_naming_an_unknown_rubric_is_refused(tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    folder = tmp_path / "team" / "rubrics"
    folder.mkdir(parents=True)
    text = (TEAM / "rubrics" / "team_set.v1.yaml").read_text(encoding="utf-8")
    (folder / "team_set.v1.yaml").write_text(text, encoding="utf-8")  # plain_language not copied
    monkeypatch.setenv("LEGAL_JUDGE_ASSETS", str(folder.parent))
    with pytest.raises(InputError) as exc:
        load_assets()
    assert any("unknown rubric 'plain_language'" in p.message for p in exc.value.problems)
