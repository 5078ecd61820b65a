"""Journey: a spreadsheet-made benchmark, validated, run, and the same items read from Langfuse.

validate a file whose expected_pass says "false"/"Yes" as text (warned, line and field) -> a typo
("maybe") is refused (exit 2) -> run: the agreement with the lawyers is the same as with real
booleans (it counted every "false" as a pass) -> push to Langfuse, where someone edits an item id
to hold a line break -> run langfuse:NAME refuses it by item and field (exit 2), as validate does.

Defects: ``summary._expected_agreement`` read ``expected_pass`` with ``bool()``; ids with control
characters were refused by ``validate`` but accepted from Langfuse (issue 20 item 16).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from legal_judge.dataset import sample_dataset_path

from .conftest import Journey
from .test_datasets_push import _standin_module

TEXTS = {True: ("true", "Yes", "PASS"), False: ("false", "No", "FAIL")}


@pytest.fixture
def standin() -> Iterator[Any]:
    server = _standin_module().LangfuseStandin().start()
    try:
        yield server
    finally:
        server.stop()


def _write(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), "utf-8")
    return path


def _agreement(text: str) -> str:
    m = re.search(r"agreement with the lawyers' conclusions in the dataset: .*?should pass: \d+",
                  " ".join(text.split()))
    assert m, text
    return m[0]


def test_expected_pass_as_text_and_ids_from_langfuse(journey: Journey, standin: Any) -> None:
    rows = [json.loads(line) for line in sample_dataset_path().read_text("utf-8").splitlines()
            if line.strip()][:12]
    texts = [{**r, "metadata": {**r["metadata"], "expected_pass": TEXTS[
        r["metadata"]["expected_pass"]][k % 3]}} for k, r in enumerate(rows)]
    bools = _write(journey.cwd / "bools.jsonl", rows)
    sheet = _write(journey.cwd / "sheet.jsonl", texts)

    checked = journey("validate", str(sheet))
    said = " ".join(checked.out.split())
    assert "valid" in said and said.count("warning:") == 11, checked.describe()
    assert "sheet.jsonl:3: field 'metadata.expected_pass': the text \"FAIL\" is read as false" \
        in said, checked.describe()
    assert "and 2 more rows" in said
    typo = _write(journey.cwd / "typo.jsonl", [*texts[:4], {**texts[4], "metadata": {
        **texts[4]["metadata"], "expected_pass": "maybe"}}])
    refused = journey("validate", str(typo), expect=2)
    assert "typo.jsonl:5: field 'metadata.expected_pass': \"maybe\" is not a verdict" in \
        " ".join(refused.text.split()), refused.describe()

    as_bools = journey("run", str(bools), "--ensemble", "demo", "--run-id", "bools")
    as_texts = journey("run", str(sheet), "--ensemble", "demo", "--run-id", "texts")
    assert _agreement(as_texts.out) == _agreement(as_bools.out)
    fails = sum(not r["metadata"]["expected_pass"] for r in rows)
    stored = json.loads(journey.query("SELECT summary_json FROM runs WHERE id = 'texts'")[0][0])
    agreement = stored["expected_agreement"]
    assert agreement["false_pass"] <= fails and agreement["n"] == 12
    assert json.loads(journey.query("SELECT item_json FROM items WHERE run_id = 'texts' AND "
                                    "item_id = ?", rows[2]["id"])[0][0])["metadata"][
        "expected_pass"] is False

    env = {"LANGFUSE_PUBLIC_KEY": _standin_module().PUBLIC_KEY,
           "LANGFUSE_SECRET_KEY": _standin_module().SECRET_KEY,
           "LANGFUSE_BASE_URL": standin.base_url, "LANGFUSE_TIMEOUT": "5"}
    journey.env.update(env)
    journey("datasets", "push", str(bools), "--name", "gold")
    # Someone edits an item in the Langfuse UI: its id now holds a line break.
    edited = next(i for i in standin.state.dataset_items.values()
                  if i["metadata"]["item_id"] == rows[1]["id"])
    edited["metadata"] = {**edited["metadata"], "item_id": "us-fed\n-002"}
    bad = journey("run", "langfuse:gold", "--ensemble", "demo", "--quiet", expect=2)
    said = " ".join(bad.text.split())
    assert "langfuse:gold:2: field 'metadata.item_id'" in said, bad.describe()
    assert "U+000A (a line break) at character 7" in said and "remove it" in said
    assert "datasets push" in said
    assert journey.query("SELECT COUNT(*) FROM runs WHERE id NOT IN ('bools', 'texts') "
                         "AND kind = 'run'") == [(0,)]
