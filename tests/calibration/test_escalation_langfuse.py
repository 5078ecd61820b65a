"""The escalated items reach the lawyers through Langfuse and come back with their comments.

Through the real SDK against the local API stand-in (``tests/sync/standin.py``): the queue
holds the escalated traces with the lawyers' own score configs (``human.<rubric>`` and
``human.overall``, never the judges' names); importing the queue keeps the lawyers' comments and
completes the run's combined figures.
"""

from __future__ import annotations

import csv
import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "sync"))

from standin import PUBLIC_KEY, SECRET_KEY, LangfuseStandin  # noqa: E402

from legal_judge.calibration import draw_sample  # noqa: E402
from legal_judge.store import Store  # noqa: E402
from legal_judge.sync.plan import item_trace_id  # noqa: E402


@pytest.fixture
def standin(monkeypatch: pytest.MonkeyPatch) -> Iterator[LangfuseStandin]:
    server = LangfuseStandin().start()
    monkeypatch.setenv("LANGFUSE_PUBLIC_KEY", PUBLIC_KEY)
    monkeypatch.setenv("LANGFUSE_SECRET_KEY", SECRET_KEY)
    monkeypatch.setenv("LANGFUSE_BASE_URL", server.base_url)
    monkeypatch.setenv("LANGFUSE_TIMEOUT", "2")
    yield server
    server.stop()


def _passes(truth: Any, item_id: str) -> bool:
    s = truth.scores[item_id]
    return not (truth.hallucination[item_id] == "hallucinated" or s["legal_soundness"] <= 1
                or s["jurisdiction_awareness"] == 0)


def test_escalation_queue_then_import_keeps_comments(store: Store, make_run: Any,
                                                     standin: LangfuseStandin, invoke: Any,
                                                     home: Path) -> None:
    truth = make_run(store, "r1", n_items=70, bias=0.0, seed=4)
    sample = draw_sample(store, "r1", n=50, seed=1)
    labels = home / "labels.csv"
    with labels.open("w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh)
        w.writerow(["item_id", "run_id", "rubric", "score", "annotator", "labeled_at"])
        for s in sample.items:
            w.writerow([s.item_id, "r1", "pass_fail",
                        "pass" if _passes(truth, s.item_id) else "fail", "lawyer-1",
                        "2026-11-20"])
    assert invoke("calibrate", "import", str(labels), "--run", "r1").exit_code == 0

    # 50 labels cannot guarantee 95% (59 needed): every unlabelled item is escalated
    res = invoke("calibrate", "escalate", "r1", "--target", "0.95", "--out",
                 str(home / "esc.csv"), "--json")
    assert res.exit_code == 1, res.output
    report = json.loads(res.output[:res.output.rindex("}") + 1])
    escalated = report["escalated"]
    assert len(escalated) == 20 and report["annotation_queue"]
    # the run's split figures reach Langfuse as run-level scores on its session
    assert invoke("sync").exit_code == 0

    def split() -> dict[str, Any]:
        return {sc["name"]: sc for sc in standin.state.scores.values()
                if sc.get("sessionId") == "r1" and sc["name"] in (
                    "run.pass_rate.judge_decided", "run.pending_review", "run.pass_rate.combined")}

    first = split()
    assert first["run.pending_review"]["value"] == 20
    assert first["run.pending_review"]["metadata"]["escalation_id"] == report["escalation_id"]
    # nothing was guaranteed at 95%: the judges decide nothing, and nothing is combined yet
    assert set(first) == {"run.pending_review"}
    (queue,) = standin.state.queues.values()
    names = {standin.state.score_configs[c]["name"] for c in queue["scoreConfigIds"]}
    assert {"human.overall", "human.legal_soundness", "human.hallucination"} <= names
    assert all(n.startswith("human.") for n in names)  # never the judges' names
    assert {i["objectId"] for i in queue["items"]} == {item_trace_id("r1", i) for i in escalated}

    for item_id in escalated:
        standin.annotate(trace_id=item_trace_id("r1", item_id), name="human.overall",
                         author="lawyer-2", queue_id=report["annotation_queue"],
                         value=1 if _passes(truth, item_id) else 0,
                         comment=f"checked {item_id} against the statute")
    imported = invoke("calibrate", "import", "--from-langfuse", "--queue",
                      report["annotation_queue"])
    assert imported.exit_code == 0, imported.output
    assert f"imported {len(escalated)} labels on {len(escalated)} items" in imported.output
    assert f"and {len(escalated)} comment(s)" in imported.output
    stored = dict(store.db.execute("SELECT item_id, comment FROM label_comments "
                                   "WHERE annotator = 'lawyer-2'").fetchall())
    assert stored == {i: f"checked {i} against the statute" for i in escalated}
    rubrics = {r for (r,) in store.db.execute(
        "SELECT DISTINCT rubric FROM human_labels WHERE annotator = 'lawyer-2'")}
    assert rubrics == {"overall"}

    shown = invoke("runs", "show", "r1")
    flat = " ".join(shown.output.split())
    assert "0 pending review" in flat and "combined pass rate: " in flat
    assert "combined pass rate: pending" not in flat
    assert invoke("sync").exit_code == 0
    done = split()
    assert done["run.pending_review"]["value"] == 0
    assert done["run.pending_review"]["id"] == first["run.pending_review"]["id"]  # updated
    combined = done["run.pass_rate.combined"]["value"]
    assert f"combined pass rate: {combined:.1%}" in flat
