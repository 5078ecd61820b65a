"""In-memory OpenAI Batch and Anthropic Message Batches servers for ``httpx.MockTransport``.

A test and benchmark double (no network): the real SDKs talk to it exactly as to the providers.
It implements the wire shapes of both batch lifecycles (OpenAI: file upload, ``validating`` ->
``in_progress`` -> ``completed``/``expired``, output and error JSONL files; Anthropic:
``in_progress`` -> ``ended``, a results JSONL stream) plus the online endpoints, and can expire a
batch part-way, fail chosen requests once, and return results in shuffled order.
"""

from __future__ import annotations

import email.parser
import email.policy
import hashlib
import json
import random
import re
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import httpx

__all__ = ["EmulatedRequest", "ProviderEmulator", "default_answer"]

_ID = re.compile(r"/(?:batch_|msgbatch_|file-)[^/]+")
_EXPIRED = "This request could not be executed before the completion window expired."


@dataclass(frozen=True)
class EmulatedRequest:
    """What the answer function sees: model, messages (system first), schema, custom id."""

    model: str
    messages: list[dict[str, str]]
    schema: dict[str, Any] | None
    custom_id: str | None


Answer = Callable[[EmulatedRequest], str]


def default_answer(req: EmulatedRequest) -> str:
    """A valid verdict for the schema's rubrics (or a pairwise judgment), scores drawn from a
    digest of the prompt."""
    digest = hashlib.sha256(json.dumps(req.messages, sort_keys=True).encode()).digest()
    if "winner" in (req.schema or {}).get("properties", {}):
        a, b = digest[0] % 6, digest[1] % 6
        return json.dumps({"reasoning": "emulated", "winner": "A" if a >= b else "B",
                           "score_a": a, "score_b": b})
    rubric_props = ((req.schema or {}).get("properties", {}).get("rubrics", {})
                    .get("properties", {}))
    rubrics: dict[str, Any] = {}
    for i, (name, spec) in enumerate(sorted(rubric_props.items())):
        if "score" in spec.get("properties", {}):
            rubrics[name] = {"score": digest[i] % 6, "rationale": "emulated"}
        else:
            values = spec["properties"]["result"].get("enum", ["clean"])
            rubrics[name] = {"result": values[0], "notes": ""}
    overall = "pass" if digest[31] % 3 else "fail"
    return json.dumps({"rubrics": rubrics, "overall": overall, "summary": "emulated"})


def _tokens(messages: list[dict[str, str]], text: str) -> tuple[int, int]:
    return max(1, sum(len(m["content"]) for m in messages) // 4), max(1, len(text) // 4)


@dataclass
class _Batch:
    id: str
    lines: list[tuple[str, dict[str, Any]]]
    polls: int = 0
    status: str = "in_progress"
    results: list[dict[str, Any]] = field(default_factory=list)
    errors: list[dict[str, Any]] = field(default_factory=list)


@dataclass
class ProviderEmulator:
    """Both providers behind one ``httpx.MockTransport`` handler.

    Attributes:
        answer: Text of the judge's answer to one request.
        polls_to_end: Polls a batch stays in progress before it ends.
        expire_after: Requests of a batch answered before it expires (None: never expires).
        fail_once: Custom ids whose next batch answer is a 500 / ``api_error``.
        shuffle_seed: Results come back in an order shuffled with this seed (None: in order).
    """

    answer: Answer = default_answer
    polls_to_end: int = 1
    expire_after: int | None = None
    fail_once: set[str] = field(default_factory=set)
    shuffle_seed: int | None = 0
    calls: Counter[str] = field(default_factory=Counter)
    files: dict[str, bytes] = field(default_factory=dict)
    batches: dict[str, _Batch] = field(default_factory=dict)
    submitted_ids: list[str] = field(default_factory=list)

    def client(self) -> httpx.AsyncClient:
        """An httpx client whose every request is answered here."""
        return httpx.AsyncClient(transport=httpx.MockTransport(self.handle))

    def handle(self, request: httpx.Request) -> httpx.Response:
        """Route one request."""
        path, method = request.url.path, request.method
        self.calls[f"{method} {_ID.sub('/{id}', path)}"] += 1
        if request.url.host == "api.anthropic.com":
            return self._anthropic(method, path, request)
        return self._openai(method, path, request)

    # answers -----------------------------------------------------------------------------------
    def _finish(self, batch: _Batch, ok: Callable[[str, dict[str, Any]], dict[str, Any]],
                failed: Callable[[str, bool], dict[str, Any]]) -> None:
        order = list(range(len(batch.lines)))
        if self.shuffle_seed is not None:
            random.Random(self.shuffle_seed).shuffle(order)
        for index in order:
            cid, body = batch.lines[index]
            if self.expire_after is not None and index >= self.expire_after:
                batch.errors.append(failed(cid, True))
            elif cid in self.fail_once:
                self.fail_once.discard(cid)
                batch.errors.append(failed(cid, False))
            else:
                batch.results.append(ok(cid, body))
        batch.status = "expired" if batch.errors and self.expire_after is not None else "ended"

    # OpenAI ------------------------------------------------------------------------------------
    def _openai(self, method: str, path: str, request: httpx.Request) -> httpx.Response:
        if method == "POST" and path == "/v1/files":
            data = _multipart_file(request)
            file_id = f"file-{len(self.files) + 1}"
            self.files[file_id] = data
            return httpx.Response(200, json={"id": file_id, "object": "file", "bytes": len(data),
                                             "created_at": 1700000000, "filename": "batch.jsonl",
                                             "purpose": "batch", "status": "processed"})
        if method == "POST" and path == "/v1/batches":
            body = json.loads(request.content)
            lines = [json.loads(x) for x in self.files[body["input_file_id"]].splitlines() if x]
            ids = [x["custom_id"] for x in lines]
            assert len(set(ids)) == len(ids), "custom ids must be unique within a batch"
            assert all(x["url"] == body["endpoint"] for x in lines)
            batch = _Batch(f"batch_{len(self.batches) + 1:04d}",
                           [(x["custom_id"], x["body"]) for x in lines], status="validating")
            self.batches[batch.id] = batch
            self.submitted_ids += ids
            return httpx.Response(200, json=self._openai_batch(batch, body["input_file_id"]))
        if method == "GET" and path.startswith("/v1/batches/"):
            batch = self.batches[path.rsplit("/", 1)[1]]
            batch.polls += 1
            if batch.status in ("validating", "in_progress"):
                batch.status = "in_progress"
                if batch.polls >= self.polls_to_end:
                    self._finish(batch, self._openai_ok, _openai_failed)
                    batch.status = "expired" if batch.status == "expired" else "completed"
                    self._openai_files(batch)
            return httpx.Response(200, json=self._openai_batch(batch, "file-in"))
        if method == "GET" and path.startswith("/v1/files/") and path.endswith("/content"):
            return httpx.Response(200, content=self.files[path.split("/")[3]])
        if method == "POST" and path == "/v1/chat/completions":
            return httpx.Response(200, json=self._openai_completion(json.loads(request.content)))
        return httpx.Response(404, json={"error": {"message": f"no route {method} {path}"}})

    def _openai_files(self, batch: _Batch) -> None:
        for kind, rows in (("out", batch.results), ("err", batch.errors)):
            if rows:
                self.files[f"file-{kind}-{batch.id}"] = "".join(
                    json.dumps(r) + "\n" for r in rows).encode()

    def _openai_batch(self, batch: _Batch, input_file_id: str) -> dict[str, Any]:
        ended = batch.status in ("completed", "expired")
        return {
            "id": batch.id, "object": "batch", "endpoint": "/v1/chat/completions", "errors": None,
            "input_file_id": input_file_id, "completion_window": "24h", "status": batch.status,
            "output_file_id": f"file-out-{batch.id}" if ended and batch.results else None,
            "error_file_id": f"file-err-{batch.id}" if ended and batch.errors else None,
            "created_at": 1700000000, "request_counts": {
                "total": len(batch.lines), "completed": len(batch.results),
                "failed": len(batch.errors)}, "metadata": {},
        }

    def _openai_completion(self, body: dict[str, Any], cid: str | None = None) -> dict[str, Any]:
        fmt = body.get("response_format") or {}
        schema = (fmt.get("json_schema") or {}).get("schema") or fmt.get("schema")
        req = EmulatedRequest(body["model"], body["messages"], schema, cid)
        text = self.answer(req)
        p, c = _tokens(body["messages"], text)
        return {"id": f"chatcmpl-{cid or 'online'}", "object": "chat.completion",
                "created": 1700000000, "model": body["model"],
                "choices": [{"index": 0, "finish_reason": "stop", "logprobs": None,
                             "message": {"role": "assistant", "content": text, "refusal": None}}],
                "usage": {"prompt_tokens": p, "completion_tokens": c, "total_tokens": p + c}}

    def _openai_ok(self, cid: str, body: dict[str, Any]) -> dict[str, Any]:
        return {"id": f"batch_req_{cid}", "custom_id": cid, "error": None,
                "response": {"status_code": 200, "request_id": f"req_{cid}",
                             "body": self._openai_completion(body, cid)}}

    # Anthropic ---------------------------------------------------------------------------------
    def _anthropic(self, method: str, path: str, request: httpx.Request) -> httpx.Response:
        if method == "POST" and path == "/v1/messages/batches":
            reqs = json.loads(request.content)["requests"]
            ids = [r["custom_id"] for r in reqs]
            assert len(set(ids)) == len(ids), "custom ids must be unique within a batch"
            batch = _Batch(f"msgbatch_{len(self.batches) + 1:04d}",
                           [(r["custom_id"], r["params"]) for r in reqs])
            self.batches[batch.id] = batch
            self.submitted_ids += ids
            return httpx.Response(200, json=_anthropic_batch(batch))
        if method == "GET" and path.endswith("/results"):
            batch = self.batches[path.split("/")[4]]
            rows = batch.results + batch.errors
            return httpx.Response(200, content="".join(json.dumps(r) + "\n" for r in rows).encode(),
                                  headers={"content-type": "application/binary"})
        if method == "GET" and path.startswith("/v1/messages/batches/"):
            batch = self.batches[path.rsplit("/", 1)[1]]
            batch.polls += 1
            if batch.status == "in_progress" and batch.polls >= self.polls_to_end:
                self._finish(batch, self._anthropic_ok, _anthropic_failed)
            return httpx.Response(200, json=_anthropic_batch(batch))
        if method == "POST" and path == "/v1/messages":
            return httpx.Response(200, json=self._anthropic_message(json.loads(request.content)))
        return httpx.Response(404, json={"type": "error", "error": {
            "type": "not_found_error", "message": f"no route {method} {path}"}})

    def _anthropic_message(self, params: dict[str, Any], cid: str | None = None) -> dict[str, Any]:
        messages = [{"role": "system", "content": params.get("system", "")}, *params["messages"]]
        tools = params.get("tools") or []
        schema = tools[0]["input_schema"] if tools else None
        text = self.answer(EmulatedRequest(params["model"], messages, schema, cid))
        p, c = _tokens(messages, text)
        try:
            parsed = json.loads(text)
        except json.JSONDecodeError:
            parsed = None
        if tools and isinstance(parsed, dict):
            content = [{"type": "tool_use", "id": f"toolu_{cid}", "name": tools[0]["name"],
                        "input": parsed}]
            stop = "tool_use"
        else:
            content, stop = [{"type": "text", "text": text}], "end_turn"
        return {"id": f"msg_{cid or 'online'}", "type": "message", "role": "assistant",
                "model": params["model"], "content": content, "stop_reason": stop,
                "stop_sequence": None, "usage": {"input_tokens": p, "output_tokens": c}}

    def _anthropic_ok(self, cid: str, params: dict[str, Any]) -> dict[str, Any]:
        return {"custom_id": cid,
                "result": {"type": "succeeded", "message": self._anthropic_message(params, cid)}}


def _openai_failed(cid: str, expired: bool) -> dict[str, Any]:
    if expired:
        return {"id": f"batch_req_{cid}", "custom_id": cid, "response": None,
                "error": {"code": "batch_expired", "message": _EXPIRED}}
    return {"id": f"batch_req_{cid}", "custom_id": cid, "error": None,
            "response": {"status_code": 500, "request_id": f"req_{cid}", "body": {
                "error": {"message": "The server had an error", "type": "server_error"}}}}


def _anthropic_failed(cid: str, expired: bool) -> dict[str, Any]:
    if expired:
        return {"custom_id": cid, "result": {"type": "expired"}}
    return {"custom_id": cid, "result": {"type": "errored", "error": {
        "type": "error", "error": {"type": "api_error", "message": "Internal server error"}}}}


def _anthropic_batch(batch: _Batch) -> dict[str, Any]:
    ended = batch.status in ("ended", "expired")
    expired = sum(1 for e in batch.errors if e["result"]["type"] == "expired")
    return {
        "id": batch.id, "type": "message_batch",
        "processing_status": "ended" if ended else "in_progress",
        "request_counts": {"processing": 0 if ended else len(batch.lines),
                           "succeeded": len(batch.results), "errored": len(batch.errors) - expired,
                           "canceled": 0, "expired": expired},
        "created_at": "2025-01-01T00:00:00Z", "expires_at": "2025-01-02T00:00:00Z",
        "ended_at": "2025-01-01T01:00:00Z" if ended else None, "archived_at": None,
        "cancel_initiated_at": None,
        "results_url": (f"https://api.anthropic.com/v1/messages/batches/{batch.id}/results"
                        if ended else None),
    }


def _multipart_file(request: httpx.Request) -> bytes:
    head = f"Content-Type: {request.headers['content-type']}\r\n\r\n".encode()
    message = email.parser.BytesParser(policy=email.policy.HTTP).parsebytes(head + request.content)
    for part in message.iter_parts():
        if part.get_param("name", header="content-disposition") == "file":
            payload = part.get_payload(decode=True)
            assert isinstance(payload, bytes)
            return payload
    raise AssertionError("no file part in the upload")
