"""A headless Chromium driven over the Chrome DevTools protocol, for looking at mitmweb's UI as a
person does (tests/e2e/test_web_browser.py).

The protocol is JSON over one websocket; aiohttp (already a dependency, for the provider
client) speaks websockets, so no browser-automation package is needed: start the browser with
`--remote-debugging-port=0`, read the port it picked from `DevToolsActivePort` in its fresh
profile directory, attach to its page and send `Page.navigate`, `Runtime.evaluate`,
`Page.captureScreenshot`.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import itertools
import json
import shutil
import subprocess
import time
from pathlib import Path
from typing import Any

import aiohttp

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-proxy-server",  # mitmweb is on 127.0.0.1; never through an environment's proxy
    "--window-size=1400,1000",
    "--remote-debugging-address=127.0.0.1",
    "--remote-debugging-port=0",
]


class BrowserError(AssertionError):
    pass


class Chromium:
    def __init__(self, profile: Path) -> None:
        self.profile = profile
        self.process: subprocess.Popen | None = None
        self.session: aiohttp.ClientSession | None = None
        self.ws: aiohttp.ClientWebSocketResponse | None = None
        self._ids = itertools.count(1)
        self._waiting: dict[int, asyncio.Future] = {}
        self._events: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
        self._reader: asyncio.Task | None = None

    async def start(self, timeout: float = 30.0) -> None:
        assert CHROMIUM is not None
        self.profile.mkdir(parents=True, exist_ok=True)  # a new, empty profile
        self.process = subprocess.Popen(
            [CHROMIUM, *FLAGS, f"--user-data-dir={self.profile}", "about:blank"],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        active = self.profile / "DevToolsActivePort"
        deadline = time.monotonic() + timeout
        while not (active.exists() and active.read_text().strip()):
            if self.process.poll() is not None or time.monotonic() > deadline:
                raise BrowserError("Chromium did not open its DevTools port")
            await asyncio.sleep(0.05)
        port = int(active.read_text().splitlines()[0])
        self.session = aiohttp.ClientSession(trust_env=False)
        async with self.session.get(f"http://127.0.0.1:{port}/json/list") as answer:
            targets = await answer.json()
        page = next(t for t in targets if t.get("type") == "page")
        self.ws = await self.session.ws_connect(page["webSocketDebuggerUrl"], max_msg_size=0)
        self._reader = asyncio.create_task(self._read())
        await self.send("Page.enable")
        await self.send("Runtime.enable")

    async def _read(self) -> None:
        assert self.ws is not None
        async for message in self.ws:
            data = json.loads(message.data)
            waiter = self._waiting.pop(data.get("id", -1), None)
            if waiter is not None and not waiter.done():
                waiter.set_result(data)
            elif "method" in data:
                self._events.put_nowait(data)

    async def send(self, method: str, **params: Any) -> dict[str, Any]:
        assert self.ws is not None
        ident = next(self._ids)
        waiter = asyncio.get_running_loop().create_future()
        self._waiting[ident] = waiter
        await self.ws.send_str(json.dumps({"id": ident, "method": method, "params": params}))
        data = await asyncio.wait_for(waiter, 30)
        if "error" in data:
            raise BrowserError(f"{method}: {data['error']}")
        return data.get("result", {})

    async def navigate(self, url: str, timeout: float = 30.0) -> None:
        while not self._events.empty():
            self._events.get_nowait()
        await self.send("Page.navigate", url=url)
        deadline = time.monotonic() + timeout
        while True:
            event = await asyncio.wait_for(self._events.get(), max(deadline - time.monotonic(), 0))
            if event["method"] == "Page.loadEventFired":
                return

    async def eval(self, expression: str) -> Any:
        result = await self.send(
            "Runtime.evaluate", expression=expression, returnByValue=True, awaitPromise=True
        )
        if "exceptionDetails" in result:
            raise BrowserError(f"{expression[:80]}: {result['exceptionDetails']}")
        return result["result"].get("value")

    async def wait_for(self, expression: str, what: str, timeout: float = 20.0) -> Any:
        """The first truthy value of `expression`, polled until a deadline."""
        deadline = time.monotonic() + timeout
        value = None
        while time.monotonic() < deadline:
            value = await self.eval(expression)
            if value:
                return value
            await asyncio.sleep(0.1)
        body = await self.eval("document.body ? document.body.innerText : ''")
        raise BrowserError(f"never saw {what} (last {value!r}); the page says:\n{body[:3000]}")

    async def screenshot(self, path: Path) -> None:
        result = await self.send("Page.captureScreenshot", format="png")
        path.write_bytes(base64.b64decode(result["data"]))

    async def close(self) -> None:
        if self.ws is not None:
            closing = (BrowserError, TimeoutError, aiohttp.ClientError, ConnectionError)
            with contextlib.suppress(*closing):
                await asyncio.wait_for(self.send("Browser.close"), 5)
            await self.ws.close()
        if self._reader is not None:
            self._reader.cancel()
        if self.session is not None:
            await self.session.close()
        if self.process is not None:
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
