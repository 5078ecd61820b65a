"""A tiny OpenAI-compatible chat-completions server for benchmarks and crash tests (loopback only).

``python -m legal_judge.devtools.openai_stub --port 0 --latency-ms 200`` prints ``PORT <n>`` and serves
``POST /v1/chat/completions`` with a schema-valid verdict after a fixed latency, plus ``GET /stats``
(request counts per request digest, so a test can assert that no call was made twice).

Fault injection (for the reliability suite), each a per-request probability::

    --rate-429 0.3      429 with ``Retry-After`` (and ``retry-after-ms``)
    --rate-5xx 0.1      503 with an error body
    --timeout-rate 0.05 no answer for ``--timeout-s`` seconds (the client times out first)
    --invalid-json 0.1  200 whose verdict text is not JSON
    --truncated 0.02    200 with half the verdict and ``finish_reason: length``
    --bad-body 0.05     200 with a gateway's HTML page instead of a chat completion
    --require-key KEY   401 echoing the presented key unless ``Authorization: Bearer KEY``

``--fixed-score N`` answers every request with the same schema-valid verdict (every rubric N, the
first category, ``pass``; a pairwise request gets both scores N): a judge that ignores the answer.

Whether a request is faulted depends only on ``--seed``, its digest and how often that digest was
seen, so a run is reproducible whatever the concurrency. ``/stats`` also reports the faults served
and ``max_completed_per_digest`` (successful answers per digest).

It speaks just enough HTTP/1.1 (keep-alive, Content-Length) for the ``openai`` SDK's httpx client;
``--http-version 1.0`` answers as HTTP/1.0 servers do instead (``Connection: close``, one request per
connection), so a benchmark also pays a TCP connection per call. ``--backlog`` sets the listen
backlog (the kernel caps it at ``net.core.somaxconn``). It is a measuring instrument, not a server to
deploy.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import hashlib
import json
import math
import random
import re
import time
from collections import Counter
from dataclasses import dataclass
from typing import Any, Literal

__all__ = ["DEFAULT_BACKLOG", "HTTP_VERSIONS", "Faults", "HttpVersion", "StubServer", "serve",
           "stub_logprobs", "verdict_for_schema"]

HttpVersion = Literal["1.0", "1.1"]
HTTP_VERSIONS: tuple[HttpVersion, ...] = ("1.0", "1.1")
DEFAULT_BACKLOG = 4096


def verdict_for_schema(schema: dict[str, Any] | None, digest: str,
                       fixed: int | None = None, rationale: str = "stub") -> dict[str, Any]:
    """A deterministic verdict that satisfies the judge's JSON schema (``fixed``: the same one
    for every request; ``rationale``: the text of every rationale, note and summary)."""
    top = (schema or {}).get("properties") or {}
    if fixed is not None and "score_a" in top:
        return {"reasoning": rationale, "winner": "A", "score_a": fixed, "score_b": fixed}
    props = (top.get("rubrics") or {}).get("properties") or {}
    seed = int(digest[:8], 16)
    rubrics: dict[str, Any] = {}
    for i, (name, spec) in enumerate(sorted(props.items())):
        inner = spec.get("properties", {})
        if "score" in inner:
            score = fixed if fixed is not None else (seed >> (3 * i)) % 4 + 2
            rubrics[name] = {"score": score, "rationale": rationale}
        else:
            enum = inner.get("result", {}).get("enum", ["clean"])
            rubrics[name] = {"result": enum[0], "notes": rationale}
    return {"rubrics": rubrics, "overall": "pass",
            "summary": "stub verdict" if rationale == "stub" else rationale}


@dataclass(frozen=True)
class Faults:
    """Per-request fault probabilities and their parameters."""

    rate_429: float = 0.0
    rate_5xx: float = 0.0
    timeout_rate: float = 0.0
    invalid_json: float = 0.0
    truncated: float = 0.0
    bad_body: float = 0.0
    timeout_s: float = 5.0
    retry_after_ms: float = 5.0
    seed: int = 0
    require_key: str | None = None
    fixed_score: int | None = None
    rationale: str = "stub"
    #: Answer ``logprobs`` requests with token log-probabilities (False: ignore them, as many
    #: servers do).
    logprobs: bool = True


def stub_logprobs(content: str) -> dict[str, Any]:
    """Token log-probabilities of ``content`` (digits are tokens of their own): a digit ``d`` was
    chosen at 60%, with ``d-1`` at 30% and ``d+1`` at 10% as alternatives, so an in-scale score's
    expected value is ``d - 0.2`` (0 and 9 lose the neighbour they lack)."""
    tokens = []
    for token in re.findall(r"\d|\D{1,8}", content):
        top = [{"token": token, "logprob": 0.0, "bytes": None}]
        if token.isdigit():
            d = int(token)
            top = [{"token": str(v), "logprob": math.log(p), "bytes": None}
                   for v, p in ((d, 0.6), (d - 1, 0.3), (d + 1, 0.1)) if 0 <= v <= 9]
            top.append({"token": "x", "logprob": math.log(0.05), "bytes": None})
        tokens.append({"token": token, "logprob": top[0]["logprob"], "bytes": None,
                       "top_logprobs": top})
    return {"content": tokens, "refusal": None}


class _Reply(Exception):
    """A faulted answer: status line, JSON payload and extra headers."""

    def __init__(self, status: str, payload: Any, headers: dict[str, str] | None = None) -> None:
        super().__init__(status)
        self.status, self.payload, self.headers = status, payload, headers or {}


class StubServer:
    """The stub's state and request handler."""

    def __init__(self, *, latency_ms: float, faults: Faults | None = None,
                 http_version: HttpVersion = "1.1") -> None:
        if http_version not in HTTP_VERSIONS:
            raise ValueError(f"http_version must be one of {HTTP_VERSIONS}, got {http_version!r}")
        self.latency_s = latency_ms / 1000
        self.faults = faults or Faults()
        self.http_version = http_version
        self.connections = 0
        self.counts: Counter[str] = Counter()
        self.completed: Counter[str] = Counter()
        self.served: Counter[str] = Counter()
        self.requests = 0

    @staticmethod
    def _digest(body: dict[str, Any]) -> str:
        key = {"model": body.get("model"), "messages": body.get("messages")}
        return hashlib.sha256(json.dumps(key, sort_keys=True).encode()).hexdigest()

    def _completion(self, body: dict[str, Any], digest: str, text_fault: str | None) -> dict[str, Any]:
        fmt = body.get("response_format") or {}
        schema = (fmt.get("json_schema") or {}).get("schema") or fmt.get("schema")
        content = json.dumps(verdict_for_schema(schema, digest, self.faults.fixed_score,
                                                self.faults.rationale))
        finish = "stop"
        if text_fault == "invalid_json":
            content = "I would rate this answer about a 4 out of 5, it is quite good."
        elif text_fault == "truncated":
            content, finish = content[: len(content) // 2], "length"
        self.completed[digest] += 1
        logprobs = (stub_logprobs(content) if body.get("logprobs") and self.faults.logprobs
                    else None)
        return {
            "id": f"chatcmpl-{digest[:12]}", "object": "chat.completion", "created": int(time.time()),
            "model": body.get("model", "stub"),
            "choices": [{"index": 0, "finish_reason": finish, "logprobs": logprobs,
                         "message": {"role": "assistant", "content": content, "refusal": None}}],
            "usage": {"prompt_tokens": 900, "completion_tokens": 120, "total_tokens": 1020},
        }

    def _check_key(self, headers: dict[str, str]) -> None:
        want = self.faults.require_key
        if want is None:
            return
        got = headers.get("authorization", "").removeprefix("Bearer ").strip()
        if got != want:
            # Real servers echo the key they were given; the client must redact it.
            self.served["401"] += 1
            raise _Reply("401 Unauthorized", {"error": {
                "message": f"Incorrect API key provided: {got}.", "type": "invalid_request_error",
                "code": "invalid_api_key"}})

    async def _fault(self, digest: str) -> str | None:
        """Raise a transport fault, or return a text fault (or None) for this attempt."""
        f = self.faults
        rng = random.Random(f"{f.seed}:{digest}:{self.counts[digest]}")
        draw = rng.random()
        if draw < f.rate_429:
            self.served["429"] += 1
            after = f.retry_after_ms
            raise _Reply("429 Too Many Requests", {"error": {"message": "rate limited (stub)"}},
                         {"Retry-After": str(max(1, round(after / 1000))),
                          "retry-after-ms": f"{after:g}"})
        if draw < f.rate_429 + f.rate_5xx:
            self.served["5xx"] += 1
            raise _Reply("503 Service Unavailable", {"error": {"message": "overloaded (stub)"}},
                         {"retry-after-ms": f"{f.retry_after_ms:g}"})
        if draw < f.rate_429 + f.rate_5xx + f.timeout_rate:
            self.served["timeout"] += 1
            await asyncio.sleep(f.timeout_s)
            raise _Reply("504 Gateway Timeout", {"error": {"message": "too late (stub)"}})
        if draw < f.rate_429 + f.rate_5xx + f.timeout_rate + f.bad_body:
            self.served["bad_body"] += 1
            raise _Reply("200 OK", b"<html><body>502 Bad Gateway</body></html>")
        draw = rng.random()
        if draw < f.invalid_json:
            self.served["invalid_json"] += 1
            return "invalid_json"
        if draw < f.invalid_json + f.truncated:
            self.served["truncated"] += 1
            return "truncated"
        return None

    async def handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        """Serve requests on one connection: keep-alive (HTTP/1.1), or one request (HTTP/1.0)."""
        self.connections += 1
        close = self.http_version == "1.0"
        connection = "Connection: close\r\n" if close else ""
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                lines = head.decode("latin-1").split("\r\n")
                method, path, _ = lines[0].split(" ", 2)
                headers = {k.lower(): v.strip() for k, _, v in (ln.partition(":") for ln in lines[1:] if ln)}
                body = await reader.readexactly(int(headers.get("content-length", "0")))
                try:
                    status, payload = await self._route(method, path, body, headers)
                    extra: dict[str, str] = {}
                except _Reply as reply:
                    status, payload, extra = reply.status, reply.payload, reply.headers
                html = isinstance(payload, bytes)
                data = payload if html else json.dumps(payload).encode()
                more = "".join(f"{k}: {v}\r\n" for k, v in extra.items())
                ctype = "text/html" if html else "application/json"
                writer.write(f"HTTP/{self.http_version} {status}\r\nContent-Type: {ctype}\r\n"
                             f"{more}{connection}Content-Length: {len(data)}\r\n\r\n".encode()
                             + data)
                await writer.drain()
                if close:
                    return
        except (asyncio.IncompleteReadError, ConnectionError, asyncio.LimitOverrunError):
            pass
        finally:
            writer.close()

    def stats(self) -> dict[str, Any]:
        """Request counts, per-digest maxima and the faults served."""
        return {"requests": self.requests, "connections": self.connections,
                "http_version": self.http_version,
                "max_per_digest": max(self.counts.values(), default=0),
                "distinct": len(self.counts),
                "max_completed_per_digest": max(self.completed.values(), default=0),
                "completed": sum(self.completed.values()), "faults": dict(self.served)}

    async def _route(self, method: str, path: str, body: bytes,
                     headers: dict[str, str]) -> tuple[str, Any]:
        if method == "GET" and path.endswith("/stats"):
            return "200 OK", self.stats()
        if method == "POST" and path.endswith("/chat/completions"):
            self.requests += 1
            self._check_key(headers)
            request = json.loads(body)
            digest = self._digest(request)
            self.counts[digest] += 1
            await asyncio.sleep(self.latency_s)
            text_fault = await self._fault(digest)
            return "200 OK", self._completion(request, digest, text_fault)
        return "404 Not Found", {"error": {"message": f"no route {method} {path}"}}


async def serve(port: int, latency_ms: float, faults: Faults | None = None, *,
                http_version: HttpVersion = "1.1", backlog: int = DEFAULT_BACKLOG) -> None:
    """Run until cancelled, printing ``PORT <n>`` once listening."""
    stub = StubServer(latency_ms=latency_ms, faults=faults, http_version=http_version)
    server = await asyncio.start_server(stub.handle, "127.0.0.1", port, backlog=backlog)
    print(f"PORT {server.sockets[0].getsockname()[1]}", flush=True)
    async with server:
        await server.serve_forever()


def main() -> None:
    """Command-line entry point."""
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--latency-ms", type=float, default=200.0)
    parser.add_argument("--http-version", choices=HTTP_VERSIONS, default="1.1",
                        help="1.1: keep-alive (default); 1.0: Connection: close after each answer")
    parser.add_argument("--backlog", type=int, default=DEFAULT_BACKLOG,
                        help=f"listen backlog (default {DEFAULT_BACKLOG}; capped by somaxconn)")
    parser.add_argument("--rate-429", type=float, default=0.0)
    parser.add_argument("--rate-5xx", type=float, default=0.0)
    parser.add_argument("--timeout-rate", type=float, default=0.0)
    parser.add_argument("--invalid-json", type=float, default=0.0)
    parser.add_argument("--truncated", type=float, default=0.0)
    parser.add_argument("--bad-body", type=float, default=0.0)
    parser.add_argument("--timeout-s", type=float, default=5.0,
                        help="how long a timed-out request hangs")
    parser.add_argument("--retry-after-ms", type=float, default=5.0)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--require-key", default=None)
    parser.add_argument("--fixed-score", type=int, default=None,
                        help="answer every request with this score on every rubric")
    parser.add_argument("--rationale", default="stub",
                        help="the text of every rationale, note and summary of a verdict")
    args = parser.parse_args()
    faults = Faults(rate_429=args.rate_429, rate_5xx=args.rate_5xx, timeout_rate=args.timeout_rate,
                    invalid_json=args.invalid_json, truncated=args.truncated, bad_body=args.bad_body,
                    timeout_s=args.timeout_s, retry_after_ms=args.retry_after_ms, seed=args.seed,
                    require_key=args.require_key, fixed_score=args.fixed_score,
                    rationale=args.rationale)
    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(serve(args.port, args.latency_ms, faults, http_version=args.http_version,
                          backlog=args.backlog))


if __name__ == "__main__":
    main()
