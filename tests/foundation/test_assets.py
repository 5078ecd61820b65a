"""Rubrics and templates: validation, sandboxed rendering, stable hashes."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from legal_judge.assets.catalogue import asset_root, load_assets
from legal_judge.assets.rubrics import DEFAULT_RUBRIC_SET
from legal_judge.assets.templates import render_string
from legal_judge.benchmark.ensemble_config import (
    bundled_config,
    bundled_names,
    load_ensemble_config,
)
from legal_judge.calibration.rubrics import stored_rubric_set
from legal_judge.errors import ConfigError, InputError, TemplateError

EXPECTED_RUBRICS = {"legal_soundness", "citation_quality", "jurisdiction_awareness", "completeness",
                    "hallucination", "language_quality"}
EXPECTED_TEMPLATES = {"judge_system", "judge_user", "json_retry", "bias_warning", "self_debias",
                      "pairwise", "auditor"}


def test_every_rubric_and_template_loads_with_sha256() -> None:
    assets = load_assets()
    assert set(assets.rubrics) == EXPECTED_RUBRICS
    assert set(assets.templates) >= EXPECTED_TEMPLATES
    for row in assets.listing():
        assert len(row["sha256"]) == 64 and row["version"] == "1"
    rs = assets.rubric_set()
    assert rs.rubrics == ["legal_soundness", "citation_quality", "jurisdiction_awareness",
                          "completeness", "hallucination"]
    assert rs.overrides[0].set.rubric == "citation_quality" and rs.overrides[0].set.score == 0


def test_rubric_guides_carry_the_bias_mitigation_table() -> None:
    a = load_assets()
    assert "not whether the answer is long" in a.rubric("completeness").bias_guard
    assert "not presentation" in a.rubric("legal_soundness").bias_guard
    assert "cutoff" in a.rubric("jurisdiction_awareness").bias_guard
    assert a.rubric("language_quality").applies_to_languages == ["ar", "fr"]
    assert a.rubric("hallucination").severity == ["clean", "uncertain", "hallucinated"]


def test_pass_fail_rule_as_data() -> None:
    rs = load_assets().rubric_set()
    assert rs.fail_reasons({"legal_soundness": 2, "jurisdiction_awareness": 1}, {"hallucination": "clean"}) == []
    assert rs.fail_reasons({"legal_soundness": 1, "jurisdiction_awareness": 3}, {"hallucination": "clean"}) == [
        "legal_soundness <= 1"]
    assert rs.fail_reasons({"legal_soundness": 3, "jurisdiction_awareness": 0}, {"hallucination": "hallucinated"}) == [
        "hallucination = hallucinated", "jurisdiction_awareness = 0"]


def test_strict_undefined_names_the_variable() -> None:
    with pytest.raises(TemplateError, match="'prompt' is undefined"):
        load_assets().template("judge_user").render(response="x")


@pytest.mark.parametrize("attack", [
    "{{ ''.__class__.__mro__ }}",
    "{{ ''.__class__.__mro__[1].__subclasses__() }}",
    "{{ cycler.__init__.__globals__.os.popen('id').read() }}",
    "{{ x.__globals__ }}",
])
def test_sandbox_refuses_attribute_escapes(attack: str) -> None:
    with pytest.raises(TemplateError):
        out = render_string(attack, {"x": render_string}, name="evil")
        # Jinja's sandbox may render an unsafe attribute as undefined; StrictUndefined turns that
        # into an error, so reaching here means the escape produced output.
        pytest.fail(f"rendered: {out!r}")


def test_hashes_are_stable_across_processes() -> None:
    code = "from legal_judge.assets.catalogue import load_assets; print(sorted((r['name'], r['sha256']) for r in load_assets().listing()))"
    outs = {subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
            for _ in range(2)}
    assert len(outs) == 1 and "judge_system" in outs.pop()


def _copy_assets(tmp_path: Path) -> Path:
    root = tmp_path / "assets"
    shutil.copytree(asset_root() / "rubrics", root / "rubrics")
    shutil.copytree(asset_root() / "prompts", root / "prompts")
    return root


def test_unknown_rubric_key_refused_with_file_and_field(tmp_path: Path) -> None:
    root = _copy_assets(tmp_path)
    path = root / "rubrics" / "completeness.v1.yaml"
    path.write_text(path.read_text() + "weight: 3\n")
    with pytest.raises(InputError) as exc:
        load_assets(root)
    assert "completeness.v1.yaml" in str(exc.value) and "weight" in str(exc.value)


def test_bad_yaml_reports_line(tmp_path: Path) -> None:
    root = _copy_assets(tmp_path)
    (root / "rubrics" / "completeness.v1.yaml").write_text("name: completeness\nversion: [1\n")
    with pytest.raises(InputError) as exc:
        load_assets(root)
    assert exc.value.problems[0].line is not None


def test_unknown_version_names_the_available_ones() -> None:
    with pytest.raises(ConfigError, match="available versions: 1"):
        load_assets().template("judge_system@7")


def test_the_default_rubric_set_is_bundled_and_is_the_one_the_bundled_ensembles_name() -> None:
    # The TOML data files keep the set's name as a literal: they must agree with the constant.
    bundled = load_assets().rubric_set(DEFAULT_RUBRIC_SET)
    assert bundled.name == DEFAULT_RUBRIC_SET
    for name in bundled_names():
        assert load_ensemble_config(bundled_config(name)).rubric_set == DEFAULT_RUBRIC_SET, name


@pytest.mark.parametrize(("stored", "expected"), [
    ({"rubric_set": "team_set@2"}, "team_set@2"),
    ({"rubric_set": None}, DEFAULT_RUBRIC_SET),
    ({"rubric_set": ""}, DEFAULT_RUBRIC_SET),
    ({}, DEFAULT_RUBRIC_SET),
])
def test_a_stored_config_names_its_rubric_set_or_the_default(stored: dict[str, object],
                                                            expected: str) -> None:
    assert stored_rubric_set(stored) == expected
