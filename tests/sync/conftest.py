"""The Langfuse stand-in's fixtures (``standin_fixtures.py``, shared with ``tests/contract``)."""

from __future__ import annotations

from standin_fixtures import _standin_server, standin, store

__all__ = ["_standin_server", "standin", "store"]  # fixtures: pytest finds them here
