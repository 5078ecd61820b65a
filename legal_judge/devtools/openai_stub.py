"""A tiny OpenAI-compatible chat-completions server for benchmarks and crash tests (loopback only).

``python -m legal_judge.devtools.openai_stub --port 0 --latency-ms 200`` prints ``PORT <n>`` and serves
``POST /v1/chat/completions`` with a schema-valid verdict after a fixed latency, plus ``GET /stats``
(request counts per request digest, so a test can assert that no call was made twice).

It speaks just enough HTTP/1.1 (keep-alive, Content-Length) for the ``openai`` SDK's httpx client; it
is a measuring instrument, not a server to deploy.
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import json
import time
from collections import Counter
from typing import Any

__all__ = ["StubServer", "verdict_for_schema"]


def verdict_for_schema(schema: dict[str, Any] | None, digest: str) -> dict[str, Any]:
    """A deterministic verdict that satisfies the judge's JSON schema."""
    props = (((schema or {}).get("properties") or {}).get("rubrics") or {}).get("properties") or {}
    seed = int(digest[:8], 16)
    rubrics: dict[str, Any] = {}
    for i, (name, spec) in enumerate(sorted(props.items())):
        inner = spec.get("properties", {})
        if "score" in inner:
            rubrics[name] = {"score": (seed >> (3 * i)) % 4 + 2, "rationale": "stub"}
        else:
            enum = inner.get("result", {}).get("enum", ["clean"])
            rubrics[name] = {"result": enum[0], "notes": "stub"}
    return {"rubrics": rubrics, "overall": "pass", "summary": "stub verdict"}


class StubServer:
    """The stub's state and request handler."""

    def __init__(self, *, latency_ms: float) -> None:
        self.latency_s = latency_ms / 1000
        self.counts: Counter[str] = Counter()
        self.requests = 0

    def _completion(self, body: dict[str, Any]) -> dict[str, Any]:
        key = {"model": body.get("model"), "messages": body.get("messages")}
        digest = hashlib.sha256(json.dumps(key, sort_keys=True).encode()).hexdigest()
        self.counts[digest] += 1
        fmt = body.get("response_format") or {}
        schema = (fmt.get("json_schema") or {}).get("schema") or fmt.get("schema")
        content = json.dumps(verdict_for_schema(schema, digest))
        return {
            "id": f"chatcmpl-{digest[:12]}", "object": "chat.completion", "created": int(time.time()),
            "model": body.get("model", "stub"),
            "choices": [{"index": 0, "finish_reason": "stop",
                         "message": {"role": "assistant", "content": content, "refusal": None}}],
            "usage": {"prompt_tokens": 900, "completion_tokens": 120, "total_tokens": 1020},
        }

    async def handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        """Serve requests on one keep-alive connection."""
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                lines = head.decode("latin-1").split("\r\n")
                method, path, _ = lines[0].split(" ", 2)
                headers = {k.lower(): v.strip() for k, _, v in (ln.partition(":") for ln in lines[1:] if ln)}
                body = await reader.readexactly(int(headers.get("content-length", "0")))
                status, payload = await self._route(method, path, body)
                data = json.dumps(payload).encode()
                writer.write(f"HTTP/1.1 {status}\r\nContent-Type: application/json\r\n"
                             f"Content-Length: {len(data)}\r\n\r\n".encode() + data)
                await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError, asyncio.LimitOverrunError):
            pass
        finally:
            writer.close()

    async def _route(self, method: str, path: str, body: bytes) -> tuple[str, Any]:
        if method == "GET" and path.endswith("/stats"):
            return "200 OK", {"requests": self.requests, "max_per_digest": max(self.counts.values(), default=0),
                              "distinct": len(self.counts)}
        if method == "POST" and path.endswith("/chat/completions"):
            self.requests += 1
            await asyncio.sleep(self.latency_s)
            return "200 OK", self._completion(json.loads(body))
        return "404 Not Found", {"error": {"message": f"no route {method} {path}"}}


async def serve(port: int, latency_ms: float) -> None:
    """Run until cancelled, printing ``PORT <n>`` once listening."""
    stub = StubServer(latency_ms=latency_ms)
    server = await asyncio.start_server(stub.handle, "127.0.0.1", port, backlog=4096)
    print(f"PORT {server.sockets[0].getsockname()[1]}", flush=True)
    async with server:
        await server.serve_forever()


def main() -> None:
    """Command-line entry point."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--latency-ms", type=float, default=200.0)
    args = parser.parse_args()
    try:
        asyncio.run(serve(args.port, args.latency_ms))
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    main()
