"""A realistic run written straight into the store (the runner's rows, without the runner)."""

from __future__ import annotations

from legal_judge.models import EnsembleResult, JudgeWeight, Verdict
from legal_judge.store import Store

CLIENT = "Acme Holdings"
JUDGES = [("gpt", "openai", "gpt-4o"), ("gemini", "google", "gemini-1.5-pro"),
          ("mistral", "mistral", "mistral-large-latest")]
RUBRICS = ["legal_soundness", "citation_quality", "jurisdiction_awareness", "completeness"]


def make_run(store: Store, run_id: str = "run-1", *, n_items: int = 2,
             judge_prompt_version: int | None = 1) -> list[str]:
    """Create a finished 3-judge run over ``n_items`` items; returns the item ids."""
    config = {"judges": [j[0] for j in JUDGES]}
    if judge_prompt_version is not None:
        config["langfuse_prompts"] = {"llm-judge-v2": judge_prompt_version}
    store.create_run(run_id, kind="bench", config=config)
    items = [{"id": f"q{i}", "prompt": f"Can {CLIENT} terminate the lease early? ({i})",
              "response": f"Yes, {CLIENT} may terminate under s.146 LPA 1925.",
              "jurisdiction": "England and Wales", "expected_signals": ["forfeiture"],
              "metadata": {}} for i in range(n_items)]
    store.save_items(run_id, items)
    for it in items:
        for k, (judge, family, model) in enumerate(JUDGES):
            if judge == "mistral":  # one failed attempt, then a valid one
                store.record_call(run_id, it["id"], judge, purpose="verdict", attempt=1,
                                  request={"model": model, "temperature": 0.0, "max_tokens": 1024,
                                           "n_messages": 2},
                                  response_text="not json", usage={"input_tokens": 900,
                                                                   "output_tokens": 12},
                                  latency_ms=800.0, cached=False, retries=0, error=None)
            store.record_call(run_id, it["id"], judge, purpose="verdict",
                              attempt=2 if judge == "mistral" else 1,
                              request={"model": model, "temperature": 0.0, "max_tokens": 1024,
                                       "n_messages": 2},
                              response_text='{"overall": "pass"}',
                              usage={"input_tokens": 1200, "output_tokens": 300},
                              latency_ms=1500.0, cached=False, retries=0, error=None)
            extra: dict = {"stated_overall": "pass"}
            if judge == "gpt":
                store.record_call(run_id, it["id"], judge, purpose="self_debias", attempt=1,
                                  request={"model": model, "temperature": 0.0, "max_tokens": 1024,
                                           "n_messages": 4},
                                  response_text='{"overall": "pass"}',
                                  usage={"input_tokens": 1500, "output_tokens": 200},
                                  latency_ms=900.0, cached=False, retries=0, error=None)
                extra["self_debias"] = {"status": "ok", "changed": ["completeness"]}
            v = Verdict(judge_id=f"jid-{judge}", judge=judge, family=family, status="ok",
                        scores={r: float(3 + (k + len(r)) % 3) for r in RUBRICS},
                        hallucination="clean",
                        rationales={r: f"{CLIENT}'s position on {r} is explained." for r in RUBRICS},
                        overall="pass", summary=f"Sound advice for {CLIENT}.",
                        raw='{"overall": "pass"}', attempts=2 if judge == "mistral" else 1,
                        input_tokens=1200, output_tokens=300, cost_usd=0.01, latency_ms=1500.0,
                        extra=extra)
            store.save_verdict(run_id, it["id"], judge, v.model_dump())
        res = EnsembleResult(
            item_id=it["id"], status="ok", scores={r: 4.0 for r in RUBRICS},
            raw_scores={r: 4.0 for r in RUBRICS}, hallucination="clean", overall="pass",
            weights=[JudgeWeight(judge=j, family=f, weight=1 / 3, same_family=False, reason="equal")
                     for j, f, _ in JUDGES],
            votes={"pass": 1.0, "fail": 0.0}, valid_judges=3,
            disagreement={r: {"sd": 0.5} for r in RUBRICS},
            checks={"citations": {"found": 1, "invalid": 0, "passed": True},
                    "refusal": {"refused": False}})
        store.save_result(run_id, it["id"], res.model_dump())
    store.finish_run(run_id, status="done", summary={"items": n_items})
    return [it["id"] for it in items]
