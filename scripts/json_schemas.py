"""Draft the JSON Schema of each command's ``--json`` document from sample documents.

Usage (after a shape changed on purpose)::

    LEGAL_JUDGE_JSON_SAMPLES=/tmp/samples pytest tests/cli/test_json_outputs.py
    python scripts/json_schemas.py /tmp/samples [COMMAND-FILE-PREFIX ...]

Writes ``legal_judge/data/schemas/<command>.schema.json`` for each command sampled (or only the
named ones). The draft is deliberately loose where one sample cannot know: a value seen only as
null is unconstrained, objects accept keys not seen, and only the document's top-level keys are
required. An existing schema keeps its ``description`` (written by hand: review the draft and
say what the document is); a schema with ``anyOf`` (a command with several documents) is left
alone.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any

SCHEMAS = Path(__file__).resolve().parents[1] / "legal_judge" / "data" / "schemas"
DIALECT = "https://json-schema.org/draft/2020-12/schema"
#: A field name; an object with any other key is a map keyed by data (judge names, judge_ids,
#: run ids, item ids), described by its values, not by the keys one sample happened to have.
FIELD = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def _type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    return "object"


def infer(values: list[Any], depth: int = 0) -> dict[str, Any]:
    """A schema every value of ``values`` satisfies (``depth`` 0: the document's top level)."""
    types = sorted({_type(v) for v in values})
    if types in ([], ["null"]):
        return {}
    out: dict[str, Any] = {"type": types[0] if len(types) == 1 else types}
    objects = [v for v in values if isinstance(v, dict)]
    if objects and any(not FIELD.match(k) for o in objects for k in o):
        out["additionalProperties"] = infer([x for o in objects for x in o.values()], depth + 1)
    elif objects:
        keys = list(dict.fromkeys(k for o in objects for k in o))
        out["properties"] = {k: infer([o[k] for o in objects if k in o], depth + 1)
                             for k in keys}
        if depth == 0:
            out["required"] = [k for k in keys if all(k in o for o in objects)]
    arrays = [v for v in values if isinstance(v, list)]
    if arrays:
        # An array's items are at the array's own depth: a list document's rows keep their keys.
        items = [x for a in arrays for x in a]
        out["items"] = infer(items, depth) if items else {}
    return out


def main(argv: list[str]) -> None:
    samples, only = Path(argv[0]), set(argv[1:])
    by_command: dict[str, list[Any]] = {}
    for path in sorted(samples.glob("*.json")):
        command = path.name.split(".")[0]  # the stem of the command's schema file
        by_command.setdefault(command, []).append(json.loads(path.read_text("utf-8")))
    SCHEMAS.mkdir(parents=True, exist_ok=True)
    for command, docs in sorted(by_command.items()):
        if only and command not in only:
            continue
        target = SCHEMAS / f"{command}.schema.json"
        old = json.loads(target.read_text("utf-8")) if target.is_file() else {}
        if "anyOf" in old:  # several documents (check): composed by hand from drafts
            print(f"kept {target.name} (anyOf, composed by hand)")
            continue
        schema = {"$schema": DIALECT, "$id": f"legal-judge:{command}.schema.json",
                  "title": f"legal-judge --json: {command}",
                  "description": old.get("description", "TODO: what this document is"),
                  **infer(docs)}
        target.write_text(json.dumps(schema, indent=1, ensure_ascii=False) + "\n", "utf-8")
        print(f"wrote {target.name} ({len(docs)} sample(s))")


if __name__ == "__main__":
    main(sys.argv[1:])
