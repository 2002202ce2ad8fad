"""A headless Chromium for tests, driven over the Chrome DevTools Protocol (CDP) with websocket-client.

``Chromium(binary, profile_dir)`` starts the browser with one tab; ``open(url)`` loads a page and
returns its console errors and the requests that left the disk; ``evaluate`` runs JavaScript in
the page; ``screenshot`` saves a PNG. Use it as a context manager so the browser ends.
"""

from __future__ import annotations

import base64
import json
import subprocess
import time
import urllib.request
from pathlib import Path

import websocket

# The flags this machine needs (closed network, running as root), from the environment notes.
FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--remote-debugging-port=0",
    "--window-size=1280,900",
]
START_TIMEOUT_S = 20
PAGE_TIMEOUT_S = 20
LOCAL_SCHEMES = ("file:", "data:", "about:", "blob:")
# Waits until MathJax (where the page loads it) has typeset the page.
SETTLED = "window.MathJax && MathJax.startup ? MathJax.startup.promise.then(() => true) : true"


class Chromium:
    """A Chromium process with one tab; ``open`` loads a page and reports what went wrong."""

    def __init__(self, binary: str, profile: Path):
        self.process = subprocess.Popen(
            [binary, *FLAGS, f"--user-data-dir={profile}", "about:blank"],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        self.ws = websocket.create_connection(
            _page_socket(profile / "DevToolsActivePort"),
            timeout=PAGE_TIMEOUT_S,
            suppress_origin=True,
        )
        self.next_id, self.events = 0, []
        for domain in ("Page", "Runtime", "Log", "Network"):
            self.call(f"{domain}.enable")

    def __enter__(self) -> Chromium:
        return self

    def __exit__(self, *exc_info) -> None:
        self.close()

    def call(self, method: str, **params) -> dict:
        """Send one CDP command and return its result; events that arrive meanwhile are kept."""
        self.next_id += 1
        self.ws.send(json.dumps({"id": self.next_id, "method": method, "params": params}))
        while True:
            message = json.loads(self.ws.recv())
            if message.get("id") == self.next_id:
                if "error" in message:
                    raise RuntimeError(f"{method}: {message['error']}")
                return message["result"]
            self.events.append(message)

    def wait_for(self, event: str) -> None:
        """Read messages until the event ``event`` has arrived (or the socket times out)."""
        while not any(message.get("method") == event for message in self.events):
            self.events.append(json.loads(self.ws.recv()))

    def open(self, url: str) -> list[str]:
        """Load ``url``, let it settle; return its console errors and requests that left the disk."""
        self.events.clear()
        self.call("Page.navigate", url=url)
        self.wait_for("Page.loadEventFired")
        self.evaluate(SETTLED)
        return [problem for message in self.events if (problem := _problem(message))]

    def evaluate(self, expression: str):
        """The value of a JavaScript expression in the page (promises are awaited)."""
        result = self.call(
            "Runtime.evaluate", expression=expression, returnByValue=True, awaitPromise=True
        )
        if "exceptionDetails" in result:
            raise RuntimeError(f"{expression}: {result['exceptionDetails']}")
        return result["result"].get("value")

    def screenshot(self, path: Path) -> Path:
        """Save what the tab shows now as a PNG file at ``path``."""
        data = self.call("Page.captureScreenshot", format="png")["data"]
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(base64.b64decode(data))
        return path

    def close(self) -> None:
        """Close the connection and end the browser."""
        self.ws.close()
        self.process.terminate()
        self.process.wait(timeout=10)


def _page_socket(port_file: Path) -> str:
    """The websocket address of the browser's first tab, once it writes its DevTools port."""
    deadline = time.monotonic() + START_TIMEOUT_S
    while not port_file.exists() or not port_file.read_text().strip():
        if time.monotonic() > deadline:
            raise TimeoutError(f"Chromium wrote no {port_file.name} in {START_TIMEOUT_S} s")
        time.sleep(0.05)
    port = port_file.read_text().split()[0]
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/json/list", timeout=10) as response:
        targets = json.load(response)
    return next(t["webSocketDebuggerUrl"] for t in targets if t["type"] == "page")


def _problem(message: dict) -> str | None:
    """A line describing a console error, uncaught exception or outside request, else None."""
    method, params = message.get("method"), message.get("params", {})
    if method == "Runtime.exceptionThrown":
        details = params["exceptionDetails"]
        return f"exception: {details.get('exception', {}).get('description', details['text'])}"
    if method == "Runtime.consoleAPICalled" and params["type"] in ("error", "assert"):
        return "console.error: " + " ".join(str(a.get("value", a)) for a in params["args"])
    if method == "Log.entryAdded" and params["entry"]["level"] == "error":
        return f"log: {params['entry']['text']} {params['entry'].get('url', '')}".strip()
    if method == "Network.requestWillBeSent":
        url = params["request"]["url"]
        return None if url.startswith(LOCAL_SCHEMES) else f"request to {url}"
    return None
