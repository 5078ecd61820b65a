"""A small headless-Chromium driver over the DevTools protocol on a pipe (stdlib only).

``chromium --remote-debugging-pipe`` reads protocol messages on file descriptor 3 and writes on 4,
each a JSON object followed by a NUL byte: no websocket client, no webdriver, no downloaded
browser. Enough for the report tests: open a file, run a script, click at an element's centre with
real mouse events, switch to print media, print to PDF, and take a screenshot. Every event the
browser sends is kept in ``events`` (e.g. ``Network.requestWillBeSent`` after ``Network.enable``).
"""

from __future__ import annotations

import base64
import contextlib
import fcntl
import json
import os
import select
import shutil
import subprocess
import time
from pathlib import Path
from types import TracebackType
from typing import Any

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")


class BrowserError(RuntimeError):
    """The browser answered with an error, died or did not answer in time."""


class Browser:
    """One headless Chromium with one page; use as a context manager."""

    def __init__(self, profile: Path, *, width: int = 1280, height: int = 1600,
                 timeout_s: float = 60.0) -> None:
        if CHROMIUM is None:
            raise BrowserError("chromium is not installed")
        self.timeout_s = timeout_s
        to_child_r, self._to_child = os.pipe()
        self._from_child, from_child_w = os.pipe()

        def wire() -> None:
            # In the child: the protocol's fixed descriptors 3 and 4 (moved out of the way first,
            # so a pipe end that already sits on 3 or 4 is not overwritten). Runs before the
            # child closes what pass_fds does not keep.
            r, w = fcntl.fcntl(to_child_r, fcntl.F_DUPFD, 10), fcntl.fcntl(from_child_w,
                                                                         fcntl.F_DUPFD, 10)
            os.dup2(r, 3)
            os.dup2(w, 4)

        self.proc = subprocess.Popen(
            [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
             "--disable-background-networking", "--disable-extensions", "--hide-scrollbars",
             "--remote-debugging-pipe", f"--user-data-dir={profile}", "about:blank"],
            pass_fds=(3, 4), preexec_fn=wire,  # noqa: PLW1509 - only moves descriptors
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        os.close(to_child_r)
        os.close(from_child_w)
        self._buf = b""
        self._next = 0
        self.session = ""
        self.console: list[str] = []
        self.events: list[dict[str, Any]] = []
        target = self.call("Target.createTarget", url="about:blank")["targetId"]
        self.session = self.call("Target.attachToTarget", targetId=target,
                                 flatten=True)["sessionId"]
        self.call("Page.enable")
        self.call("Runtime.enable")
        self.call("Emulation.setDeviceMetricsOverride", width=width, height=height,
                  deviceScaleFactor=1, mobile=False)

    # protocol ----------------------------------------------------------------------------------
    def _send(self, method: str, params: dict[str, Any]) -> int:
        self._next += 1
        msg: dict[str, Any] = {"id": self._next, "method": method, "params": params}
        if self.session:
            msg["sessionId"] = self.session
        os.write(self._to_child, json.dumps(msg).encode() + b"\0")
        return self._next

    def _read(self, deadline: float) -> dict[str, Any]:
        while b"\0" not in self._buf:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([self._from_child], [], [], left)[0]:
                raise BrowserError("chromium did not answer in time")
            chunk = os.read(self._from_child, 1 << 20)
            if not chunk:
                raise BrowserError(f"chromium exited: {self._stderr()}")
            self._buf += chunk
        raw, self._buf = self._buf.split(b"\0", 1)
        msg: dict[str, Any] = json.loads(raw)
        if "method" in msg and len(self.events) < 10_000:
            self.events.append(msg)
        if msg.get("method") == "Runtime.consoleAPICalled":
            self.console.append(" ".join(str(a.get("value")) for a in msg["params"]["args"]))
        if msg.get("method") == "Runtime.exceptionThrown":
            self.console.append("exception: " + json.dumps(msg["params"]["exceptionDetails"]))
        return msg

    def _stderr(self) -> str:
        if self.proc.poll() is None or self.proc.stderr is None:
            return ""
        return self.proc.stderr.read().decode(errors="replace")[-2000:]

    def call(self, method: str, **params: Any) -> dict[str, Any]:
        """Send one command and wait for its answer (events that arrive meanwhile are recorded)."""
        want = self._send(method, params)
        deadline = time.monotonic() + self.timeout_s
        while True:
            msg = self._read(deadline)
            if msg.get("id") == want:
                if "error" in msg:
                    raise BrowserError(f"{method}: {msg['error']}")
                return dict(msg.get("result") or {})

    def wait_for(self, method: str) -> dict[str, Any]:
        """Wait for the next event ``method``."""
        deadline = time.monotonic() + self.timeout_s
        while True:
            msg = self._read(deadline)
            if msg.get("method") == method:
                return dict(msg.get("params") or {})

    # page --------------------------------------------------------------------------------------
    def open(self, path: Path) -> None:
        """Load a local file and wait until it has loaded."""
        self.call("Page.navigate", url=path.resolve().as_uri())
        self.wait_for("Page.loadEventFired")

    def js(self, expression: str) -> Any:
        """The value of a JavaScript expression in the page."""
        got = self.call("Runtime.evaluate", expression=expression, returnByValue=True,
                        awaitPromise=True)
        if "exceptionDetails" in got:
            raise BrowserError(f"script failed: {got['exceptionDetails']}")
        return got["result"].get("value")

    def click(self, selector: str) -> None:
        """A real left click (mouse pressed and released) at the centre of ``selector``."""
        box = self.js(
            f"(() => {{ const e = document.querySelector({json.dumps(selector)});"
            " if (!e) return null; e.scrollIntoView({block: 'center'});"
            " const r = e.getBoundingClientRect();"
            " return {x: r.left + r.width / 2, y: r.top + r.height / 2}; })()")
        if box is None:
            raise BrowserError(f"no element {selector}")
        for kind in ("mouseMoved", "mousePressed", "mouseReleased"):
            self.call("Input.dispatchMouseEvent", type=kind, x=box["x"], y=box["y"],
                      button="left", clickCount=1 if kind != "mouseMoved" else 0)

    def media(self, kind: str) -> None:
        """Emulate ``print`` or ``screen`` media."""
        self.call("Emulation.setEmulatedMedia", media=kind)

    def screenshot(self, path: Path, *, full_page: bool = False,
                   max_height: int = 12000) -> None:
        """Write a PNG of the viewport (or of the page, up to ``max_height`` pixels)."""
        params: dict[str, Any] = {"format": "png"}
        if full_page:
            height = min(max_height, int(self.js("document.documentElement.scrollHeight")))
            width = int(self.js("document.documentElement.scrollWidth"))
            params.update(captureBeyondViewport=True,
                          clip={"x": 0, "y": 0, "width": width, "height": height, "scale": 1})
        data = self.call("Page.captureScreenshot", **params)["data"]
        path.write_bytes(base64.b64decode(data))

    def pdf(self) -> bytes:
        """The page printed to PDF (A4, the page's own print CSS)."""
        return base64.b64decode(self.call("Page.printToPDF", preferCSSPageSize=True)["data"])

    # lifecycle ---------------------------------------------------------------------------------
    def close(self) -> None:
        """Close the browser (and kill it if it does not go)."""
        try:
            self.session = ""
            self._send("Browser.close", {})
            self.proc.wait(timeout=10)
        except (OSError, subprocess.TimeoutExpired):
            self.proc.kill()
            self.proc.wait(timeout=10)
        finally:
            for fd in (self._to_child, self._from_child):
                with contextlib.suppress(OSError):
                    os.close(fd)
            if self.proc.stderr is not None:
                self.proc.stderr.close()

    def __enter__(self) -> Browser:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()
