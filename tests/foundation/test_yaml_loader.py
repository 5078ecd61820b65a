"""The assets' YAML parser: libyaml's speed, the pure-Python loader's documents and messages."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from legal_judge.assets import catalogue
from legal_judge.assets.catalogue import asset_root, parse_yaml

ROOT = Path(__file__).resolve().parents[2]


def _bundled_yaml() -> list[Path]:
    roots = {asset_root() / "rubrics", asset_root() / "prompts", ROOT / "legal_judge"}
    return sorted({p for r in roots for p in r.rglob("*.yaml")})


def test_the_fast_loader_is_libyaml_when_pyyaml_has_it() -> None:
    # The speed is the point: without this, parse_yaml silently falls back to the slow loader.
    if not yaml.__with_libyaml__:
        pytest.skip("this PyYAML was built without libyaml")
    assert catalogue._FAST_LOADER is yaml.CSafeLoader


@pytest.mark.parametrize("path", _bundled_yaml(), ids=lambda p: p.name)
def test_every_bundled_yaml_file_parses_as_safe_load_does(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    assert parse_yaml(text) == yaml.safe_load(text)


@pytest.mark.parametrize("text", ["a: [1,\n b: c", "rubric: x\n  bad: indent\n", "a: 'open"])
def test_a_malformed_document_reports_the_pure_python_message_and_line(text: str) -> None:
    with pytest.raises(yaml.YAMLError) as expected:
        yaml.safe_load(text)
    with pytest.raises(yaml.YAMLError) as got:
        parse_yaml(text)
    assert str(got.value) == str(expected.value)
    assert got.value.problem_mark.line == expected.value.problem_mark.line  # type: ignore[attr-defined]
