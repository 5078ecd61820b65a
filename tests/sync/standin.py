"""A Langfuse API stand-in on 127.0.0.1 for contract tests of the real ``langfuse`` SDK.

It speaks the endpoints ``legal_judge`` uses, the way a Langfuse v4 server does:

* ``POST /api/public/otel/v1/traces``: OTLP/HTTP protobuf (gzip or plain), decoded with
  ``opentelemetry-proto``; needs ``x-langfuse-ingestion-version: 4``. Observations are upserted by
  span id, so a resend updates rather than duplicates, as on the server.
* ``POST /api/public/scores``: a JSON array of ``CreateScoreRequest``; upsert by score id; a score
  with ``configId`` must match the config's name and range/categories (else 207 with a rejection);
  ``source=ANNOTATION`` needs ``configId``.
* ``GET /api/public/v3/scores`` (filters source/name/traceId/queueId, ``fields``, cursor paging)
  and ``GET /api/public/annotation-queues/{id}/items``; :meth:`LangfuseStandin.annotate` records a
  lawyer's ``source=ANNOTATION`` score as the UI does, validated with ``CreateScoreRequest``.
* score configs, v2 prompts (labels unique across versions, automatic ``latest``, default label
  ``production``, prompt references ``@@@langfusePrompt:name=...|label=...@@@`` resolved on GET and
  checked on create), v2 datasets, dataset items, projects.
* Dataset runs (experiments): Langfuse v4 has no dataset-run-items call; a span carrying
  ``langfuse.experiment.*`` attributes links its trace to a dataset item, as the SDK's
  ``run_experiment`` sends it. Each experiment item (the span named by
  ``experiment.item.root_observation_id``) is checked (required attributes, environment
  ``sdk-experiment``, a known dataset and one of its items, the server's experiment id for that
  dataset and run name, the same link on every span of the trace) and built through the SDK's
  ``ExperimentItem`` model; a refused link lands in ``state.rejected``. ``GET /experiments`` and
  ``GET /experiment-items`` answer through ``ExperimentsResponse`` / ``ExperimentItemsResponse``.

Every request must carry ``Authorization: Basic b64(pk:sk)`` (401 otherwise); every JSON body is
validated with the SDK's own generated models plus an unknown-key check (the models allow extras);
every JSON response is built through those models. Anything else is a 404. ``delay_s`` makes every
request slow; ``stop()``/``start()`` take the server down and bring it back on the same port.
"""

from __future__ import annotations

import base64
import contextlib
import gzip
import hashlib
import json
import re
import socket
import threading
import time
import uuid
from dataclasses import dataclass, field
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, unquote, urlsplit

from langfuse.api import (
    AnnotationQueue,
    AnnotationQueueItem,
    CreateAnnotationQueueItemRequest,
    CreateAnnotationQueueRequest,
    CreateDatasetItemRequest,
    CreateDatasetRequest,
    CreateScoreConfigRequest,
    CreateTextPromptRequest,
    Dataset,
    DatasetItem,
    ExperimentItem,
    ExperimentItemsResponse,
    ExperimentsResponse,
    PaginatedAnnotationQueueItems,
    PaginatedDatasetItems,
    Projects,
    Prompt_Text,
    ScoreConfig,
    ScoreConfigs,
)
from langfuse.api.core.pydantic_utilities import parse_obj_as
from langfuse.api.core.serialization import get_field_to_alias_mapping
from langfuse.api.scores import CreateScoreRequest, GetScoresV3Response
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)

PUBLIC_KEY = "pk-lf-test"
SECRET_KEY = "sk-lf-test"
PROJECT_ID = "proj-standin"
_DEP = re.compile(r"@@@langfusePrompt:(.*?)@@@")


class BadRequest(Exception):
    """A body that the SDK models refuse; answered with 400."""


def _now() -> str:
    return datetime.now(UTC).isoformat()


def validate(model: Any, body: Any) -> Any:
    """Parse ``body`` with an SDK model and refuse keys the model does not know."""
    if isinstance(body, dict):
        known = set(model.model_fields) | set(get_field_to_alias_mapping(model).values())
        unknown = set(body) - known
        if unknown:
            raise BadRequest(f"unknown keys for {model.__name__}: {sorted(unknown)}")
    try:
        return parse_obj_as(model, body)
    except Exception as exc:  # pydantic ValidationError and friends
        raise BadRequest(f"{model.__name__}: {exc}") from None


def _any_value(v: Any) -> Any:
    kind = v.WhichOneof("value")
    if kind == "array_value":
        return [_any_value(x) for x in v.array_value.values]
    if kind == "kvlist_value":
        return {kv.key: _any_value(kv.value) for kv in v.kvlist_value.values}
    if kind == "bytes_value":
        return v.bytes_value.hex()
    return getattr(v, kind) if kind else None


def decode_otlp(body: bytes) -> list[dict[str, Any]]:
    """Flatten an OTLP ``ExportTraceServiceRequest`` into span dicts with decoded attributes."""
    req = ExportTraceServiceRequest()
    req.ParseFromString(body)
    spans = []
    for rs in req.resource_spans:
        resource = {a.key: _any_value(a.value) for a in rs.resource.attributes}
        for ss in rs.scope_spans:
            scope_attrs = {a.key: _any_value(a.value) for a in ss.scope.attributes}
            for sp in ss.spans:
                attrs = {a.key: _any_value(a.value) for a in sp.attributes}
                for key, value in list(attrs.items()):
                    # the SDK JSON-encodes input/output/usage/cost/metadata values
                    if key.startswith("langfuse.observation.") and isinstance(value, str):
                        with contextlib.suppress(ValueError):
                            attrs[key] = json.loads(value)
                spans.append({
                    "trace_id": sp.trace_id.hex(), "span_id": sp.span_id.hex(),
                    "parent_span_id": sp.parent_span_id.hex() or None, "name": sp.name,
                    "start_ns": sp.start_time_unix_nano, "end_ns": sp.end_time_unix_nano,
                    "attributes": attrs, "resource": resource, "scope": ss.scope.name,
                    "scope_attributes": scope_attrs,
                })
    return spans


@dataclass
class StandinState:
    """What the stand-in received and keeps, inspected by tests."""

    requests: list[dict[str, Any]] = field(default_factory=list)
    spans: list[dict[str, Any]] = field(default_factory=list)
    observations: dict[str, dict[str, Any]] = field(default_factory=dict)
    score_posts: list[dict[str, Any]] = field(default_factory=list)
    scores: dict[str, dict[str, Any]] = field(default_factory=dict)
    score_configs: dict[str, dict[str, Any]] = field(default_factory=dict)
    prompts: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    datasets: dict[str, dict[str, Any]] = field(default_factory=dict)
    dataset_items: dict[str, dict[str, Any]] = field(default_factory=dict)
    rejected: list[str] = field(default_factory=list)
    queues: dict[str, dict[str, Any]] = field(default_factory=dict)
    experiments: dict[str, dict[str, Any]] = field(default_factory=dict)
    experiment_items: dict[tuple[str, str], dict[str, Any]] = field(default_factory=dict)
    authors: dict[str, str] = field(default_factory=dict)  # score id -> authorUserId (UI scores)

    @property
    def traces(self) -> set[str]:
        """Trace ids that have at least one observation."""
        return {o["trace_id"] for o in self.observations.values()}


class _QuietServer(ThreadingHTTPServer):
    """A client that hangs up mid-response (a timed-out SDK) is normal here, not an error to print.

    Printing it would also land in whatever stderr a concurrently running CliRunner test captures.
    """

    def handle_error(self, request: Any, client_address: Any) -> None:
        import sys

        if isinstance(sys.exc_info()[1], ConnectionError):
            return
        super().handle_error(request, client_address)


class LangfuseStandin:
    """The stand-in server; ``base_url`` stays the same across ``stop()``/``start()``."""

    def __init__(self, *, public_key: str = PUBLIC_KEY, secret_key: str = SECRET_KEY) -> None:
        self.public_key = public_key
        self.secret_key = secret_key
        self.state = StandinState()
        self.delay_s = 0.0
        #: Answer every request with this status (a Langfuse outage: 500 with headers and body).
        self.fail_status: int | None = None
        self.lock = threading.RLock()
        self.port = 0
        self._server: ThreadingHTTPServer | None = None
        self.connections: set[socket.socket] = set()

    # lifecycle ---------------------------------------------------------------------------------
    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> LangfuseStandin:
        handler = type("Handler", (_Handler,), {"standin": self})
        server = _QuietServer(("127.0.0.1", self.port), handler)
        server.daemon_threads = True
        self.port = server.server_address[1]
        self._server = server
        threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05},
                         daemon=True).start()
        return self

    def stop(self) -> None:
        """Go down like a crashed server: no listener and every open connection reset."""
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None
        with self.lock:
            conns, self.connections = list(self.connections), set()
        for conn in conns:
            try:
                conn.shutdown(socket.SHUT_RDWR)
                conn.close()
            except OSError:
                pass

    def reset(self) -> None:
        with self.lock:
            self.state = StandinState()
            self.delay_s = 0.0
            self.fail_status = None

    # request bodies as received (for masking assertions) --------------------------------------
    def received_text(self) -> str:
        """Every decoded body received so far, as one string."""
        with self.lock:
            return json.dumps([r.get("body") for r in self.state.requests], default=str)

    # handlers ----------------------------------------------------------------------------------
    def handle(self, method: str, path: str, query: dict[str, str], headers: Any,
               raw: bytes) -> tuple[int, Any, str]:
        expected = "Basic " + base64.b64encode(
            f"{self.public_key}:{self.secret_key}".encode()).decode()
        if headers.get("Authorization") != expected:
            return 401, {"message": "Invalid credentials"}, "json"
        if method == "POST" and path == "/api/public/otel/v1/traces":
            return self._otel(headers, raw)
        body = json.loads(raw) if raw else None
        with self.lock:
            self.state.requests.append({"method": method, "path": path, "query": query,
                                        "body": body})
            try:
                return self._route(method, path, query, body)
            except BadRequest as exc:
                self.state.rejected.append(str(exc))
                return 400, {"message": str(exc)}, "json"

    def _otel(self, headers: Any, raw: bytes) -> tuple[int, Any, str]:
        if headers.get("x-langfuse-ingestion-version") != "4":
            return 400, {"message": "x-langfuse-ingestion-version 4 required"}, "json"
        if headers.get("Content-Type") != "application/x-protobuf":
            return 415, {"message": "protobuf expected"}, "json"
        if headers.get("Content-Encoding") == "gzip":
            raw = gzip.decompress(raw)
        spans = decode_otlp(raw)
        with self.lock:
            self.state.requests.append({"method": "POST", "path": "/api/public/otel/v1/traces",
                                        "query": {}, "body": spans})
            self.state.spans.extend(spans)
            for sp in spans:
                self.state.observations[sp["span_id"]] = sp
            for sp in spans:
                if EXP + "id" in sp["attributes"]:
                    problem = self._experiment_span(sp)
                    if problem:
                        self.state.rejected.append(problem)
        return 200, ExportTraceServiceResponse().SerializeToString(), "protobuf"

    # dataset runs (experiments) ------------------------------------------------------------------
    def _experiment_span(self, sp: dict[str, Any]) -> str | None:
        a = sp["attributes"]
        missing = [k for k in ("id", "name", "item.id", "item.root_observation_id")
                   if not a.get(EXP + k)]
        if missing:
            return f"experiment span {sp['name']}: missing {missing}"
        if a.get("langfuse.environment") != "sdk-experiment":
            return f"experiment span {sp['name']}: environment {a.get('langfuse.environment')!r}"
        eid, dataset_id, item_id = a[EXP + "id"], a.get(EXP + "dataset.id"), a[EXP + "item.id"]
        if dataset_id:
            ds = next((d for d in self.state.datasets.values() if d["id"] == dataset_id), None)
            if ds is None:
                return f"experiment {eid}: unknown dataset {dataset_id}"
            item = self.state.dataset_items.get(item_id)
            if item is None or item["datasetId"] != dataset_id:
                return f"experiment {eid}: {item_id} is not an item of dataset {ds['name']}"
            expected = experiment_id_for(PROJECT_ID, dataset_id, a[EXP + "name"])
            if eid != expected:
                return f"experiment {eid}: the server derives {expected} for this dataset and name"
        for other in self.state.observations.values():
            b = other["attributes"]
            if other["trace_id"] == sp["trace_id"] and EXP + "id" in b and (
                    b[EXP + "id"], b[EXP + "item.id"]) != (eid, item_id):
                return f"trace {sp['trace_id']}: spans disagree on its experiment item"
        if sp["span_id"] != a[EXP + "item.root_observation_id"]:
            return None
        item_row = _out(ExperimentItem, {
            "id": sp["span_id"], "traceId": sp["trace_id"],
            "startTime": _iso(sp["start_ns"]), "endTime": _iso(sp["end_ns"]),
            "level": a.get("langfuse.observation.level") or "DEFAULT",
            "environment": a["langfuse.environment"], "experimentId": eid,
            "experimentName": a[EXP + "name"], "experimentItemId": item_id,
            "experimentDatasetId": dataset_id,
            "input": a.get("langfuse.observation.input"),
            "output": a.get("langfuse.observation.output"),
            "expectedOutput": _json(a.get(EXP + "item.expected_output")),
            "experimentItemMetadata": _json(a.get(EXP + "item.metadata")),
            "experimentMetadata": _json(a.get(EXP + "metadata")),
            "experimentDescription": a.get(EXP + "description")})
        exp = self.state.experiments.setdefault(eid, {
            "id": eid, "name": a[EXP + "name"], "datasetId": dataset_id,
            "description": a.get(EXP + "description"),
            "metadata": _json(a.get(EXP + "metadata"))})
        if exp["name"] != a[EXP + "name"]:
            return f"experiment {eid}: named {exp['name']!r} and {a[EXP + 'name']!r}"
        self.state.experiment_items[(eid, item_id)] = item_row
        return None

    def _list_experiments(self, query: dict[str, str]) -> tuple[int, Any, str]:
        if not query.get("fromStartTime"):
            raise BadRequest("fromStartTime is required")
        rows = []
        for eid, exp in self.state.experiments.items():
            if query.get("name") and exp["name"] not in query["name"].split(","):
                continue
            if query.get("datasetId") and exp["datasetId"] not in query["datasetId"].split(","):
                continue
            items = [i for (e, _), i in self.state.experiment_items.items() if e == eid]
            rows.append({**exp, "itemCount": len(items),
                         "startTime": min(i["startTime"] for i in items),
                         "endTime": max(i["endTime"] for i in items)})
        return 200, _out(ExperimentsResponse, {"data": rows, "meta": {}}), "json"

    def _list_experiment_items(self, query: dict[str, str]) -> tuple[int, Any, str]:
        if not query.get("fromStartTime"):
            raise BadRequest("fromStartTime is required")
        wanted = {k: query[q].split(",") for k, q in (
            ("experimentId", "experimentId"), ("experimentName", "experimentName"),
            ("experimentDatasetId", "datasetId")) if query.get(q)}
        rows = [i for i in self.state.experiment_items.values()
                if all(i.get(k) in v for k, v in wanted.items())]
        return 200, _out(ExperimentItemsResponse, {"data": rows, "meta": {}}), "json"

    def _route(self, method: str, path: str, query: dict[str, str],
               body: Any) -> tuple[int, Any, str]:
        p = "/api/public"
        if method == "POST" and path == f"{p}/scores":
            return self._scores(body)
        if path == f"{p}/score-configs":
            return self._score_configs(method, query, body)
        if path == f"{p}/projects" and method == "GET":
            return 200, _out(Projects, {"data": [{
                "id": PROJECT_ID, "name": "standin", "metadata": {},
                "organization": {"id": "org", "name": "org"}}]}), "json"
        m = re.fullmatch(rf"{p}/v2/prompts/(?P<name>[^/]+)/versions/(?P<v>\d+)", path)
        if m and method == "PATCH":
            return self._promote(unquote(m["name"]), int(m["v"]), body)
        m = re.fullmatch(rf"{p}/v2/prompts/(?P<name>[^/]+)", path)
        if m and method == "GET":
            return self._get_prompt(unquote(m["name"]), query)
        if path == f"{p}/v2/prompts" and method == "POST":
            return self._create_prompt(body)
        if path == f"{p}/v2/datasets" and method == "POST":
            return self._create_dataset(body)
        m = re.fullmatch(rf"{p}/v2/datasets/(?P<name>[^/]+)", path)
        if m and method == "GET":
            ds = self.state.datasets.get(unquote(m["name"]))
            return (200, _out(Dataset, ds), "json") if ds else _not_found("dataset")
        if path == f"{p}/annotation-queues" and method == "POST":
            return self._create_queue(body)
        m = re.fullmatch(rf"{p}/annotation-queues/(?P<qid>[^/]+)/items", path)
        if m and method == "POST":
            return self._create_queue_item(m["qid"], body)
        if m and method == "GET":
            return self._list_queue_items(m["qid"], query)
        if path == f"{p}/v3/scores" and method == "GET":
            return self._get_scores_v3(query)
        if path == f"{p}/dataset-items" and method == "POST":
            return self._create_item(body)
        if path == f"{p}/dataset-items" and method == "GET":
            return self._list_items(query)
        if path == f"{p}/experiments" and method == "GET":
            return self._list_experiments(query)
        if path == f"{p}/experiment-items" and method == "GET":
            return self._list_experiment_items(query)
        return _not_found(path)

    # annotation queues -------------------------------------------------------------------------
    def _create_queue(self, body: Any) -> tuple[int, Any, str]:
        validate(CreateAnnotationQueueRequest, body)
        for cid in body["scoreConfigIds"]:
            if cid not in self.state.score_configs:
                raise BadRequest(f"unknown score config {cid}")
        qid = f"queue-{len(self.state.queues) + 1}"
        now = _now()
        queue = {"id": qid, "name": body["name"], "description": body.get("description"),
                 "scoreConfigIds": body["scoreConfigIds"], "createdAt": now, "updatedAt": now}
        self.state.queues[qid] = {**queue, "items": []}
        return 200, _out(AnnotationQueue, queue), "json"

    def _create_queue_item(self, qid: str, body: Any) -> tuple[int, Any, str]:
        validate(CreateAnnotationQueueItemRequest, body)
        if qid not in self.state.queues:
            return _not_found("annotation queue")
        now = _now()
        item = {"id": f"{qid}-item-{len(self.state.queues[qid]['items']) + 1}", "queueId": qid,
                "objectId": body["objectId"], "objectType": body["objectType"],
                "status": body.get("status") or "PENDING", "createdAt": now, "updatedAt": now}
        self.state.queues[qid]["items"].append(item)
        return 200, _out(AnnotationQueueItem, item), "json"

    def _list_queue_items(self, qid: str, query: dict[str, str]) -> tuple[int, Any, str]:
        if qid not in self.state.queues:
            return _not_found("annotation queue")
        rows = self.state.queues[qid]["items"]
        page, limit = int(query.get("page", 1)), int(query.get("limit", 50))
        chunk = rows[(page - 1) * limit: page * limit]
        return 200, _out(PaginatedAnnotationQueueItems,
                         {"data": chunk, "meta": _meta(page, limit, len(rows))}), "json"

    # lawyers scoring in the Langfuse UI -----------------------------------------------------------
    def annotate(self, *, trace_id: str, name: str, value: float | str, author: str,
                 queue_id: str | None = None, comment: str | None = None,
                 when: str = "2026-11-20T10:00:00+00:00") -> str:
        """Record a score as a lawyer's click in an annotation queue does: ``source=ANNOTATION``,
        the score config of ``name``, the queue and the author. Validated like a POST body."""
        with self.lock:
            cfg = next((c for c in self.state.score_configs.values() if c["name"] == name), None)
            if cfg is None:
                raise BadRequest(f"no score config named {name}: create the configs first")
            sid = uuid.uuid5(uuid.NAMESPACE_URL, f"{trace_id}:{name}:{author}").hex
            body = {"id": sid, "traceId": trace_id, "name": name, "value": value,
                    "dataType": cfg["dataType"], "configId": cfg["id"], "source": "ANNOTATION",
                    "queueId": queue_id, "comment": comment, "timestamp": when}
            body = {k: v for k, v in body.items() if v is not None}
            validate(CreateScoreRequest, body)
            problem = self._score_problem(body)
            if problem:
                raise BadRequest(problem)
            self.state.scores[sid] = body
            self.state.authors[sid] = author
            return sid

    def _score_v3(self, sid: str, s: dict[str, Any], fields: set[str]) -> dict[str, Any]:
        value: Any = s["value"]
        if s.get("dataType") == "BOOLEAN":
            value = bool(value)
        out: dict[str, Any] = {
            "id": sid, "projectId": PROJECT_ID, "name": s["name"], "value": value,
            "dataType": s.get("dataType") or ("NUMERIC" if isinstance(value, float | int)
                                              else "CATEGORICAL"),
            "source": s.get("source") or "API", "timestamp": s.get("timestamp") or _now(),
            "environment": s.get("environment") or "default", "createdAt": _now(),
            "updatedAt": _now()}
        if "details" in fields:
            out.update(comment=s.get("comment"), configId=s.get("configId"),
                       metadata=s.get("metadata"))
        if "annotation" in fields:
            out.update(authorUserId=self.state.authors.get(sid), queueId=s.get("queueId"))
        if "subject" in fields and s.get("traceId"):
            out["subject"] = {"kind": "trace", "id": s["traceId"]}
        return out

    def _get_scores_v3(self, query: dict[str, str]) -> tuple[int, Any, str]:
        limit = int(query.get("limit", 50))
        if limit > 100:
            raise BadRequest("limit greater than 100")
        fields = set(filter(None, query.get("fields", "").split(",")))
        if fields - {"details", "subject", "annotation"}:
            raise BadRequest(f"unknown field groups {sorted(fields)}")

        def wanted(key: str, value: Any) -> bool:
            allowed = query.get(key)
            return allowed is None or str(value).lower() in {
                v.lower() for v in allowed.split(",")}

        rows = [(sid, sc) for sid, sc in sorted(self.state.scores.items())
                if wanted("source", sc.get("source") or "API") and wanted("name", sc["name"])
                and wanted("traceId", sc.get("traceId")) and wanted("queueId", sc.get("queueId"))]
        start = int(base64.urlsafe_b64decode(query["cursor"]).decode()) if query.get("cursor") else 0
        chunk = rows[start:start + limit]
        meta: dict[str, Any] = {"limit": limit}
        if start + limit < len(rows):
            meta["cursor"] = base64.urlsafe_b64encode(str(start + limit).encode()).decode()
        return 200, _out(GetScoresV3Response, {
            "data": [self._score_v3(sid, sc, fields) for sid, sc in chunk], "meta": meta}), "json"

    # scores ------------------------------------------------------------------------------------
    def _scores(self, body: Any) -> tuple[int, Any, str]:
        if not isinstance(body, list):
            raise BadRequest("POST /scores takes a JSON array")
        errors = []
        self.state.score_posts.append({"n": len(body)})
        for raw in body:
            validate(CreateScoreRequest, raw)
            problem = self._score_problem(raw)
            if problem:
                errors.append({"message": problem})
                self.state.rejected.append(problem)
                continue
            self.state.scores[raw.get("id") or uuid.uuid4().hex] = raw
        if errors:
            return 207, {"accepted": len(body) - len(errors), "rejected": len(errors),
                         "errors": errors}, "json"
        return 202, {"message": "Accepted"}, "json"

    def _score_problem(self, s: dict[str, Any]) -> str | None:
        cid = s.get("configId")
        if s.get("source") == "ANNOTATION" and not cid:
            return f"score {s['name']}: ANNOTATION needs configId"
        if not cid:
            return None
        cfg = self.state.score_configs.get(cid)
        if cfg is None:
            return f"score {s['name']}: unknown config {cid}"
        if cfg["name"] != s["name"]:
            return f"score {s['name']}: name differs from config {cfg['name']}"
        value = s["value"]
        if cfg["dataType"] == "NUMERIC":
            lo, hi = cfg.get("minValue"), cfg.get("maxValue")
            if not isinstance(value, int | float) or (lo is not None and value < lo) or (
                    hi is not None and value > hi):
                return f"score {s['name']}: {value!r} outside [{lo}, {hi}]"
        elif cfg["dataType"] == "BOOLEAN":
            if value not in (0, 1):
                return f"score {s['name']}: boolean must be 0/1"
        elif cfg["dataType"] == "CATEGORICAL":
            labels = [c["label"] for c in cfg.get("categories") or []]
            if value not in labels:
                return f"score {s['name']}: {value!r} not in {labels}"
        return None

    def _score_configs(self, method: str, query: dict[str, str],
                       body: Any) -> tuple[int, Any, str]:
        if method == "POST":
            req = validate(CreateScoreConfigRequest, body)
            if len(req.name) > 35:
                raise BadRequest("score config name longer than 35 characters")
            if any(c["name"] == req.name for c in self.state.score_configs.values()):
                raise BadRequest(f"score config {req.name} exists")
            cfg = {"id": uuid.uuid4().hex, "createdAt": _now(), "updatedAt": _now(),
                   "projectId": PROJECT_ID, "isArchived": False, **body}
            if req.data_type == "BOOLEAN":
                cfg["categories"] = [{"label": "True", "value": 1}, {"label": "False", "value": 0}]
            self.state.score_configs[cfg["id"]] = cfg
            return 200, _out(ScoreConfig, cfg), "json"
        if method != "GET":
            return _not_found("score-configs")
        page, limit = int(query.get("page", 1)), int(query.get("limit", 50))
        rows = list(self.state.score_configs.values())
        chunk = rows[(page - 1) * limit: page * limit]
        return 200, _out(ScoreConfigs, {"data": chunk, "meta": _meta(page, limit, len(rows))}), \
            "json"

    # prompts -----------------------------------------------------------------------------------
    def _find(self, name: str, version: int | None, label: str | None) -> dict[str, Any] | None:
        for p in self.state.prompts.get(name, []):
            if (version is not None and p["version"] == version) or (
                    version is None and (label or "production") in p["labels"]):
                return p
        return None

    def _resolve(self, text: str, seen: tuple[str, ...] = ()) -> str:
        def sub(m: re.Match[str]) -> str:
            params = dict(part.split("=", 1) for part in m.group(1).split("|") if "=" in part)
            version = int(params["version"]) if "version" in params else None
            dep = self._find(params.get("name", ""), version, params.get("label"))
            if dep is None:
                raise BadRequest(f"Prompt dependency not found: {m.group(0)}")
            if dep["name"] in seen:
                raise BadRequest(f"Circular dependency involving {dep['name']}")
            return self._resolve(dep["prompt"], (*seen, dep["name"]))
        return _DEP.sub(sub, text)

    def _get_prompt(self, name: str, query: dict[str, str]) -> tuple[int, Any, str]:
        version = int(query["version"]) if query.get("version") else None
        found = self._find(name, version, query.get("label"))
        if found is None:
            return _not_found(f"prompt {name}")
        out = dict(found)
        if query.get("resolve", "true") != "false" and _DEP.search(found["prompt"]):
            out["prompt"] = self._resolve(found["prompt"], (name,))
            out["resolutionGraph"] = {"root": {"name": name, "version": found["version"]},
                                      "dependencies": _DEP.findall(found["prompt"])}
        return 200, _out(Prompt_Text, out), "json"

    def _create_prompt(self, body: Any) -> tuple[int, Any, str]:
        req = validate(CreateTextPromptRequest, body)
        self._resolve(req.prompt, (req.name,))  # dependencies must exist, as on the server
        versions = self.state.prompts.setdefault(req.name, [])
        labels = sorted(set(req.labels or []) | {"latest"})
        for old in versions:
            old["labels"] = [lb for lb in old["labels"] if lb not in labels]
        tags = req.tags if req.tags is not None else (versions[-1]["tags"] if versions else [])
        for old in versions:
            old["tags"] = tags
        row = {"type": "text", "name": req.name, "version": len(versions) + 1,
               "prompt": req.prompt, "config": req.config if req.config is not None else {},
               "labels": labels, "tags": tags, "commitMessage": req.commit_message}
        versions.append(row)
        return 200, _out(Prompt_Text, row), "json"

    def _promote(self, name: str, version: int, body: Any) -> tuple[int, Any, str]:
        if not isinstance(body, dict) or set(body) != {"newLabels"}:
            raise BadRequest("PATCH body must be {newLabels: [...]}")
        target = self._find(name, version, None)
        if target is None:
            return _not_found(f"prompt {name} v{version}")
        new = [lb for lb in body["newLabels"] if lb != "latest"]
        for p in self.state.prompts[name]:
            if p is not target:
                p["labels"] = [lb for lb in p["labels"] if lb not in new]
        target["labels"] = sorted(set(target["labels"]) | set(new))
        return 200, _out(Prompt_Text, target), "json"

    # datasets ----------------------------------------------------------------------------------
    def _create_dataset(self, body: Any) -> tuple[int, Any, str]:
        req = validate(CreateDatasetRequest, body)
        ds = self.state.datasets.get(req.name) or {
            "id": uuid.uuid4().hex, "name": req.name, "projectId": PROJECT_ID,
            "createdAt": _now()}
        ds.update({"description": req.description, "metadata": req.metadata,
                   "updatedAt": _now()})
        self.state.datasets[req.name] = ds
        return 200, _out(Dataset, ds), "json"

    def _create_item(self, body: Any) -> tuple[int, Any, str]:
        req = validate(CreateDatasetItemRequest, body)
        ds = self.state.datasets.get(req.dataset_name)
        if ds is None:
            return _not_found(f"dataset {req.dataset_name}")
        item_id = req.id or uuid.uuid4().hex
        old = self.state.dataset_items.get(item_id)
        if old is not None and old["datasetName"] != req.dataset_name:
            raise BadRequest(f"item id {item_id} belongs to another dataset")
        item = {"id": item_id, "status": req.status or "ACTIVE", "input": req.input,
                "expectedOutput": req.expected_output, "metadata": req.metadata,
                "datasetId": ds["id"], "datasetName": ds["name"], "mediaReferences": [],
                "createdAt": old["createdAt"] if old else _now(), "updatedAt": _now()}
        self.state.dataset_items[item_id] = item
        return 200, _out(DatasetItem, item), "json"

    def _list_items(self, query: dict[str, str]) -> tuple[int, Any, str]:
        name = query.get("datasetName")
        rows = [i for i in self.state.dataset_items.values() if i["datasetName"] == name]
        page, limit = int(query.get("page", 1)), int(query.get("limit", 50))
        chunk = rows[(page - 1) * limit: page * limit]
        return 200, _out(PaginatedDatasetItems,
                         {"data": chunk, "meta": _meta(page, limit, len(rows))}), "json"


EXP = "langfuse.experiment."


def experiment_id_for(project_id: str, dataset_id: str, run_name: str) -> str:
    """The server's stable experiment id (what the SDK's ``_create_experiment_id`` mirrors)."""
    payload = json.dumps(["langfuse-experiment-v1", project_id, dataset_id, run_name],
                         separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()[:16]


def _iso(ns: int) -> str:
    return datetime.fromtimestamp(ns / 1e9, UTC).isoformat()


def _json(value: Any) -> Any:
    if isinstance(value, str):
        with contextlib.suppress(ValueError):
            return json.loads(value)
    return value


def _meta(page: int, limit: int, total: int) -> dict[str, int]:
    return {"page": page, "limit": limit, "totalItems": total,
            "totalPages": max(1, -(-total // limit))}


def _out(model: Any, data: Any) -> Any:
    """Build a response through the SDK model, so a wrong shape fails here, not in the client."""
    return parse_obj_as(model, data).dict()


def _not_found(what: str) -> tuple[int, Any, str]:
    return 404, {"message": f"{what} not found", "error": "LangfuseNotFoundError"}, "json"


class _Handler(BaseHTTPRequestHandler):
    standin: LangfuseStandin
    protocol_version = "HTTP/1.1"

    def setup(self) -> None:
        super().setup()
        with self.standin.lock:
            self.standin.connections.add(self.connection)

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - stdlib signature
        return

    def _serve(self, method: str) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        if self.standin.delay_s:
            time.sleep(self.standin.delay_s)
        url = urlsplit(self.path)
        query = {k: v[-1] for k, v in parse_qs(url.query).items()}
        try:
            if self.standin.fail_status is not None:
                status, payload, kind = (self.standin.fail_status,
                                         {"message": "Internal Server Error", "error": "boom",
                                          "trace": "at handler (server.ts:1)\n" * 5}, "json")
            else:
                status, payload, kind = self.standin.handle(method, url.path, query, self.headers,
                                                            raw)
        except Exception as exc:  # a stand-in bug must be visible, not a hang
            status, payload, kind = 500, {"message": f"stand-in error: {exc!r}"}, "json"
        if kind == "protobuf":
            data, ctype = payload, "application/x-protobuf"
        else:
            data = json.dumps(payload, default=lambda d: d.isoformat()).encode()
            ctype = "application/json"
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self) -> None:  # noqa: N802 - stdlib naming
        self._serve("GET")

    def do_POST(self) -> None:  # noqa: N802
        self._serve("POST")

    def do_PATCH(self) -> None:  # noqa: N802
        self._serve("PATCH")

    def do_DELETE(self) -> None:  # noqa: N802
        self._serve("DELETE")
