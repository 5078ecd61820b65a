"""Journey: push a benchmark to Langfuse, then run it the way the push told us (issue 20, 18).

Before the fix the hint said ``run it with --dataset langfuse:NAME``; ``run`` has no such option,
so the command a user copied failed with "No such option: --dataset".
"""

from __future__ import annotations

import importlib.util
import json
import shlex
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import pytest

from .conftest import Journey


def _standin_module() -> ModuleType:
    # tests/sync is not a package; its conftest imports the module as "standin".
    if "standin" not in sys.modules:
        path = Path(__file__).parents[1] / "sync" / "standin.py"
        spec = importlib.util.spec_from_file_location("standin", path)
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules["standin"] = module
        spec.loader.exec_module(module)
    return sys.modules["standin"]


@pytest.fixture
def langfuse_env() -> Iterator[dict[str, str]]:
    standin = _standin_module()
    server = standin.LangfuseStandin().start()
    try:
        yield {"LANGFUSE_PUBLIC_KEY": standin.PUBLIC_KEY, "LANGFUSE_SECRET_KEY": standin.SECRET_KEY,
               "LANGFUSE_BASE_URL": server.base_url, "LANGFUSE_TIMEOUT": "5"}
    finally:
        server.stop()


def test_push_then_run_the_printed_command(journey: Journey, langfuse_env: dict[str, str]) -> None:
    journey.env.update(langfuse_env)
    bench = journey.cwd / "gold.jsonl"
    rows = [{"id": f"fr-{i}", "prompt": f"Le contrat {i} est-il valable ?",
             "response": "Oui, article 1103 du Code civil.", "jurisdiction": "France"}
            for i in range(3)]
    bench.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    pushed = journey("datasets", "push", str(bench), "--name", "gold-fr")
    # Defect 18: the hint was "(run it with --dataset langfuse:gold-fr)", an option `run` does
    # not have (`legal-judge run --dataset langfuse:gold-fr` exits 2: "No such option").
    hint = next((line.strip() for line in pushed.out.splitlines()
                 if line.strip().startswith("legal-judge run")), None)
    assert hint is not None and "--dataset" not in hint, pushed.describe()
    journey(*shlex.split(hint)[1:], "--ensemble", "demo", "--quiet")
    ((run_id, dataset),) = journey.query("SELECT id, json_extract(config_json, '$.dataset') "
                                         "FROM runs")
    assert dataset == "langfuse:gold-fr"
    assert journey.query("SELECT COUNT(*) FROM ensemble_results WHERE run_id = ?",
                         run_id) == [(3,)]
