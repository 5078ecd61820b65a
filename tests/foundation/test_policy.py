"""The gate policy: lookup, overlay, tighten-only flags, explicit overrides, errors with lines."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path

import pytest
from click.testing import CliRunner

from legal_judge.cli import cli
from legal_judge.errors import ConfigError, InputError
from legal_judge.policy import BUNDLED_POLICY, POLICY_FILENAME, Policy, load_policy


def test_bundled_file_equals_model_defaults() -> None:
    # One source of truth: the file a user reads is what the code uses when no file is given.
    data = tomllib.loads(BUNDLED_POLICY.read_text(encoding="utf-8"))
    assert Policy.model_validate(data) == Policy()


def test_lookup_order(tmp_path: Path) -> None:
    bundled = load_policy(cwd=tmp_path)
    assert bundled.bundled and bundled.release.pass_rate_margin == 0.05
    (tmp_path / POLICY_FILENAME).write_text("[release]\npass_rate_margin = 0.02\n")
    found = load_policy(cwd=tmp_path)
    assert not found.bundled and found.path.endswith(POLICY_FILENAME)
    assert found.release.pass_rate_margin == 0.02
    # the rest keeps the defaults, key by key
    assert found.release.rubric_margin == 0.25 and found.certification.significance == 0.05
    assert found.sha256 != bundled.sha256
    other = tmp_path / "other.toml"
    other.write_text("[run]\nmax_inconclusive_share = 0.2\n")
    named = load_policy(other, cwd=tmp_path)
    assert named.run.max_inconclusive_share == 0.2 and named.release.pass_rate_margin == 0.05


def test_flags_tighten_but_never_loosen(tmp_path: Path) -> None:
    policy = load_policy(cwd=tmp_path)
    tighter = policy.with_settings({"certification.significance": 0.01})
    assert tighter.certification.significance == 0.01
    assert "tightened by flags: certification.significance=0.01 (policy 0.05)" in tighter.line()
    with pytest.raises(ConfigError) as err:
        policy.with_settings({"certification.significance": 0.5})
    assert err.value.code == "policy-loosened"
    assert "--override significance=0.5" in str(err.value)
    with pytest.raises(ConfigError):
        policy.with_settings({"certification.dimensions": ["position"]})
    with pytest.raises(ConfigError):
        policy.with_settings({"certification.allow_simulated": True})
    with pytest.raises(ConfigError):
        policy.with_settings({"release.on_cannot_tell": "pass"})
    # a None flag means "not given"
    assert policy.with_settings({"certification.significance": None}) is policy
    # a requirement is stricter when true: requiring it is a tightening, dropping it a loosening
    required = policy.with_settings({"validation.require_of_record": True})
    assert required.policy.validation.require_of_record is True
    (tmp_path / "strict.toml").write_text("[validation]\nrequire_of_record = true\n", "utf-8")
    strict = load_policy(tmp_path / "strict.toml", cwd=tmp_path)
    with pytest.raises(ConfigError):
        strict.with_settings({"validation.require_of_record": False})
    dropped = strict.with_settings(overrides=["require_of_record=false"])
    assert [o.loosens for o in dropped.explicit()] == [True]


def test_a_list_override_is_written_as_the_flags_write_lists(tmp_path: Path) -> None:
    # Walk of the audit area: `--override probes=hedge_only,missing_elements` (as `--probes`
    # takes them) was refused with "field 'certification.probes.literal['all']': Input should
    # be 'all'" and "Input should be a valid tuple", naming no way to write a list.
    policy = load_policy(cwd=tmp_path).with_settings(overrides=[
        "probes=hedge_only, missing_elements", "dimensions=verbosity",
        'critical_ids=["a", "b"]'])
    assert policy.certification.probes == ("hedge_only", "missing_elements")
    assert policy.certification.dimensions == ("verbosity",)
    assert policy.release.critical_ids == ("a", "b")
    assert load_policy(cwd=tmp_path).with_settings(
        overrides=["probes=all"]).certification.probes == "all"


def test_override_loosens_and_is_recorded(tmp_path: Path) -> None:
    policy = load_policy(cwd=tmp_path).with_settings(overrides=["significance=0.5",
                                                                "release.on_cannot_tell=pass"])
    assert policy.certification.significance == 0.5
    assert policy.release.on_cannot_tell == "pass"
    lines = policy.override_lines()
    assert "policy override: certification.significance=0.5 (policy 0.05)" in lines
    assert "policy override: release.on_cannot_tell=pass (policy fail)" in lines
    data = policy.as_dict("certification")
    assert data["settings"]["significance"] == 0.5
    assert {o["key"] for o in data["overrides"] if o["loosens"]} == {
        "certification.significance", "release.on_cannot_tell"}
    props = dict(policy.properties("certification"))
    assert props["policy override certification.significance"] == "certification.significance=0.5 (policy 0.05)"
    json.dumps(data)


@pytest.mark.parametrize("text", ["nokey=1", "significance", "=3", "margin=0.1"])
def test_bad_override_names_the_fix(tmp_path: Path, text: str) -> None:
    with pytest.raises(ConfigError) as err:
        load_policy(cwd=tmp_path).with_settings(overrides=[text])
    assert err.value.fix


def test_file_defects_name_file_line_and_field(tmp_path: Path) -> None:
    bad = tmp_path / "p.toml"
    bad.write_text("[release]\npass_rate_margin = 0.05\nrubric_margn = 0.3\n"
                   "[certification]\nsignificance = 2\n")
    with pytest.raises(InputError) as err:
        load_policy(bad)
    text = str(err.value)
    assert f"{bad}:3: field 'release.rubric_margn': unknown key" in text
    assert f"{bad}:5: field 'certification.significance'" in text
    (tmp_path / "syntax.toml").write_text("[release\n")
    with pytest.raises(InputError) as err:
        load_policy(tmp_path / "syntax.toml")
    assert ":1:" in str(err.value)
    with pytest.raises(ConfigError) as missing:
        load_policy(tmp_path / "nope.toml")
    assert missing.value.code == "policy-not-found"


def test_policy_show_cli(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    runner = CliRunner()
    out = runner.invoke(cli, ["policy", "show"])
    assert out.exit_code == 0, out.output
    assert "policy: bundled default (sha256 " in out.output
    assert "pass_rate_margin = 0.05" in out.output
    # what it prints is TOML a team can copy into its policy file (it printed `False`)
    body = "\n".join(line.strip() for line in out.output.splitlines()[1:])
    assert tomllib.loads(body)["release"]["use_corrected"] is False
    shown = runner.invoke(cli, ["policy", "show", "--json"])
    assert json.loads(shown.output)["settings"]["release"]["rubric_margin"] == 0.25
    missing = runner.invoke(cli, ["policy", "show", "--policy", "nope.toml"])
    assert missing.exit_code == 2 and "does not exist" in missing.output
