"""One ensemble validation for `run` and `doctor`: every problem at once, before a run exists.

Issue 20 items 9 (doctor passed a broken ensemble; run named one of three missing keys),
10 (judge URLs were not validated) and 15 (a file in the working directory shadowed a bundled
ensemble name).
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from legal_judge.benchmark.ensemble_check import EnsembleInvalid, check_ensemble
from legal_judge.benchmark.ensemble_config import (
    EnsembleConfig,
    bundled_config,
    load_ensemble_config,
    resolve_ensemble_path,
)
from legal_judge.benchmark.runner import run_benchmark
from legal_judge.dataset import load_dataset, sample_dataset_path
from legal_judge.doctor import run_doctor
from legal_judge.errors import ConfigError, InputError
from legal_judge.judge.config import JudgeConfig
from legal_judge.providers.base import ProviderOptions, parse_spec, url_problem
from legal_judge.store import Store

BAD_URLS = {
    "http://127.0.0.1:notaport/v1": "the port is not a number",
    "http://[::1": "an IPv6 address must be closed with ']'",
    "http://127.0.0.1:70000/v1": "the port is above 65535",
    "http:///v1": "it names no host",
    "http://127.0.0.1:0/v1": "the port is 0",
}


@pytest.mark.parametrize(("url", "why"), list(BAD_URLS.items()))
def test_malformed_server_urls_are_refused_when_the_spec_is_read(url: str, why: str) -> None:
    assert url_problem(url) == why
    with pytest.raises(ConfigError) as exc:
        parse_spec(f"openai-compatible:m@{url}")
    assert exc.value.code == "provider-url-invalid" and why in exc.value.message
    assert exc.value.fix is not None and "http://127.0.0.1:8000/v1" in exc.value.fix
    with pytest.raises(ValueError, match="malformed URL"):
        ProviderOptions(base_url=url)


@pytest.mark.parametrize("url", ["http://127.0.0.1:8000/v1", "https://api.example.com/v1",
                                 "http://[::1]:8080/v1", "http://localhost:11434/v1"])
def test_well_formed_urls_pass(url: str) -> None:
    assert url_problem(url) is None
    assert parse_spec(f"openai-compatible:llama3.1:70b@{url}").base_url == url


def _config(*specs: str, **extra: object) -> EnsembleConfig:
    return EnsembleConfig(judges=[JudgeConfig(spec=s) for s in specs], quorum=1, **extra)  # type: ignore[arg-type]


def test_every_problem_of_every_judge_is_reported_at_once() -> None:
    config = _config("openia:gpt-4o", "openai:gpt-4o", "gemini:gemini-2.5-pro",
                     "openai-compatible:m@http://[::1", "simulated:demo-google")
    found = check_ensemble(config)
    by_code = [(p.position, p.code) for p in found.problems]
    assert by_code == [(1, "provider-unknown"), (2, "missing-key"), (3, "missing-key"),
                       (4, "provider-url-invalid")]
    unknown = found.problems[0]
    assert "did you mean 'openai'" in unknown.message
    assert unknown.fix is not None and "anthropic" in unknown.fix and "simulated" in unknown.fix
    assert {p.env_var for p in found.problems if p.code == "missing-key"} == {
        "OPENAI_API_KEY", "GEMINI_API_KEY"}
    assert [j.label for j in found.judges] == ["simulated:demo-google"]
    with pytest.raises(EnsembleInvalid) as exc:
        found.judges_or_raise()
    text = str(exc.value)
    assert "4 problems" in text and "OPENAI_API_KEY" in text and "GEMINI_API_KEY" in text
    assert "legal-judge doctor --ensemble" in text and exc.value.exit_code == 2


def test_invalid_options_do_not_hide_the_missing_key() -> None:
    config = _config("simulated:demo-google").model_copy(update={"judges": [
        JudgeConfig(spec="openai:gpt-4o", options={"base_url": "http://x:99999"})]})
    found = check_ensemble(config)
    assert [p.code for p in found.problems] == ["judge-options-invalid", "missing-key"]
    assert "options.base_url" in found.problems[0].message and found.judges == []


def test_run_with_the_default_ensemble_and_no_keys_names_all_three_and_stores_nothing() -> None:
    items = load_dataset(sample_dataset_path())[:2]
    store = Store()
    with pytest.raises(EnsembleInvalid) as exc:
        asyncio.run(run_benchmark(items, load_ensemble_config("default"), store=store))
    assert {p.env_var for p in exc.value.problems} == {
        "OPENAI_API_KEY", "GEMINI_API_KEY", "MISTRAL_API_KEY"}
    assert exc.value.source == "default"
    assert store.list_runs() == []


def test_run_refuses_a_bad_url_before_any_other_judge_is_paid(tmp_path: Path) -> None:
    cfg = tmp_path / "url.toml"
    cfg.write_text('[[judges]]\nspec = "simulated:demo-google"\n[[judges]]\nname = "local"\n'
                   'spec = "openai-compatible:m@http://127.0.0.1:notaport/v1"\n', encoding="utf-8")
    store = Store()
    with pytest.raises(EnsembleInvalid) as exc:
        asyncio.run(run_benchmark(load_dataset(sample_dataset_path())[:2],
                                  load_ensemble_config(cfg), store=store))
    text = str(exc.value)
    assert str(cfg) in text and "judge 2 'local'" in text and "port is not a number" in text
    assert store.list_runs() == [] and store.db.execute(
        "SELECT COUNT(*) FROM judge_calls").fetchone()[0] == 0


def test_doctor_reports_what_run_refuses(tmp_path: Path) -> None:
    cfg = tmp_path / "typo.toml"
    cfg.write_text('[[judges]]\nspec = "openia:gpt-4o"\n[[judges]]\nspec = "simulated:demo-google"\n'
                   '[[judges]]\nspec = "openai-compatible:m@http:///v1"\n', encoding="utf-8")
    result = run_doctor(ensemble=str(cfg), timeout_s=1)
    names = [(c.name, c.detail) for c in result.problems]
    assert len(names) == 2, names
    assert names[0][0] == "judge 1 'openia:gpt-4o'" and "unknown provider 'openia'" in names[0][1]
    assert str(cfg) in names[0][1]
    assert names[1][0] == "judge 3" and "names no host" in names[1][1]


def test_doctor_names_a_missing_ensemble_file_with_a_fix_that_fits(tmp_path: Path) -> None:
    result = run_doctor(ensemble=str(tmp_path / "nofile.toml"), timeout_s=1)
    (problem,) = result.problems
    assert "does not exist" in problem.detail
    assert problem.fix is not None and "correct the lines" not in problem.fix
    assert "default, demo" in problem.fix


def test_a_bundled_name_wins_over_a_file_of_that_name(tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "demo").write_text("", encoding="utf-8")
    assert resolve_ensemble_path("demo") == bundled_config("demo")
    assert load_ensemble_config("demo").name == "demo"
    # A path is a path: ./demo (or anything ending in .toml) reads the file.
    with pytest.raises(InputError, match="field 'judges'"):
        load_ensemble_config("./demo")
    (tmp_path / "mine").write_text("quorum = 1\n[[judges]]\nspec = \"simulated:demo-google\"\n",
                                    encoding="utf-8")
    assert load_ensemble_config("mine").judges[0].spec == "simulated:demo-google"


def test_an_ensemble_that_is_neither_bundled_nor_a_file(tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    with pytest.raises(ConfigError) as exc:
        load_ensemble_config("defualt")
    assert exc.value.code == "ensemble-not-found" and "no bundled ensemble" in exc.value.message
    assert exc.value.fix is not None and "default, demo" in exc.value.fix


def test_an_ensemble_file_s_defects_name_their_lines(tmp_path: Path) -> None:
    """The contract of exit 2 is file, line, field and fix: an ensemble's defects named the
    field only ("bad.toml: field 'judges.1.wieght': unknown key"), under "correct the lines
    listed above"; and a check of the whole file kept pydantic's "Value error, " prefix."""
    def problems(name: str, text: str) -> list[tuple[int | None, str | None, str]]:
        (tmp_path / name).write_text(text, encoding="utf-8")
        with pytest.raises(InputError) as exc:
            load_ensemble_config(tmp_path / name)
        return sorted((p.line, p.field, p.message) for p in exc.value.problems)

    assert problems("bad.toml", 'name = "x"\nquorum = 2\nweights = 3\n[[judges]]\n'
                    'spec = "simulated:demo-openai"\nweight = -1\n[[judges]]\n'
                    'spec = "simulated:demo-google"\nwieght = 2\n') == [
        (3, "weights", "unknown key"), (6, "judges.0.weight", "Input should be greater than 0"),
        (9, "judges.1.wieght", "unknown key")]
    assert problems("one.toml", 'quorum = 2\n[[judges]]\nspec = "simulated:demo-openai"\n') == [
        (None, None, "quorum 2 exceeds the number of judges (1)")]
