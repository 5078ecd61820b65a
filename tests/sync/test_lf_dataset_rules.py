"""A dataset read from Langfuse obeys the rules of a dataset file (issue 20 item 16).

Items made in the Langfuse UI or by another tool never went through ``validate``: an id with a
control character broke the tables and exports, and ``expected_pass: "false"`` counted as a pass.
"""

from __future__ import annotations

import pytest
from standin import LangfuseStandin

from legal_judge.errors import InputError
from legal_judge.sync.langfuse_client import client_for
from legal_judge.sync.langfuse_datasets import load_langfuse_dataset
from legal_judge.sync.settings import require_settings


def _items(rows: list[tuple[str, object]]) -> None:
    """Create dataset items through the real SDK (validated by the stand-in)."""
    lf = client_for(require_settings()).lf
    lf.create_dataset(name="ui-made")
    for item_id, expected in rows:
        lf.create_dataset_item(dataset_name="ui-made",
                               input={"prompt": "Is a verbal lease valid?", "response": "Yes."},
                               metadata={"item_id": item_id, "expected_pass": expected})


def test_an_item_id_with_a_control_character_is_refused(standin: LangfuseStandin) -> None:
    _items([("fr-1", True), ("fr-\n2", False), ("fr-3\x1b", True)])
    with pytest.raises(InputError) as info:
        load_langfuse_dataset("ui-made")
    problems = info.value.problems
    assert [(p.file, p.line, p.field) for p in problems] == [
        ("langfuse:ui-made", 2, "metadata.item_id"), ("langfuse:ui-made", 3, "metadata.item_id")]
    text = str(info.value)
    assert "U+000A (a line break) at character 4" in text and "U+001B" in text
    assert "remove it" in text and "datasets push" in info.value.fix  # type: ignore[operator]
    assert info.value.exit_code == 2


def test_expected_pass_texts_are_booleans_and_others_refused(standin: LangfuseStandin) -> None:
    _items([("a", "false"), ("b", "Yes"), ("c", True)])
    items = load_langfuse_dataset("ui-made")
    assert [i.metadata["expected_pass"] for i in items] == [False, True, True]
    _items([("d", "maybe")])
    with pytest.raises(InputError, match=r"langfuse:ui-made:4: field 'metadata.expected_pass': "
                                         r"item \S+: \"maybe\" is not a verdict"):
        load_langfuse_dataset("ui-made")
