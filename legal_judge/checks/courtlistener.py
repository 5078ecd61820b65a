"""CourtListener citation-lookup client (``POST /api/rest/v4/citation-lookup/``).

The token comes from ``COURTLISTENER_TOKEN`` and lives only in the request header (never in the
cache, logs or reports). Citations are sent as compact text (one normalised citation a line),
batched under 64,000 characters and at most 60 citations a minute (the server's throttle);
HTTP 429 waits until ``wait_until`` (or ``Retry-After``); a per-citation 429 entry (over the
per-request cap) re-queues the rest. Answers are cached per citation through
:class:`LookupCache`; cited party names are compared with the returned case names.
"""

from __future__ import annotations

import os
import re
import time
from collections import deque
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from typing import Any, Protocol

import httpx

from legal_judge.checks.citations import LookupQuery
from legal_judge.checks.report import LookupInfo
from legal_judge.checks.rules_data import load_rules
from legal_judge.errors import (
    AuthError,
    BadRequestError,
    MissingKeyError,
    ProviderUnavailable,
    RateLimitError,
)

__all__ = [
    "API_URL",
    "TOKEN_ENV",
    "CourtListenerLookup",
    "InMemoryLookupCache",
    "LookupCache",
    "names_match",
]

API_URL = "https://www.courtlistener.com/api/rest/v4/citation-lookup/"
TOKEN_ENV = "COURTLISTENER_TOKEN"
_PROVIDER = "courtlistener"
_CACHEABLE = {200, 300, 400, 404}


class LookupCache(Protocol):
    """Where lookup answers are kept between runs (the lead wires the SQLite store in)."""

    def get(self, key: str) -> dict[str, Any] | None:
        """Return the cached answer for ``key`` or None."""
        ...

    def put(self, key: str, value: dict[str, Any]) -> None:
        """Store the answer for ``key``."""
        ...


class InMemoryLookupCache:
    """A dict-backed :class:`LookupCache` for tests and one-off runs."""

    def __init__(self) -> None:
        self.data: dict[str, dict[str, Any]] = {}

    def get(self, key: str) -> dict[str, Any] | None:
        """Return the cached answer for ``key`` or None."""
        return self.data.get(key)

    def put(self, key: str, value: dict[str, Any]) -> None:
        """Store the answer for ``key``."""
        self.data[key] = value


_WORDS = re.compile(r"[a-z0-9]+")
_ACRONYM = re.compile(r"\b[A-Z]{2,6}\b")


def _tokens(name: str, stopwords: frozenset[str]) -> set[str]:
    words = _WORDS.findall(name.lower().replace("'", ""))
    return {w for w in words if len(w) > 1 and w not in stopwords}


def _initials(name: str) -> str:
    return "".join(w[0] for w in _WORDS.findall(name.lower()))


def _shares_word(
    cited_words: set[str], acronyms: set[str], candidate: str, stop: frozenset[str]
) -> bool:
    if cited_words & _tokens(candidate, stop):
        return True
    initials = _initials(candidate)
    return any(a in initials for a in acronyms)


def names_match(cited: str | None, candidates: Sequence[str]) -> bool | None:
    """Whether a cited case name shares a significant word with any candidate name.

    Lenient on purpose: eyecite's party names are noisy ("Inc." for "Chevron U.S.A. Inc.",
    "Estate  Durden") and a false mismatch forces a zero. Any shared significant word, or an
    acronym matching a candidate's initials ("NRDC"), counts as a match; a cited name with
    fewer than two significant words is too thin to call a mismatch.

    Returns:
        True or False, or None when there is too little to compare.
    """
    stop = frozenset(load_rules().get("lookup")["name_stopwords"])
    cited_words = _tokens(cited or "", stop)
    if not cited_words or not candidates:
        return None
    acronyms = {w.lower() for w in _ACRONYM.findall(cited or "")}
    if any(_shares_word(cited_words, acronyms, c, stop) for c in candidates):
        return True
    return False if len(cited_words) >= 2 else None


def _cluster_names(cluster: dict[str, Any]) -> list[str]:
    keys = ("case_name", "case_name_short", "case_name_full")
    return [str(cluster[k]) for k in keys if cluster.get(k)]


def _to_info(query: LookupQuery, answer: dict[str, Any], cached: bool) -> LookupInfo:
    clusters = answer.get("clusters") or []
    matched = [c.get("id") for c in clusters if names_match(query.case_name, _cluster_names(c))]
    verdicts = [names_match(query.case_name, _cluster_names(c)) for c in clusters]
    name_match = None if not clusters or all(v is None for v in verdicts) else any(verdicts)
    return LookupInfo(
        http_status=int(answer.get("status", 0)),
        case_names=[c.get("case_name") or "" for c in clusters],
        cluster_ids=[int(c["id"]) for c in clusters if c.get("id") is not None],
        matched_cluster_ids=[int(i) for i in matched if i is not None],
        name_match=name_match,
        cached=cached,
        message=str(answer.get("error_message") or ""),
    )


def _slim(entry: dict[str, Any]) -> dict[str, Any]:
    """Keep what the verdict needs; full cluster objects are large."""
    keep = ("id", "case_name", "case_name_short", "case_name_full", "date_filed", "absolute_url")
    return {
        "status": entry.get("status"),
        "error_message": entry.get("error_message") or "",
        "clusters": [{k: c.get(k) for k in keep} for c in entry.get("clusters") or []],
    }


class CourtListenerLookup:
    """Look case citations up in CourtListener; implements ``CitationLookup``."""

    def __init__(
        self,
        *,
        token: str,
        client: httpx.Client | None = None,
        cache: LookupCache | None = None,
        url: str = API_URL,
        per_minute: int = 60,
        max_chars: int = 64_000,
        max_retries: int = 3,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], None] = time.sleep,
        now: Callable[[], datetime] = lambda: datetime.now(UTC),
    ) -> None:
        self._headers = {"Authorization": f"Token {token}"}
        self._client = client or httpx.Client(timeout=30.0)
        self.cache: LookupCache = cache if cache is not None else InMemoryLookupCache()
        self.url = url
        self.per_minute = per_minute
        self.max_chars = max_chars
        self.max_retries = max_retries
        self._clock, self._sleep, self._now = clock, sleep, now
        self._sent: deque[tuple[float, int]] = deque()
        self.requests_made = 0

    def __repr__(self) -> str:
        return f"CourtListenerLookup(url={self.url!r})"  # never the token

    @classmethod
    def from_env(cls, **kwargs: Any) -> CourtListenerLookup:
        """Build a client with the token from ``COURTLISTENER_TOKEN``.

        Raises:
            MissingKeyError: the variable is not set.
        """
        token = os.environ.get(TOKEN_ENV, "").strip()
        if not token:
            raise MissingKeyError(TOKEN_ENV, provider=_PROVIDER)
        return cls(token=token, **kwargs)

    @staticmethod
    def cache_key(normalized: str) -> str:
        """The cache key of one normalised citation."""
        return f"courtlistener:v4:{normalized}"

    def lookup(self, queries: Sequence[LookupQuery]) -> dict[str, LookupInfo]:
        """Look every query up (cache first); keyed by ``normalized``."""
        unique = {q.normalized: q for q in queries}
        answers: dict[str, tuple[dict[str, Any], bool]] = {}
        todo = []
        for key, query in unique.items():
            hit = self.cache.get(self.cache_key(key))
            if hit is not None:
                answers[key] = (hit, True)
            else:
                todo.append(query)
        for key, answer in self._fetch_all(todo).items():
            if answer.get("status") in _CACHEABLE:
                self.cache.put(self.cache_key(key), answer)
            answers[key] = (answer, False)
        return {k: _to_info(unique[k], a, cached) for k, (a, cached) in answers.items()}

    # ------------------------------------------------------------ batching and throttling

    def _fetch_all(self, queries: list[LookupQuery]) -> dict[str, dict[str, Any]]:
        results: dict[str, dict[str, Any]] = {}
        pending = list(queries)
        while pending:
            batch = self._next_batch(pending)
            pending = pending[len(batch) :]
            answered, requeue = self._post_batch(batch)
            results.update(answered)
            pending = requeue + pending
        return results

    def _next_batch(self, pending: list[LookupQuery]) -> list[LookupQuery]:
        batch: list[LookupQuery] = []
        size = 0
        for q in pending:
            if len(batch) >= self.per_minute or size + len(q.normalized) + 1 > self.max_chars:
                break
            batch.append(q)
            size += len(q.normalized) + 1
        return batch or pending[:1]

    def _wait_for_budget(self, count: int) -> None:
        """Block until sending ``count`` more citations keeps the last minute under the cap."""
        while True:
            now = self._clock()
            while self._sent and now - self._sent[0][0] >= 60.0:
                self._sent.popleft()
            used = sum(n for _, n in self._sent)
            if used + count <= self.per_minute or not self._sent:
                self._sent.append((now, count))
                return
            self._sleep(60.0 - (now - self._sent[0][0]))

    def _post_batch(
        self, batch: list[LookupQuery]
    ) -> tuple[dict[str, dict[str, Any]], list[LookupQuery]]:
        text = "\n".join(q.normalized for q in batch)
        starts, pos = [], 0
        for q in batch:
            starts.append(pos)
            pos += len(q.normalized) + 1
        self._wait_for_budget(len(batch))
        entries = self._request(text)
        answered: dict[str, dict[str, Any]] = {}
        requeue_from: int | None = None
        for entry in entries:
            index = self._entry_index(entry, batch, starts)
            if index is None:
                continue
            if entry.get("status") == 429:
                requeue_from = index if requeue_from is None else min(requeue_from, index)
                continue
            answered[batch[index].normalized] = _slim(entry)
        requeue = batch[requeue_from:] if requeue_from is not None else []
        requeue = [q for q in requeue if q.normalized not in answered]
        return answered, requeue

    @staticmethod
    def _entry_index(
        entry: dict[str, Any], batch: list[LookupQuery], starts: list[int]
    ) -> int | None:
        start = entry.get("start_index")
        if isinstance(start, int):
            for i in range(len(starts) - 1, -1, -1):
                if starts[i] <= start:
                    return i
        wanted = {re.sub(r"\s", "", n) for n in entry.get("normalized_citations") or []}
        for i, q in enumerate(batch):
            if re.sub(r"\s", "", q.normalized) in wanted:
                return i
        return None

    # ------------------------------------------------------------ HTTP

    def _request(self, text: str) -> list[dict[str, Any]]:
        for attempt in range(self.max_retries + 1):
            try:
                resp = self._client.post(self.url, data={"text": text}, headers=self._headers)
            except httpx.HTTPError as exc:
                if attempt == self.max_retries:
                    raise ProviderUnavailable(
                        f"request failed: {type(exc).__name__}", provider=_PROVIDER
                    ) from exc
                self._sleep(2.0**attempt)
                continue
            self.requests_made += 1
            if resp.status_code == 200:
                body = resp.json()
                return body if isinstance(body, list) else []
            self._raise_or_wait(resp, attempt)
        raise RateLimitError("still throttled after retries", provider=_PROVIDER)

    def _raise_or_wait(self, resp: httpx.Response, attempt: int) -> None:
        status = resp.status_code
        if status in (401, 403):
            raise AuthError(
                f"HTTP {status}: token refused",
                provider=_PROVIDER,
                status=status,
                fix=f"set a valid CourtListener API token in {TOKEN_ENV}",
            )
        if status == 429 or status >= 500:
            delay = self._retry_delay(resp) if status == 429 else 2.0**attempt
            if attempt == self.max_retries:
                if status == 429:
                    raise RateLimitError(
                        "HTTP 429 after retries", provider=_PROVIDER, retry_after=delay
                    )
                raise ProviderUnavailable(f"HTTP {status}", provider=_PROVIDER, status=status)
            self._sleep(delay)
            return
        raise BadRequestError(
            f"HTTP {status}: {resp.text[:200]}", provider=_PROVIDER, status=status
        )

    def _retry_delay(self, resp: httpx.Response) -> float:
        """Seconds to wait: the body's ``wait_until`` (docs spell it ``wait_util``), else Retry-After."""
        try:
            body = resp.json()
        except ValueError:
            body = {}
        until = body.get("wait_until") or body.get("wait_util") if isinstance(body, dict) else None
        if until:
            try:
                target = datetime.fromisoformat(str(until).replace("Z", "+00:00"))
                if target.tzinfo is None:
                    target = target.replace(tzinfo=UTC)
                return max(0.0, (target - self._now()).total_seconds())
            except ValueError:
                pass
        retry_after = resp.headers.get("Retry-After", "")
        return float(retry_after) if retry_after.replace(".", "", 1).isdigit() else 60.0
