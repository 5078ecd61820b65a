"""Contract tests: the real ``openai``, ``anthropic`` and ``langfuse`` SDKs over HTTP.

Each test here drives a vendor SDK through legal-judge's own adapter or sink against a stand-in
(recorded-shape responses over ``httpx.MockTransport``, or a server on 127.0.0.1) and asserts
what went over the wire and how the answer was read. The provider kit
(``tests/provider_kit.py``) and the Langfuse stand-in's fixtures (``tests/sync/standin_fixtures.py``)
are shared with ``tests/providers`` and ``tests/sync``: one copy each, imported here.
"""

from __future__ import annotations

import sys
from pathlib import Path

from provider_kit import kit, provider_env

# tests/sync is no package: its stand-in and run fixtures are imported by plain name, as the
# journeys and reliability tests do.
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "sync"))

from standin_fixtures import _standin_server, standin, store  # noqa: E402

__all__ = ["_standin_server", "kit", "provider_env", "standin", "store"]
