"""The conformance harness: Cursor's official SDK, our proxy in reverse mode in front of a stand-in
for Cursor's account endpoints, and the repo's fake provider behind the proxy.

    SDK driver ──CURSOR_BACKEND_URL──▶ mitmdump + addon (reverse mode)
                                       ├─ Agent RPCs: served, turns on the fake provider
                                       └─ everything else ▶ CursorAccount stand-in

Every piece is on 127.0.0.1 with port 0. The SDK runs in its own interpreter (`sdk_driver.py`);
the fake provider runs on an event loop thread of its own, so tests are plain synchronous code
that waits on the driver's events and the provider's records, each with a deadline.
"""

from __future__ import annotations

import asyncio
import json
import os
import platform
import queue
import subprocess
import threading
from collections.abc import Callable
from collections.abc import Coroutine
from dataclasses import dataclass
from dataclasses import field
from pathlib import Path
from typing import Any

from fakes.fake_provider import FakeProvider
from fakes.fake_provider import RecordedRequest

REPO = Path(__file__).resolve().parents[2]
SDK_NEWEST = "1.1.0"  # the newest release we support: every case runs on it
SDK_OLDEST = "0.1.9"  # the oldest (it bundles @cursor/sdk 1.0.23): the basic cases run on it too
SDK_VERSION = SDK_NEWEST
SDK_VERSIONS = (SDK_NEWEST, SDK_OLDEST)
# Where each version's venv is, when not the default `.cache/cursor-sdk-<version>`
_VENV_ENV = {SDK_NEWEST: "CURSOR_SDK_VENV", SDK_OLDEST: "CURSOR_SDK_OLDEST_VENV"}
DRIVER = Path(__file__).with_name("sdk_driver.py")
KEY_ENV = "FAKE_PROVIDER_KEY"
PROVIDER_KEY = "sk-conformance"
MODEL = "Fake Model"  # openai-chat
CLAUDE = "Fake Claude"  # anthropic, sees images
SMALL = "Fake Small"  # openai-chat with a small window: compacts after a few turns
# How long after the SDK's cancel its provider call must have been aborted, at the latest: the
# goal is under a second with the default settings (bench/bench_cancel.py measures it); this is
# only the generous bound a busy machine still meets, and far below the old default (10 s).
CANCEL_DEADLINE = 5.0


def sdk_venv(version: str = SDK_NEWEST) -> Path:
    """Where `.ci/run` puts a version's venv (or CURSOR_SDK_VENV / CURSOR_SDK_OLDEST_VENV)."""
    default = REPO / ".cache" / f"cursor-sdk-{version}"
    return Path(os.environ.get(_VENV_ENV.get(version, "")) or default)


def sdk_python(version: str = SDK_NEWEST) -> Path:
    return sdk_venv(version) / "bin" / "python"


def wheel_missing_reason() -> str | None:
    """Why this platform has no cursor-sdk wheel (None: it has one).

    Every release publishes one wheel, manylinux_2_17 x86_64 (it bundles a Linux node binary)."""
    if platform.system() != "Linux" or platform.machine() not in ("x86_64", "AMD64"):
        return (
            f"cursor-sdk has no wheel for {platform.system()} "
            f"{platform.machine()} (manylinux x86_64 only)"
        )
    libc, _version = platform.libc_ver()
    if libc != "glibc":
        return f"cursor-sdk needs glibc (manylinux_2_17); this is {libc or 'musl'}"
    return None


def version_tuple(version: str) -> tuple[int, ...]:
    return tuple(int(part) for part in version.split("."))


# --- the fake provider, on a loop of its own ---------------------------------------------------


class ThreadedProvider:
    """`FakeProvider` served from a background event loop, so synchronous tests can script it,
    read what it received and wait for a disconnect."""

    def __init__(self, **kwargs: Any) -> None:
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, daemon=True)
        self._thread.start()
        self.fp: FakeProvider = self.call(self._make(kwargs))
        self.call(self.fp.start())

    async def _make(self, kwargs: dict[str, Any]) -> FakeProvider:
        return FakeProvider(**kwargs)

    def call[T](self, coro: Coroutine[Any, Any, T], timeout: float = 30) -> T:
        return asyncio.run_coroutine_threadsafe(coro, self._loop).result(timeout)

    @property
    def script(self):
        return self.fp.script

    @property
    def requests(self) -> list[RecordedRequest]:
        return self.fp.requests

    @property
    def base_url(self) -> str:
        return self.fp.base_url

    def wait_for_requests(self, count: int, timeout: float = 30) -> None:
        self.call(self.fp.wait_for_requests(count, timeout), timeout + 5)

    def wait_for_disconnect(self, index: int, timeout: float = 30) -> None:
        self.call(self.fp.wait_for_disconnect(index, timeout), timeout + 5)

    def close(self) -> list[str]:
        """Stop serving; returns the violations it saw (invalid requests)."""
        self.call(self.fp.stop())
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(5)
        return self.fp.violations


# --- the SDK -----------------------------------------------------------------------------------


@dataclass
class Turn:
    """What the SDK reported for one `send`: its messages in order and the run result."""

    events: list[dict[str, Any]]
    result: dict[str, Any]
    updates: list[str] = field(default_factory=list)  # interaction update type names, in order
    cancelled_at: float | None = None  # when the driver called run.cancel() (time.monotonic())
    follow_up: Turn | None = None  # the forced follow-up sent while this one ran (force_on)

    @property
    def status(self) -> str:
        return str(self.result.get("status", "")).lower()

    @property
    def text(self) -> str:
        """The assistant text the SDK streamed."""
        parts = []
        for event in self.events:
            if event.get("type") == "assistant":
                for block in (event.get("message") or {}).get("content") or []:
                    if block.get("type") == "text":
                        parts.append(block.get("text", ""))
        return "".join(parts)

    @property
    def error_message(self) -> str:
        """Why the run failed, as the SDK shows it: the run result's `error_message` (SDK
        1.0.33 and later), else the message of the ERROR status event (what older SDKs have)."""
        if self.result.get("error_message"):
            return str(self.result["error_message"])
        for event in reversed(self.events):
            if event.get("type") == "status" and str(event.get("status")).upper() == "ERROR":
                return str(event.get("message") or "")
        return ""

    def tool_calls(self, status: str = "completed") -> list[dict[str, Any]]:
        return [
            e for e in self.events if e.get("type") == "tool_call" and e.get("status") == status
        ]


@dataclass
class SdkDriver:
    """One SDK bridge (one backend URL, one HOME), driven over `sdk_driver.py`'s JSON lines."""

    transport: str  # "runsse" (http:// → RunSSE + BidiAppend) or "run" (https:// → HTTP/2 Run)
    backend_url: str
    home: Path
    workspace: Path
    process: subprocess.Popen[str]
    bridge_log: Path
    version: str = SDK_NEWEST  # the cursor-sdk release this bridge is
    _lines: queue.Queue[dict[str, Any] | None] = field(default_factory=queue.Queue)
    _agents: int = 0
    _output: list[str] = field(default_factory=list)  # what the driver printed besides JSON

    @classmethod
    def start(
        cls,
        transport: str,
        backend_url: str,
        root: Path,
        *,
        ca_file: Path | None = None,
        env: dict[str, str] | None = None,
        version: str = SDK_NEWEST,
    ) -> SdkDriver:
        home = root / "home"
        workspace = root / "workspace"
        home.mkdir(parents=True, exist_ok=True)
        workspace.mkdir(parents=True, exist_ok=True)
        bridge_log = root / "bridge.log"
        environment = {
            k: v
            for k, v in os.environ.items()
            if k.lower() not in ("http_proxy", "https_proxy", "all_proxy")
            and not k.startswith("CURSOR_")
        }
        environment.update(
            HOME=str(home),  # the SDK keeps its stores under ~/.cursor
            CURSOR_BACKEND_URL=backend_url,
            CURSOR_API_KEY="conformance-cursor-key",
            CURSOR_SDK_BRIDGE_LOG="1",
            NO_PROXY="*",  # the Python side's httpx talks to its bridge on 127.0.0.1
            SDK_DRIVER_WORKSPACE=str(workspace),
            SDK_DRIVER_BRIDGE_LOG=str(bridge_log),
            PYTHONUNBUFFERED="1",
        )
        environment.pop("NODE_EXTRA_CA_CERTS", None)
        if ca_file is not None:
            environment["NODE_EXTRA_CA_CERTS"] = str(ca_file)
        environment.update(env or {})
        process = subprocess.Popen(
            [str(sdk_python(version)), str(DRIVER)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            env=environment,
            cwd=root,
        )
        driver = cls(transport, backend_url, home, workspace, process, bridge_log, version)
        threading.Thread(target=driver._pump, daemon=True).start()
        driver._expect(lambda m: "ready" in m, 60)
        return driver

    def _pump(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            try:
                message = json.loads(line)
            except ValueError:
                message = {"output": line.rstrip("\n")}
                self._output.append(line)
            self._lines.put(message)
        self._lines.put(None)

    def _send(self, command: dict[str, Any]) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(json.dumps(command) + "\n")
        self.process.stdin.flush()

    def _next(self, timeout: float) -> dict[str, Any]:
        try:
            message = self._lines.get(timeout=timeout)
        except queue.Empty:
            raise AssertionError(
                f"the SDK driver said nothing for {timeout:.0f} s; bridge log tail:\n"
                + self.log_tail()
            ) from None
        if message is None:
            raise AssertionError(
                "the SDK driver exited:\n"
                + "".join(self._output[-30:])
                + "\nbridge log tail:\n"
                + self.log_tail()
            )
        return message

    def _expect(self, done: Callable[[dict[str, Any]], bool], timeout: float) -> dict[str, Any]:
        while True:
            message = self._next(timeout)
            if "output" in message:
                continue
            if done(message) or "error" in message:
                return message

    def log_tail(self, lines: int = 40) -> str:
        try:
            return "\n".join(self.bridge_log.read_text().splitlines()[-lines:])
        except OSError:
            return "(no bridge log)"

    def agent(self, model: str, *, cwd: Path | None = None, **options: Any) -> str:
        """Create an agent (AgentOptions as a dict); returns its name for `send`."""
        self._agents += 1
        name = f"agent{self._agents}"
        local = {"cwd": str(cwd or self.workspace), **options.pop("local", {})}
        self._send(
            {"op": "agent", "name": name, "options": {"model": model, "local": local, **options}}
        )
        answer = self._expect(lambda m: m.get("agent") == name, 60)
        if "error" in answer:
            raise SdkError(answer["type"], answer["error"])
        return name

    def send(
        self,
        agent: str,
        text: str,
        *,
        images: list[tuple[Path, str]] = (),  # type: ignore[assignment]
        cancel_on: str | None = None,
        force_on: str | None = None,
        force_text: str = "",
        timeout: float = 60,
        on_event: Callable[[dict[str, Any]], None] | None = None,
    ) -> Turn:
        """One turn; returns when the SDK reports the run's result. `force_on`: at that event
        the SDK's forced follow-up (`send(force_text, {"local": {"force": True}})`) is sent; its
        turn is the result's `follow_up`. `on_event` is called with each of the run's SDK
        messages as it comes (e.g. to kill the proxy mid-answer)."""
        self._send(
            {
                "op": "send",
                "agent": agent,
                "text": text,
                "images": [{"path": str(p), "mime": m} for p, m in images],
                "cancel_on": cancel_on,
                "force_on": force_on,
                "force_text": force_text,
            }
        )
        turns = {"": Turn([], {}), "follow_up_": Turn([], {})}
        while True:
            message = self._next(timeout)
            if "error" in message:
                raise SdkError(message["type"], message["error"])
            if "cancelling" in message:
                turns[""].cancelled_at = float(message["cancelling"])
                continue
            if "output" in message:
                continue
            [(key, value)] = message.items()
            prefix = "follow_up_" if key.startswith("follow_up_") else ""
            turn, kind = turns[prefix], key.removeprefix(prefix)
            if kind == "event":
                turn.events.append(value)
                if on_event is not None and not prefix:
                    on_event(value)
            elif kind == "update":
                turn.updates.append(value)
            elif kind == "result":
                turn.result = value
                if not prefix:
                    follow_up = turns["follow_up_"]
                    turn.follow_up = follow_up if follow_up.result else None
                    return turn

    def usage(self, agent: str) -> dict[str, Any]:
        """`agent.get_usage()`: the SDK's AgentUsage as data."""
        self._send({"op": "usage", "agent": agent})
        answer = self._expect(lambda m: "usage" in m, 60)
        if "error" in answer:
            raise SdkError(answer["type"], answer["error"])
        return answer["usage"]

    def close_agent(self, agent: str) -> None:
        self._send({"op": "close", "agent": agent})
        self._expect(lambda m: m.get("closed") == agent, 30)

    def stop(self) -> None:
        if self.process.poll() is None:
            try:
                self._send({"op": "quit"})
                self.process.wait(timeout=15)
            except (OSError, subprocess.TimeoutExpired):
                self.process.kill()
                self.process.wait()


class SdkError(AssertionError):
    """The SDK raised (the driver reports the exception's type and message)."""

    def __init__(self, kind: str, message: str) -> None:
        super().__init__(f"{kind}: {message}")
        self.kind = kind
        self.message = message


_PRINT_VERSION = "import cursor_sdk, importlib.metadata as m; print(m.version('cursor-sdk'))"


def sdk_installed(version: str = SDK_NEWEST) -> bool:
    """The venv has cursor-sdk at exactly this version (a stale venv would test the wrong one)."""
    python = sdk_python(version)
    if not python.exists():
        return False
    probe = subprocess.run(
        [str(python), "-c", _PRINT_VERSION],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    return probe.returncode == 0 and probe.stdout.strip() == version


def provider_user_texts(request: RecordedRequest) -> list[str]:
    """Every text part of every user message in a Chat Completions or Anthropic request."""
    out = []
    for message in (request.json or {}).get("messages", []):
        if message.get("role") != "user":
            continue
        content = message.get("content")
        if isinstance(content, str):
            out.append(content)
        elif isinstance(content, list):
            out += [p.get("text", "") for p in content if isinstance(p, dict)]
    return out


def system_text(request: RecordedRequest) -> str:
    body = request.json or {}
    if isinstance(body.get("system"), str):  # Anthropic
        return body["system"]
    if isinstance(body.get("system"), list):
        return "".join(p.get("text", "") for p in body["system"])
    for message in body.get("messages", []):
        if message.get("role") == "system":
            content = message.get("content")
            return content if isinstance(content, str) else json.dumps(content)
    return ""


def tool_names(request: RecordedRequest) -> list[str]:
    names = []
    for tool in (request.json or {}).get("tools", []):
        names.append(tool.get("name") or (tool.get("function") or {}).get("name", ""))
    return names
