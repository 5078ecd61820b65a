"""The pytest plugin: ``legal_judge`` fixture, ``assert_judged`` and the ``legal_judge_audited`` marker.

Inner test runs go through ``pytester`` with ``-p legal_judge.pytest_plugin`` (so they pass whether
or not the package's entry point is installed in the venv); one subprocess run loads the plugin
only through a ``pytest11`` entry point, as ``pip install`` registers it.
"""

from __future__ import annotations

import subprocess
import sys
import tomllib
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner

# In-process pytester runs drop the modules an inner run imported; C extensions (numpy) cannot be
# imported twice, so everything the inner runs use is imported here first.
import legal_judge.audit.history
import legal_judge.audit.target
import legal_judge.benchmark.single  # noqa: F401
from legal_judge.cli import cli
from legal_judge.store import Store

pytest_plugins = ["pytester"]

ROOT = Path(__file__).resolve().parents[2]
PLUGIN = "legal_judge.pytest_plugin"

def _ini(pytester: pytest.Pytester, extra: str = "") -> None:
    pytester.makeini("[pytest]\nasyncio_default_fixture_loop_scope = function\n" + extra)


SIMULATED_TESTS = '''
from legal_judge.dataset import load_dataset, sample_dataset_path

ITEMS = {i.id: i for i in load_dataset(sample_dataset_path())}


def test_sound_answer(legal_judge):
    item = ITEMS["us-fed-001"]
    judged = legal_judge.assert_judged(item.prompt, item.response, jurisdiction=item.jurisdiction,
                                       min_scores={"legal_soundness": 3})
    assert judged.result.overall == "pass"


def test_invented_case(legal_judge):
    item = ITEMS["us-fed-004"]
    legal_judge.assert_judged(item.prompt, item.response, jurisdiction=item.jurisdiction)
'''


def test_assert_judged_passes_and_fails_with_each_judges_reasons(pytester: pytest.Pytester) -> None:
    _ini(pytester, "legal_judge_ensemble = demo\n")
    pytester.makepyfile(test_answers=SIMULATED_TESTS)
    result = pytester.runpytest("-p", PLUGIN)
    result.assert_outcomes(passed=1, failed=1)
    out = result.stdout.str()
    assert "test_invented_case" in out and "legal-judge: the answer did not meet the rule(s)" in out
    # The rule that failed, then every judge with its scores and rationales.
    assert "must_pass: the ensemble says fail" in out and "hallucination = hallucinated" in out
    for judge in ("gpt-4o (simulated)", "gemini-2.5-pro (simulated)", "mistral-large (simulated)"):
        assert f"judge {judge}" in out
    assert "    citation_quality 0:" in out and "hallucination hallucinated:" in out
    assert "not stored (assert_judged(..., save=True) stores it)" in out
    # Issue 29: assert_judged stores nothing by default: its answers do not fill `runs list`.
    assert Store().list_runs() == []


def test_assert_judged_with_save_stores_a_one_item_run(pytester: pytest.Pytester) -> None:
    _ini(pytester, "legal_judge_ensemble = demo\n")
    pytester.makepyfile(test_saved='''
from legal_judge.dataset import load_dataset, sample_dataset_path

def test_saved(legal_judge):
    item = next(i for i in load_dataset(sample_dataset_path()) if i.id == "us-fed-001")
    legal_judge.assert_judged(item.prompt, item.response, jurisdiction=item.jurisdiction, save=True)
''')
    pytester.runpytest("-p", PLUGIN).assert_outcomes(passed=1)
    runs = Store().list_runs()
    assert len(runs) == 1 and runs[0]["items"] == 1 and runs[0]["results"] == 1


def test_assert_judged_rejects_an_unknown_rubric(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_bad='''
def test_typo(legal_judge):
    legal_judge.assert_judged("q", "a", ensemble="demo", min_scores={"legal_sondness": 3})
''')
    _ini(pytester)
    result = pytester.runpytest("-p", PLUGIN)
    result.assert_outcomes(failed=1)
    assert "min_scores needs numeric rubrics, not legal_sondness" in result.stdout.str()
    assert Store().list_runs() == []  # refused before any judge was called


@pytest.fixture
def stub_ensemble(tmp_path: Path) -> Iterator[Path]:
    proc = subprocess.Popen([sys.executable, "-m", "legal_judge.devtools.openai_stub", "--port", "0",
                             "--latency-ms", "5"], stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    url = f"http://127.0.0.1:{proc.stdout.readline().split()[1]}/v1"
    judges = "".join(f'\n[[judges]]\nspec = "openai-compatible:{m}@{url}"\n'
                     for m in ("gpt-4o", "gemini-2.5-pro", "mistral-large-latest"))
    path = tmp_path / "stub.toml"
    path.write_text(f"name = 'stub'\nrun_checks = false\n{judges}", encoding="utf-8")
    yield path
    proc.terminate()
    proc.wait(10)


def test_assert_judged_over_real_http_judges(pytester: pytest.Pytester, stub_ensemble: Path) -> None:
    pytester.makepyfile(test_stub=f'''
ENSEMBLE = {str(stub_ensemble)!r}
PROMPT = "Is a verbal lease of a flat for two years valid in England?"
ANSWER = "No: a lease over three years must be made by deed (s.52 LPA 1925); two years is fine."


def test_passes(legal_judge):
    judged = legal_judge.assert_judged(PROMPT, ANSWER, ensemble=ENSEMBLE,
                                       rubrics=["legal_soundness"])
    assert len(judged.verdicts) == 3


def test_floor_too_high(legal_judge):
    legal_judge.assert_judged(PROMPT, ANSWER, ensemble=ENSEMBLE,
                              min_scores={{"legal_soundness": 5.5}})
''')
    _ini(pytester)
    result = pytester.runpytest("-p", PLUGIN)
    result.assert_outcomes(passed=1, failed=1)
    out = result.stdout.str()
    assert "min_scores: legal_soundness" in out and "< 5.5" in out
    assert "openai-compatible:gpt-4o@http://127.0.0.1" in out and ": stub" in out  # rationales


def _audit(judge: str) -> None:
    res = CliRunner().invoke(cli, ["audit", "run", "--judge", judge, "--dimensions", "verbosity",
                                   "--pairs", "20", "--noise-pairs", "4"])
    assert res.exit_code == 0, res.output


def test_audited_marker_needs_a_passing_audit(pytester: pytest.Pytester) -> None:
    _audit("simulated:fair")          # certified: passes the gate
    _audit("simulated:demo-openai")   # verbosity-biased: never passes, whatever the severity
    pytester.makepyfile(test_gate='''
import pytest


@pytest.mark.legal_judge_audited(judge="simulated:fair")
def test_fair():
    pass


@pytest.mark.legal_judge_audited(judge="simulated:demo-openai")
def test_biased():
    pass


@pytest.mark.legal_judge_audited(judge="simulated:demo-google")
def test_never_audited():
    pass


@pytest.mark.legal_judge_audited(judge="simulated:demo-openai", max_severity="critical")
def test_biased_is_not_tolerated_by_a_higher_severity():
    pass
''')
    _ini(pytester)
    # The marker finds the policy as `audit gate` does (./legal-judge.policy.toml): these audits
    # are small and simulated, and this reviewed file says that is enough here.
    pytester.path.joinpath("legal-judge.policy.toml").write_text(
        '[certification]\npairs = 20\ndimensions = ["verbosity"]\nallow_simulated = true\n')
    result = pytester.runpytest("-p", PLUGIN)
    result.assert_outcomes(passed=1, failed=3)
    out = " ".join(result.stdout.str().split())
    assert "does not pass the gate: the verdict is biased, and only certified passes; flagged "\
        "dimensions: verbosity" in out
    assert "has no bias audit in" in out and "legal-judge audit run --judge simulated:demo-google" in out
    # A marker's max_severity may only tighten the policy, as the CLI flag.
    assert "max-severity critical loosens the policy" in out
    # Without the file, the bundled policy: the same check as `audit gate` refuses the audit.
    pytester.path.joinpath("legal-judge.policy.toml").unlink()
    strict = pytester.runpytest("-p", PLUGIN, "-k", "test_fair")
    strict.assert_outcomes(failed=1)
    out = " ".join(strict.stdout.str().split())
    assert "simulated judge: not a judge of record (simulated:fair)" in out
    assert "pairs 20 < policy 30" in out
    assert "dimensions missing: position, authority, formatting" in out


def test_the_entry_point_is_declared_under_the_modules_name() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    assert project["entry-points"]["pytest11"] == {PLUGIN: PLUGIN}


def test_an_installed_entry_point_loads_the_plugin_once(pytester: pytest.Pytester,
                                                         tmp_path: Path,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    # What `pip install` writes: a dist-info with the pytest11 entry point of pyproject.toml.
    site = tmp_path / "site"
    dist = site / "legal_judge_ep-0.0.0.dist-info"
    dist.mkdir(parents=True)
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: legal-judge-ep\nVersion: 0.0.0\n")
    (dist / "entry_points.txt").write_text(f"[pytest11]\n{PLUGIN} = {PLUGIN}\n")
    pytester.makepyfile(test_fixture='''
def test_fixture_is_there(legal_judge):
    assert legal_judge.ensemble == "default"
''')
    _ini(pytester)
    monkeypatch.setenv("PYTHONPATH", f"{site}:{ROOT}")
    by_entry_point = pytester.runpytest_subprocess()
    by_entry_point.assert_outcomes(passed=1)
    both = pytester.runpytest_subprocess("-p", PLUGIN)  # entry point and -p: no double load
    both.assert_outcomes(passed=1)
    disabled = pytester.runpytest_subprocess("-p", f"no:{PLUGIN}")
    disabled.assert_outcomes(errors=1)
    assert "fixture 'legal_judge' not found" in disabled.stdout.str()
