"""The integration tier's one llama-cpp-python server (SmolLM2-135M) on 127.0.0.1.

Package scope: every module of the tier talks to the same server, started once (loading the model
and reserving its context costs seconds and about 1.5 GB; each module used to start its own), and
stopped after the tier's last test, not at the end of the session: the server may still be
generating an answer whose client gave up, and would take a core from every test after it. Under
pytest-xdist, ``tests/xdist_groups.py`` runs the whole tier on one worker, so one worker starts it.
"""

from __future__ import annotations

import socket
import subprocess
import sys
import time
from collections.abc import Iterator

import pytest


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture(scope="package")
def llama_server() -> Iterator[str]:
    """The base URL (``.../v1``) of llama-cpp-python's OpenAI-compatible server with SmolLM2."""
    import httpx

    pytest.importorskip("llama_cpp.server", reason="llama-cpp-python[server] is not installed")
    from legal_judge.providers.local import resolve_model_path

    model = resolve_model_path("smollm2")
    port = _free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "llama_cpp.server", "--model", str(model), "--host", "127.0.0.1",
         "--port", str(port), "--n_ctx", "8192", "--verbose", "False"],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    url = f"http://127.0.0.1:{port}/v1"
    deadline = time.time() + 120
    while time.time() < deadline:
        if proc.poll() is not None:
            pytest.fail(f"llama server exited: {proc.stderr.read() if proc.stderr else ''}")
        try:
            if httpx.get(f"{url}/models", timeout=1).status_code == 200:
                break
        except httpx.HTTPError:
            time.sleep(0.2)
    else:
        proc.kill()
        pytest.fail("llama server did not start within 120 s")
    yield url
    proc.terminate()
    try:
        proc.wait(20)
    except subprocess.TimeoutExpired:
        # uvicorn waits for a request still being generated (one whose client gave up): the
        # server's work is over, and a teardown error here failed a passing tier.
        proc.kill()
        proc.wait(20)
