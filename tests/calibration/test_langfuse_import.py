"""``calibrate import --from-langfuse``: lawyers' ANNOTATION scores back from Langfuse.

Through the real SDK against the local API stand-in (``tests/sync/standin.py``), which builds
every score it serves with the SDK's ``GetScoresV3Response`` model and validates every score a
"lawyer" enters with ``CreateScoreRequest``.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "sync"))

from standin import PUBLIC_KEY, SECRET_KEY, LangfuseStandin  # noqa: E402

from legal_judge.store import Store  # noqa: E402
from legal_judge.sync.langfuse_labels import create_annotation_queue  # noqa: E402
from legal_judge.sync.mask import load_masker  # noqa: E402
from legal_judge.sync.plan import item_trace_id  # noqa: E402
from legal_judge.sync.plan_other import label_scores  # noqa: E402


@pytest.fixture
def standin(monkeypatch: pytest.MonkeyPatch) -> Iterator[LangfuseStandin]:
    server = LangfuseStandin().start()
    monkeypatch.setenv("LANGFUSE_PUBLIC_KEY", PUBLIC_KEY)
    monkeypatch.setenv("LANGFUSE_SECRET_KEY", SECRET_KEY)
    monkeypatch.setenv("LANGFUSE_BASE_URL", server.base_url)
    monkeypatch.setenv("LANGFUSE_TIMEOUT", "2")
    yield server
    server.stop()


RUBRICS = [{"name": n, "kind": "numeric", "scale": [0, 5]} for n in
           ("legal_soundness", "completeness")] + [{"name": "hallucination",
                                                     "kind": "categorical"},
                                                    {"name": "overall", "kind": "categorical"}]


def _queue(store: Store, make_run: Any, standin: LangfuseStandin, n: int) -> tuple[str, Any]:
    truth = make_run(store, "r1", n_items=n, bias=1.0, seed=4)
    qid = create_annotation_queue(name="q", run_id="r1", trace_seeds=[f"r1:{i}" for i in
                                                                       sorted(truth.scores)],
                                  rubrics=RUBRICS)
    return qid, truth


def test_queue_scores_become_labels(store: Store, make_run: Any, standin: LangfuseStandin,
                                    invoke: Any) -> None:
    qid, truth = _queue(store, make_run, standin, 24)
    for item_id in sorted(truth.scores)[:22]:
        tid = item_trace_id("r1", item_id)
        standin.annotate(trace_id=tid, name="legal_soundness", author="lawyer-1", queue_id=qid,
                         value=truth.scores[item_id]["legal_soundness"])
        standin.annotate(trace_id=tid, name="hallucination", author="lawyer-1", queue_id=qid,
                         value=truth.hallucination[item_id])
        standin.annotate(trace_id=tid, name="overall", author="lawyer-1", queue_id=qid,
                         value=0 if truth.hallucination[item_id] == "hallucinated" else 1)
    res = invoke("calibrate", "import", "--from-langfuse", "--queue", qid)
    assert res.exit_code == 0, res.output
    assert "imported 66 labels on 22 items from 1 annotator(s): lawyer-1" in res.output
    rows = store.db.execute("SELECT item_id, run_id, rubric, score, annotator, source FROM "
                            "human_labels ORDER BY item_id, rubric").fetchall()
    assert len(rows) == 66 and {r[1] for r in rows} == {"r1"}
    assert {r[5] for r in rows} == {f"langfuse:queue/{qid}"}
    first = sorted(truth.scores)[0]
    got = {r[2]: r[3] for r in rows if r[0] == first}
    assert float(got["legal_soundness"]) == truth.scores[first]["legal_soundness"]
    assert got["overall"] == ("fail" if truth.hallucination[first] == "hallucinated" else "pass")
    # already in Langfuse: the label sync does not send them back as new ANNOTATION scores
    scores, _ = label_scores(store, "r1", masker=load_masker(),
                             kinds={"legal_soundness": "NUMERIC"})
    assert scores == []
    again = invoke("calibrate", "import", "--from-langfuse", "--run", "r1")
    assert again.exit_code == 0 and "(66 already stored)" in again.output
    report = invoke("calibrate", "compare", "r1", "--json")
    assert report.exit_code == 0 and '"lawyer_source": "lawyers"' in report.output


def test_a_bad_score_stores_nothing(store: Store, make_run: Any, standin: LangfuseStandin,
                                    invoke: Any) -> None:
    qid, truth = _queue(store, make_run, standin, 3)
    items = sorted(truth.scores)
    standin.annotate(trace_id=item_trace_id("r1", items[0]), name="legal_soundness",
                     author="lawyer-1", queue_id=qid, value=4)
    standin.annotate(trace_id=item_trace_id("r1", items[1]), name="legal_soundness",
                     author="lawyer-1", queue_id=qid, value=2.5)  # not a whole level
    res = invoke("calibrate", "import", "--from-langfuse", "--queue", qid)
    assert res.exit_code == 2
    assert "2.5 is not a whole score" in res.output and "nothing was stored" in res.output
    assert store.db.execute("SELECT COUNT(*) FROM human_labels").fetchone()[0] == 0


def test_arguments_and_an_unreachable_langfuse(store: Store, make_run: Any, invoke: Any,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    make_run(store, "r1", n_items=2)
    assert invoke("calibrate", "import").exit_code == 2
    assert invoke("calibrate", "import", "--from-langfuse").exit_code == 2
    assert invoke("calibrate", "import", "x.csv", "--queue", "q").exit_code == 2
    unconfigured = invoke("calibrate", "import", "--from-langfuse", "--queue", "q")
    assert unconfigured.exit_code == 2 and "LANGFUSE_PUBLIC_KEY" in unconfigured.output
    monkeypatch.setenv("LANGFUSE_PUBLIC_KEY", PUBLIC_KEY)
    monkeypatch.setenv("LANGFUSE_SECRET_KEY", SECRET_KEY)
    monkeypatch.setenv("LANGFUSE_BASE_URL", "http://127.0.0.1:9")
    down = invoke("calibrate", "import", "--from-langfuse", "--queue", "q")
    assert down.exit_code == 3 and "cannot reach Langfuse for reading annotation queue q" in down.output


def test_run_level_raw_and_corrected_scores_reach_langfuse(store: Store, make_run: Any,
                                                           standin: LangfuseStandin,
                                                           invoke: Any, tmp_path: Path) -> None:
    from legal_judge.calibration import estimate_run
    from legal_judge.sync.langfuse_delivery import deliver_outbox

    truth = make_run(store, "r1", n_items=40, bias=1.0, seed=6)
    lines = ["item_id,rubric,score,annotator,labeled_at"]
    for i in sorted(truth.scores)[:25]:
        lines += [f"{i},{r},{int(v)},lawyer,2026-11-02" for r, v in truth.scores[i].items()]
        lines.append(f"{i},hallucination,{truth.hallucination[i]},lawyer,2026-11-02")
    (tmp_path / "l.csv").write_text("\n".join(lines) + "\n")
    assert invoke("calibrate", "import", str(tmp_path / "l.csv"), "--run", "r1").exit_code == 0
    result = deliver_outbox(store, timeout_s=20)
    assert result.delivered and not result.failed, result
    session = {s["name"]: s for s in standin.state.scores.values() if s.get("sessionId") == "r1"}
    est = estimate_run(store, "r1")
    assert est is not None
    raw, corrected = session["run.pass_rate.raw"], session["run.pass_rate.corrected"]
    assert raw["value"] == pytest.approx(est.pass_rate.raw)
    assert corrected["value"] == pytest.approx(est.pass_rate.corrected)
    assert corrected["metadata"]["score_kind"] == "corrected for judge error"
    assert corrected["metadata"]["method"] == "PPI++" and corrected["metadata"]["n_labelled"] == 25
    assert raw["metadata"]["score_kind"] == "raw: the judges' own figure"
    assert "run.legal_soundness.corrected" in session and not standin.state.rejected


def test_calibrated_scores_say_so_in_langfuse_metadata() -> None:
    from datetime import UTC, datetime

    from legal_judge.sync.plan import ensemble_scores

    result = {"status": "ok", "scores": {"legal_soundness": 2.5}, "flags": ["calibrated:corr-1"],
              "raw_scores": {"legal_soundness": 3.5}}
    meta = ensemble_scores("t", result, datetime.now(UTC), set())[0].metadata or {}
    assert meta["calibrated"] == "corr-1" and meta["raw_value"] == 3.5
    plain = ensemble_scores("t", {**result, "flags": []}, datetime.now(UTC), set())[0]
    assert "calibrated" not in (plain.metadata or {})
