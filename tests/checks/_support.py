"""Shared helpers for the rule-based checks tests: a fixed date, recorded CourtListener shapes."""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs

import httpx

FIXTURES = Path(__file__).parent / "fixtures"
TODAY = date(2026, 11, 29)
NOW = datetime(2026, 11, 29, 12, 0, 0, tzinfo=UTC)

MATA_TEXT = (
    "Varghese v. China Southern Airlines Co., 925 F.3d 1339 (11th Cir. 2019); "
    "Shaboon v. Egyptair, 2013 IL App (1st) 111279-U; "
    "Petersen v. Iran Air, 905 F. Supp. 2d 121 (D.D.C. 2012); "
    "Martinez v. Delta Airlines, Inc., 2019 WL 4639462 (Tex. App. Sept. 25, 2019); "
    "Estate of Durden v. KLM Royal Dutch Airlines, 2017 WL 2418825 (Ga. Ct. App. June 5, 2017); "
    "Miller v. United Airlines, Inc., 174 F.3d 366 (2d Cir. 1999)."
)
# The same six citations under other party names: well-formed fakes that offline knowledge of
# known fabrications (issue 32) does not recognise, so only a lookup can catch them.
LOOKALIKE_TEXT = (
    MATA_TEXT.replace("Varghese", "Okafor").replace("Shaboon", "Haddad")
    .replace("Petersen", "Lindqvist").replace("Martinez", "Alvarado")
    .replace("Durden", "Whitcombe").replace("Miller", "Pruitt")
)
MATA_CITES = [
    "925 F.3d 1339",
    "2013 IL App (1st) 111279-U",
    "905 F. Supp. 2d 121",
    "2019 WL 4639462",
    "2017 WL 2418825",
    "174 F.3d 366",
]


def load_fixture(name: str) -> dict[str, Any]:
    """One recorded-shape JSON file under fixtures/courtlistener."""
    return json.loads((FIXTURES / "courtlistener" / name).read_text(encoding="utf-8"))


def posted_text(request: httpx.Request) -> str:
    """The 'text' field of a form-encoded citation-lookup request."""
    return parse_qs(request.content.decode())["text"][0]


def entries_handler(
    table: dict[str, dict[str, Any]], seen: list[str]
) -> Callable[[httpx.Request], httpx.Response]:
    """A CourtListener stand-in answering each posted line from a table of recorded entries."""

    def handle(request: httpx.Request) -> httpx.Response:
        text = posted_text(request)
        seen.append(text)
        body, pos = [], 0
        for line in text.split("\n"):
            entry = table.get(
                line,
                {"status": 404, "error_message": f"Citation not found: '{line}'", "clusters": []},
            )
            body.append(
                {
                    "citation": line,
                    "normalized_citations": [line],
                    "start_index": pos,
                    "end_index": pos + len(line),
                    **entry,
                }
            )
            pos += len(line) + 1
        return httpx.Response(200, json=body)

    return handle


class FakeClock:
    """Monotonic clock and sleep that advance together, with no real waiting."""

    def __init__(self) -> None:
        self.t = 1000.0
        self.sleeps: list[float] = []

    def clock(self) -> float:
        return self.t

    def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        self.t += seconds
