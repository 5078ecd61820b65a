"""Reporter volume ranges (``reporter_volumes.v1.yaml``): what volumes and years a reporter can
hold, read as the second source against reporters-db.

Pure lookups; the rules that turn them into findings are in ``citation_rules.py``.
"""

from __future__ import annotations

import bisect
import math
from dataclasses import dataclass, field
from datetime import date
from functools import cache
from pathlib import Path
from typing import Any

from legal_judge.assets.catalogue import parse_yaml

__all__ = ["VOLUMES_FILE", "SeriesInfo", "VolumeTable", "load_volumes"]

VOLUMES_FILE = Path(__file__).with_name("reporter_volumes.v1.yaml")


@dataclass(frozen=True)
class SeriesInfo:
    """One reporter series: years, last volume, anchors, page ceiling."""

    name: str
    first_year: int | None
    last_year: int | None
    closed_at: int | None = None
    known: tuple[int, int] | None = None
    max_per_year: int | None = None
    max_page: int | None = None
    nominative_max_volume: int = 0
    anchors: tuple[tuple[int, int], ...] = field(default_factory=tuple)

    def volume_ceiling(self, today: date) -> int | None:
        """The highest volume that can exist on ``today`` (None: nothing is known)."""
        if self.closed_at is not None:
            return self.closed_at
        if self.known is None or self.max_per_year is None:
            return None
        years = max(0, today.year - self.known[1]) + 1
        return self.known[0] + math.ceil(self.max_per_year * years)

    def year_bracket(self, volume: int) -> tuple[tuple[int, int] | None, tuple[int, int] | None]:
        """The nearest anchors at or below and at or above ``volume`` (either may be None)."""
        i = bisect.bisect_right(self.anchors, (volume, 10**9))
        j = bisect.bisect_left(self.anchors, (volume, -1))
        below = self.anchors[i - 1] if i > 0 else None
        above = self.anchors[j] if j < len(self.anchors) else None
        return below, above

    def in_years(self, year: int) -> bool:
        """True when ``year`` is within the series' years (an open end is open)."""
        return (self.first_year or 0) <= year <= (self.last_year or 9999)

    def years_text(self) -> str:
        """"1932-1998" or "2021-now"."""
        return f"{self.first_year or '?'}-{self.last_year or 'now'}"


@dataclass(frozen=True, eq=False)
class VolumeTable:
    """The loaded table."""

    as_of: date
    anchor_slack: int
    series: dict[str, SeriesInfo]

    def get(self, reporter: str) -> SeriesInfo | None:
        """The series for a reporters-db edition abbreviation ("F. Supp. 2d"), or None."""
        return self.series.get(reporter)


def _series(name: str, raw: dict[str, Any]) -> SeriesInfo:
    first, last = raw.get("years") or [None, None]
    known = raw.get("known")
    return SeriesInfo(
        name=name,
        first_year=first,
        last_year=last,
        closed_at=raw.get("closed_at"),
        known=(int(known[0]), int(known[1])) if known else None,
        max_per_year=raw.get("max_per_year"),
        max_page=raw.get("max_page"),
        nominative_max_volume=int(raw.get("nominative_max_volume") or 0),
        anchors=tuple(sorted((int(v), int(y)) for v, y in raw.get("anchors") or ())),
    )


@cache
def load_volumes(path: Path = VOLUMES_FILE) -> VolumeTable:
    """Read the volume table once per process."""
    data = parse_yaml(path.read_text(encoding="utf-8"))
    as_of = data["as_of"]
    return VolumeTable(
        as_of=as_of if isinstance(as_of, date) else date.fromisoformat(str(as_of)),
        anchor_slack=int(data["anchor_slack"]),
        series={name: _series(name, raw) for name, raw in data["reporters"].items()},
    )
