"""Contract tests of the CourtListener client on recorded-shape responses (no network)."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from legal_judge.checks.citations import LookupQuery, check_citations
from legal_judge.checks.courtlistener import (
    TOKEN_ENV,
    CourtListenerLookup,
    InMemoryLookupCache,
    names_match,
)
from legal_judge.errors import AuthError, MissingKeyError, RateLimitError

from ._support import (
    LOOKALIKE_TEXT,
    MATA_CITES,
    NOW,
    TODAY,
    FakeClock,
    entries_handler,
    load_fixture,
    posted_text,
)

TOKEN = "test-token-0123456789"


def _client(handler: Any, fake_clock: FakeClock, **kwargs: Any) -> CourtListenerLookup:
    return CourtListenerLookup(
        token=TOKEN,
        client=httpx.Client(transport=httpx.MockTransport(handler)),
        clock=fake_clock.clock,
        sleep=fake_clock.sleep,
        now=lambda: NOW,
        **kwargs,
    )


def _recorded(name: str, requests: list[httpx.Request]) -> Any:
    fixture = load_fixture(name)

    def handle(request: httpx.Request) -> httpx.Response:
        requests.append(request)
        return httpx.Response(
            fixture["http_status"], json=fixture["body"], headers=fixture.get("headers")
        )

    return handle


def test_200_verified_and_request_shape(fake_clock: FakeClock) -> None:
    requests: list[httpx.Request] = []
    lookup = _client(_recorded("lookup_200_brown.json", requests), fake_clock)
    report = check_citations(
        "Brown v. Board of Education, 347 U.S. 483 (1954).", today=TODAY, lookup=lookup
    )
    (finding,) = report.findings
    assert finding.status == "verified"
    assert finding.lookup is not None and finding.lookup.cluster_ids == [105221]
    assert finding.lookup.name_match is True
    (request,) = requests
    assert request.method == "POST"
    assert str(request.url) == "https://www.courtlistener.com/api/rest/v4/citation-lookup/"
    assert request.headers["Authorization"] == f"Token {TOKEN}"
    assert posted_text(request) == "347 U.S. 483"
    assert report.forces_zero is False


def test_200_with_other_case_name_is_mismatch(fake_clock: FakeClock) -> None:
    requests: list[httpx.Request] = []
    lookup = _client(_recorded("lookup_200_brown.json", requests), fake_clock)
    report = check_citations(
        "Smith v. Acme Widgets, 347 U.S. 483 (1954).", today=TODAY, lookup=lookup
    )
    assert report.findings[0].status == "mismatch"
    assert report.forces_zero is True
    assert "Brown v. Board of Education" in report.forcing_reasons[0]


def test_300_one_name_matches_is_verified_else_ambiguous(fake_clock: FakeClock) -> None:
    lookup = _client(_recorded("lookup_300_ambiguous.json", []), fake_clock)
    hit = lookup.lookup(
        [LookupQuery(normalized="1 U.S. 1", reporter="U.S.", case_name="Smith v. Jones")]
    )
    assert hit["1 U.S. 1"].http_status == 300
    assert hit["1 U.S. 1"].matched_cluster_ids == [84586, 84587]  # "Smith" is in both names
    report = check_citations("Smith v. Jones, 1 U.S. 1 (1759).", today=TODAY, lookup=lookup)
    assert report.findings[0].status == "ambiguous"
    assert report.forces_zero is False
    report = check_citations("Morgan v. Lessee, 1 U.S. 1 (1759).", today=TODAY, lookup=lookup)
    assert report.findings[0].status == "verified"


def test_400_unknown_reporter_stays_unverifiable(fake_clock: FakeClock) -> None:
    lookup = _client(_recorded("lookup_400_unknown_reporter.json", []), fake_clock)
    answer = lookup.lookup([LookupQuery(normalized="33 Umbrella 422", reporter="Umbrella")])
    info = answer["33 Umbrella 422"]
    assert info.http_status == 400
    assert "Umbrella" in info.message


def test_404_on_covered_reporter_is_not_found(fake_clock: FakeClock) -> None:
    lookup = _client(_recorded("lookup_404_not_found.json", []), fake_clock)
    report = check_citations(
        "Okafor v. China Southern Airlines Co., 925 F.3d 1339 (11th Cir. 2019).",
        today=TODAY,
        lookup=lookup,
    )
    assert report.findings[0].status == "not_found"
    assert report.forces_zero is True


def test_http_429_waits_until_then_retries(fake_clock: FakeClock) -> None:
    throttled = load_fixture("lookup_429_throttled.json")
    ok = load_fixture("lookup_404_not_found.json")
    calls: list[int] = []

    def handle(request: httpx.Request) -> httpx.Response:
        calls.append(1)
        if len(calls) == 1:
            return httpx.Response(429, json=throttled["body"], headers=throttled["headers"])
        return httpx.Response(200, json=ok["body"])

    lookup = _client(handle, fake_clock)
    answer = lookup.lookup([LookupQuery(normalized="925 F.3d 1339", reporter="F.3d")])
    assert answer["925 F.3d 1339"].http_status == 404
    assert len(calls) == 2
    assert fake_clock.sleeps == [30.0]  # wait_until is 30 s after NOW


def test_http_429_retry_after_header_when_body_has_no_time(fake_clock: FakeClock) -> None:
    def handle(request: httpx.Request) -> httpx.Response:
        return httpx.Response(429, json={"detail": "throttled"}, headers={"Retry-After": "7"})

    lookup = _client(handle, fake_clock, max_retries=2)
    with pytest.raises(RateLimitError):
        lookup.lookup([LookupQuery(normalized="925 F.3d 1339", reporter="F.3d")])
    assert fake_clock.sleeps == [7.0, 7.0]


def test_per_citation_429_requeues_the_rest(fake_clock: FakeClock) -> None:
    seen: list[str] = []

    def handle(request: httpx.Request) -> httpx.Response:
        text = posted_text(request)
        seen.append(text)
        lines = text.split("\n")
        body = [
            {
                "citation": lines[0],
                "normalized_citations": [lines[0]],
                "start_index": 0,
                "end_index": len(lines[0]),
                "status": 404,
                "error_message": "",
                "clusters": [],
            }
        ]
        if len(lines) > 1:  # over the per-request cap: one 429 entry, then stop
            start = len(lines[0]) + 1
            body.append(
                {
                    "citation": lines[1],
                    "normalized_citations": [],
                    "start_index": start,
                    "end_index": start + len(lines[1]),
                    "status": 429,
                    "error_message": "Too many citations requested.",
                    "clusters": [],
                }
            )
        return httpx.Response(200, json=body)

    lookup = _client(handle, fake_clock)
    queries = [
        LookupQuery(normalized=c, reporter="x") for c in ("1 F.3d 1", "2 F.3d 2", "3 F.3d 3")
    ]
    answer = lookup.lookup(queries)
    assert set(answer) == {"1 F.3d 1", "2 F.3d 2", "3 F.3d 3"}
    assert seen == ["1 F.3d 1\n2 F.3d 2\n3 F.3d 3", "2 F.3d 2\n3 F.3d 3", "3 F.3d 3"]


def test_batches_stay_under_60_per_minute_and_64k_chars(fake_clock: FakeClock) -> None:
    seen: list[str] = []
    lookup = _client(entries_handler({}, seen), fake_clock)
    queries = [LookupQuery(normalized=f"{i} F.3d {i}", reporter="F.3d") for i in range(1, 131)]
    lookup.lookup(queries)
    assert [len(t.split("\n")) for t in seen] == [60, 60, 10]
    assert fake_clock.sleeps == [60.0, 60.0]
    small = _client(entries_handler({}, seen := []), fake_clock, max_chars=40)
    small.lookup(queries[:10])
    assert all(len(t) <= 40 for t in seen) and len(seen) > 1


def test_cache_answers_second_time_without_a_request(fake_clock: FakeClock) -> None:
    seen: list[str] = []
    cache = InMemoryLookupCache()
    lookup = _client(entries_handler({}, seen), fake_clock, cache=cache)
    q = [LookupQuery(normalized="925 F.3d 1339", reporter="F.3d")]
    first = lookup.lookup(q)
    second = lookup.lookup(q)
    assert len(seen) == 1
    assert first["925 F.3d 1339"].cached is False and second["925 F.3d 1339"].cached is True
    assert list(cache.data) == ["courtlistener:v4:925 F.3d 1339"]
    assert TOKEN not in repr(cache.data) and TOKEN not in repr(lookup)


def test_token_from_env_and_missing_token(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(TOKEN_ENV, raising=False)
    with pytest.raises(MissingKeyError) as err:
        CourtListenerLookup.from_env()
    assert TOKEN_ENV in str(err.value)
    monkeypatch.setenv(TOKEN_ENV, TOKEN)
    assert isinstance(CourtListenerLookup.from_env(), CourtListenerLookup)


def test_401_raises_auth_error_naming_the_variable(fake_clock: FakeClock) -> None:
    lookup = _client(lambda r: httpx.Response(401, json={"detail": "Invalid token."}), fake_clock)
    with pytest.raises(AuthError) as err:
        lookup.lookup([LookupQuery(normalized="925 F.3d 1339", reporter="F.3d")])
    assert TOKEN_ENV in str(err.value)
    assert TOKEN not in str(err.value)


def test_names_match_is_lenient_but_not_blind() -> None:
    assert names_match("Estate  Durden v. KLM", ["Durden v. KLM Royal Dutch Airlines"]) is True
    # eyecite parses "Chevron U.S.A. Inc. v. NRDC" as plaintiff "Inc.": the acronym still matches.
    assert (
        names_match("Inc. v. NRDC", ["Chevron U.S.A. Inc. v. Natural Resources Defense Council"])
        is True
    )
    assert (
        names_match("Inc. v. Jones", ["Brown v. Board of Education"]) is None
    )  # one word: too thin
    assert (
        names_match(
            "Varghese v. China Southern Airlines Co.", ["Hartford Steam Boiler v. Pendleton"]
        )
        is False
    )
    assert names_match(None, ["Brown v. Board of Education"]) is None


def test_mata_fabrications_with_lookup_force_zero(fake_clock: FakeClock) -> None:
    # Mata's citations under other names: offline, only a lookup tells them from real cases.
    table = load_fixture("mata_lookup.json")["entries"]
    seen: list[str] = []
    lookup = _client(entries_handler(table, seen), fake_clock)
    offline = check_citations(LOOKALIKE_TEXT, today=TODAY)
    online = check_citations(LOOKALIKE_TEXT, today=TODAY, lookup=lookup)
    assert offline.forces_zero is False
    statuses = {f.normalized: f.status for f in online.findings}
    assert list(statuses) == MATA_CITES
    assert statuses["925 F.3d 1339"] == "not_found"
    assert statuses["2013 IL App (1st) 111279-U"] == "not_found"
    assert statuses["905 F. Supp. 2d 121"] == "not_found"
    assert statuses["174 F.3d 366"] == "mismatch"
    # A 404 on a Westlaw number is not_found too, with a note that coverage is partial.
    assert statuses["2019 WL 4639462"] == "not_found"
    assert statuses["2017 WL 2418825"] == "not_found"
    wl = next(f for f in online.findings if f.normalized == "2019 WL 4639462")
    assert any("only in part" in r.message for r in wl.reasons)
    assert online.forces_zero is True
    assert len(online.forcing_reasons) == 6
    assert seen == ["\n".join(MATA_CITES)]


def test_invalid_citations_are_not_looked_up(fake_clock: FakeClock) -> None:
    seen: list[str] = []
    lookup = _client(entries_handler({}, seen), fake_clock)
    report = check_citations(
        "Doe v. Poe, 123 F.4th 456 (2d Cir. 1995).", today=TODAY, lookup=lookup
    )
    assert report.findings[0].status == "invalid"
    assert seen == []
