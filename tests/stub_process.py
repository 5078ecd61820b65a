"""The OpenAI-compatible stub (``legal_judge.devtools.openai_stub``) in a process of its own.

Tests whose runs go through real HTTP in other processes (shards, a killed run, a server restart)
share this one way of starting it on a free port and stopping it.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def stub_process(latency_ms: float) -> Iterator[str]:
    """Start the stub answering after ``latency_ms``; yield its base URL; stop it."""
    proc = subprocess.Popen([sys.executable, "-m", "legal_judge.devtools.openai_stub", "--port",
                             "0", "--latency-ms", str(latency_ms)], stdout=subprocess.PIPE,
                            text=True)
    assert proc.stdout is not None
    port = proc.stdout.readline().split()[1]
    try:
        yield f"http://127.0.0.1:{port}/v1"
    finally:
        proc.terminate()
        proc.wait(10)
