"""A scripted fake LLM provider on 127.0.0.1 speaking all three wire formats.

    async with FakeProvider() as fp:
        fp.script.tool_calls([("call_1", "Read", {"path": "a.txt"})], reasoning="look first")
        fp.script.text("done")
        provider = make_provider(fp.settings("anthropic"))
        ...
        assert fp.requests[1].json["messages"][-1]["content"][0]["type"] == "tool_result"

- One HTTP/1.1 server (asyncio, port 0, keep-alive) serves `/v1/chat/completions` (OpenAI
  Chat), `/v1/responses` (OpenAI Responses) and `/v1/messages` (Anthropic). `fp.base_url`
  (`http://127.0.0.1:<port>/v1`) works as the base URL of all three adapters.
- `fp.script` is a FIFO of format-neutral steps; each request pops the next one and renders
  it in the wire format of its path, as chunked `text/event-stream`, one SSE event per chunk
  (optionally split in two) with `chunk_delay` seconds between chunks so buffering bugs show.
- Every request is recorded (`fp.requests`) and checked (`RecordedRequest.violations`):
  each tool result follows a call with the same id and every call has a result, no empty
  ids, results follow their calls, Anthropic block ordering, and the reasoning this fake
  emitted (Anthropic signature, Responses encrypted_content, Chat reasoning_content when
  `chat_reasoning_replay=True`) is replayed with the calls it belongs to. Like a real
  provider it answers an invalid request with HTTP 400 (`strict=True`), and on exit the
  context manager raises AssertionError if any violation was seen (`check_on_exit=True`).
- A request with no scripted step left gets HTTP 400 and is recorded as a violation.
- Prompt caching (`prompt_cache.py`): every model request gets `prefix`, the longest
  byte-identical prefix it shares with the previous request of the same conversation. With
  `usage_from_prompt=True` the usage it reports is computed from the request (4 bytes a
  token; cached tokens = the shared prefix), like a real provider's.
- `context_window=N` (tokens, 4 bytes each): a larger prompt gets the provider's real
  `context_length_exceeded` error (OpenAI shape for Chat/Responses, "prompt is too long" for
  Anthropic) and consumes no scripted step.
- `responder`: called with the RecordedRequest when the script is empty; returns the Step
  (lets a test compute answers from what the model was actually sent).
- Loopback only; nothing here touches the network beyond 127.0.0.1.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import json
import logging
import ssl
import time
from collections.abc import Callable
from dataclasses import dataclass
from dataclasses import field
from typing import Any

from .invariants import Emitted
from .invariants import check_replay
from .invariants import check_request
from .prompt_cache import PrefixReport
from .prompt_cache import PrefixTracker
from .prompt_cache import tokens
from .script import Format
from .script import Script
from .script import Step
from .wire import Renderer

__all__ = ["FakeProvider", "RecordedRequest", "Script", "Step", "check_request"]

log = logging.getLogger(__name__)

PATHS: dict[str, Format] = {
    "/chat/completions": "chat",
    "/responses": "responses",
    "/messages": "anthropic",
}
_REASONS = {
    200: "OK",
    400: "Bad Request",
    401: "Unauthorized",
    404: "Not Found",
    429: "Too Many Requests",
    500: "Internal Server Error",
    503: "Service Unavailable",
    529: "Overloaded",
}


@dataclass
class RecordedRequest:
    method: str
    path: str
    format: Format | None
    headers: dict[str, str]
    json: Any
    violations: list[str] = field(default_factory=list)
    step: Step | None = None
    disconnected: bool = False  # the client went away before the response was complete
    disconnected_at: float | None = None  # when (time.monotonic(), one clock for all processes)
    prefix: PrefixReport | None = None
    overflowed: bool = False  # answered with context_length_exceeded
    sent_bytes: int = 0  # body bytes written (giant/trickle steps)


class FakeProvider:
    """The server. See the module docstring for the API."""

    def __init__(
        self,
        *,
        api_key: str | None = None,
        chunk_delay: float = 0.002,
        split_events: bool = True,
        strict: bool = True,
        check_on_exit: bool = True,
        chat_reasoning_replay: bool = False,
        context_window: int | None = None,
        usage_from_prompt: bool = False,
        responder: Callable[[RecordedRequest], Step] | None = None,
        ssl_context: ssl.SSLContext | None = None,
    ) -> None:
        self.script = Script()
        self.ssl_context = ssl_context  # serve HTTPS (a certificate the test made)
        self.requests: list[RecordedRequest] = []
        self.api_key = api_key
        self.chunk_delay = chunk_delay
        self.split_events = split_events
        self.strict = strict
        self.check_on_exit = check_on_exit
        self.chat_reasoning_replay = chat_reasoning_replay
        self.emitted: dict[str, Emitted] = {}
        self.context_window = context_window
        self.usage_from_prompt = usage_from_prompt
        self.responder = responder
        self.prefixes = PrefixTracker()
        self._server: asyncio.Server | None = None
        self._changed = asyncio.Condition()
        self._connections: set[asyncio.Task[None]] = set()
        self.port = 0

    # -- lifecycle

    async def __aenter__(self) -> FakeProvider:
        await self.start()
        return self

    async def __aexit__(self, exc_type: Any, exc: Any, tb: Any) -> None:
        await self.stop()
        if self.check_on_exit and exc_type is None and self.violations:
            raise AssertionError(
                "fake provider saw invalid requests:\n" + "\n".join(self.violations)
            )

    async def start(self) -> None:
        self._server = await asyncio.start_server(self._serve, "127.0.0.1", 0, ssl=self.ssl_context)
        self.port = self._server.sockets[0].getsockname()[1]

    async def stop(self) -> None:
        if self._server is None:
            return
        self._server.close()
        for task in list(self._connections):
            task.cancel()
        for task in list(self._connections):
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
        await self._server.wait_closed()
        self._server = None

    # -- conveniences

    @property
    def base_url(self) -> str:
        scheme = "https" if self.ssl_context else "http"
        return f"{scheme}://127.0.0.1:{self.port}/v1"

    @property
    def violations(self) -> list[str]:
        return [
            f"request {i} ({r.path}): {v}"
            for i, r in enumerate(self.requests)
            for v in r.violations
        ]

    def settings(self, kind: str, **kw: Any):
        """ProviderSettings for `kind` pointing at this server."""
        from cursor_byok.providers import ProviderSettings

        return ProviderSettings(
            kind=kind, base_url=self.base_url, api_key=self.api_key or "sk-fake", **kw
        )

    async def wait_for_requests(self, count: int, timeout: float = 10.0) -> None:
        async with asyncio.timeout(timeout):
            async with self._changed:
                await self._changed.wait_for(lambda: len(self.requests) >= count)

    async def wait_until(
        self, found: Callable[[list[RecordedRequest]], bool], timeout: float = 10.0
    ) -> None:
        """Until `found(requests)` holds (checked on every request recorded)."""
        async with asyncio.timeout(timeout):
            async with self._changed:
                await self._changed.wait_for(lambda: found(self.requests))

    async def wait_for_disconnect(self, index: int, timeout: float = 10.0) -> None:
        """Until the client of request `index` has gone away (cancellation tests)."""
        async with asyncio.timeout(timeout):
            async with self._changed:
                await self._changed.wait_for(
                    lambda: len(self.requests) > index and self.requests[index].disconnected
                )

    # -- HTTP

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._connections.add(task)
        try:
            while await self._one(reader, writer):
                pass
        except (ConnectionError, asyncio.IncompleteReadError, ssl.SSLError):
            pass
        finally:
            self._connections.discard(task)
            writer.close()
            with contextlib.suppress(Exception):
                await writer.wait_closed()

    async def _one(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> bool:
        """Serve one request; False when the connection should close."""
        line = await reader.readline()
        if not line:
            return False
        method, target, _ = line.decode("latin-1").split(" ", 2)
        headers: dict[str, str] = {}
        while (raw := await reader.readline()) not in (b"\r\n", b"\n", b""):
            name, _, value = raw.decode("latin-1").partition(":")
            headers[name.strip().lower()] = value.strip()
        body = await read_body(reader, headers)
        path = target.split("?", 1)[0]
        fmt = next((f for suffix, f in PATHS.items() if path.endswith(suffix)), None)
        try:
            payload = json.loads(body) if body else None
        except ValueError:
            payload = None
        record = RecordedRequest(method, path, fmt, headers, payload)
        await self._record(record)
        if fmt is None or method != "POST":
            await _send_json(writer, 404, {"error": {"message": f"no route {method} {path}"}})
            return True
        if self.api_key and not _authorised(fmt, headers, self.api_key):
            await _send_json(
                writer,
                401,
                json.loads(
                    Renderer(fmt, 0, "").error_body(
                        Step("error", status=401, message="invalid api key")
                    )
                ),
            )
            return True
        if not isinstance(payload, dict):
            record.violations.append("body is not a JSON object")
        else:
            record.violations += check_request(fmt, payload)
            record.violations += check_replay(
                fmt, payload, self.emitted, chat_reasoning=self.chat_reasoning_replay
            )
        if isinstance(payload, dict):
            record.prefix = self.prefixes.observe(fmt, payload)
            used = tokens(record.prefix.prompt_bytes)
            if self.context_window is not None and used > self.context_window:
                record.overflowed = True
                status, body = _overflow(fmt, used, self.context_window)
                await _send_json(writer, status, body)
                return True
        if record.violations and self.strict:
            log.warning("fake provider rejects request: %s", record.violations)
            step = Step("error", status=400, message="; ".join(record.violations))
            await _send_json(writer, 400, json.loads(Renderer(fmt, 0, "").error_body(step)))
            return True
        step = self.script.pop()
        if step is None and self.responder is not None:
            step = self.responder(record)
        if step is not None and self.usage_from_prompt and record.prefix is not None:
            answer = len(step.text) + len(json.dumps([c[2] for c in step.tool_calls]))
            step = dataclasses.replace(
                step,
                usage=(
                    tokens(record.prefix.prompt_bytes),
                    max(1, tokens(answer)),
                    record.prefix.prefix_bytes // 4,
                ),
            )
        record.step = step
        if step is None:
            record.violations.append("unexpected request: the script is empty")
            await _send_json(
                writer, 400, {"error": {"message": "fake provider: no scripted response left"}}
            )
            return True
        n = len(self.requests)
        model = payload.get("model", "fake-model") if isinstance(payload, dict) else "fake-model"
        return await self._respond(writer, reader, record, step, Renderer(fmt, n, str(model)))

    async def _respond(
        self,
        writer: asyncio.StreamWriter,
        reader: asyncio.StreamReader,
        record: RecordedRequest,
        step: Step,
        r: Renderer,
    ) -> bool:
        if step.kind == "error":
            await _send_json(writer, step.status, json.loads(r.error_body(step)), step.headers)
            return True
        if step.kind == "raw":
            chunks, status, headers = step.chunks, step.status, step.headers
        elif step.kind in ("trickle", "endless") and step.text:
            chunks = r.reply(Step("reply", text=step.text), terminate=False)
            status, headers = 200, {}
        elif step.kind in ("empty", "stall", "trickle", "giant"):
            chunks, status, headers = [], 200, {}
        elif step.kind == "stream_error":
            chunks, status, headers = r.stream_error(step), 200, {}
        elif step.kind in ("cut", "hang"):
            chunks, status, headers = (
                r.reply(Step("reply", text=step.text), terminate=False),
                200,
                {},
            )
        else:
            chunks, status, headers = r.reply(step), 200, {}
            for call_id, _, _ in step.tool_calls:
                self.emitted[call_id] = Emitted(
                    r.fmt,
                    step.reasoning,
                    r.signature if step.reasoning else None,
                    r.encrypted if step.reasoning else None,
                )
        head = _head(
            status,
            {
                "content-type": "text/event-stream",
                "cache-control": "no-cache",
                "transfer-encoding": "chunked",
                **headers,
            },
        )
        delay = self.chunk_delay if step.delay is None else step.delay
        try:
            writer.write(head)
            await writer.drain()
            for chunk in chunks:
                for piece in _split(chunk) if self.split_events else [chunk]:
                    writer.write(b"%x\r\n%s\r\n" % (len(piece), piece))
                    await writer.drain()
                    await asyncio.sleep(delay)
            if step.kind == "stall":
                await reader.read()  # nothing is ever sent; returns when the client leaves
                raise ConnectionResetError
            if step.kind == "trickle":
                while True:
                    writer.write(b"e\r\n: keep-alive\n\n\r\n")
                    await writer.drain()
                    record.sent_bytes += 14
                    await asyncio.sleep(step.delay or 0.05)
            if step.kind == "endless":
                while True:  # the last text delta again and again
                    writer.write(b"%x\r\n%s\r\n" % (len(chunks[-1]), chunks[-1]))
                    await writer.drain()
                    record.sent_bytes += len(chunks[-1])
                    await asyncio.sleep(step.delay or 0.01)
            if step.kind == "giant":
                piece = b"data: " + b"a" * (64 * 1024 - 6)
                while record.sent_bytes < step.size:
                    writer.write(b"%x\r\n%s\r\n" % (len(piece), piece))
                    await writer.drain()
                    record.sent_bytes += len(piece)
                    piece = b"a" * (64 * 1024)
            if step.kind == "cut" and step.hard:
                writer.transport.abort()
                return False
            if step.kind == "hang":
                await reader.read()  # returns at EOF: the client closed the stream
                raise ConnectionResetError
            writer.write(b"0\r\n\r\n")
            await writer.drain()
        except ConnectionError:
            record.disconnected = True
            record.disconnected_at = time.monotonic()
            async with self._changed:
                self._changed.notify_all()
            return False
        return True

    async def _record(self, record: RecordedRequest) -> None:
        async with self._changed:
            self.requests.append(record)
            self._changed.notify_all()


def _overflow(fmt: Format, used: int, window: int) -> tuple[int, dict[str, Any]]:
    """The provider's own context-overflow error (status, body)."""
    if fmt == "anthropic":
        return 400, {
            "type": "error",
            "error": {
                "type": "invalid_request_error",
                "message": f"prompt is too long: {used} tokens > {window} maximum",
            },
        }
    return 400, {
        "error": {
            "message": (
                f"This model's maximum context length is {window} tokens. However, your "
                f"messages resulted in {used} tokens. Please reduce the length of the messages."
            ),
            "type": "invalid_request_error",
            "param": "messages" if fmt == "chat" else "input",
            "code": "context_length_exceeded",
        }
    }


def _split(chunk: bytes) -> list[bytes]:
    """Cut an event at an awkward place (inside the JSON) to exercise reassembly."""
    if len(chunk) < 8:
        return [chunk]
    cut = len(chunk) * 2 // 3
    return [chunk[:cut], chunk[cut:]]


def _authorised(fmt: Format, headers: dict[str, str], key: str) -> bool:
    if fmt == "anthropic":
        return headers.get("x-api-key") == key
    return headers.get("authorization") == f"Bearer {key}"


async def read_body(reader: asyncio.StreamReader, headers: dict[str, str]) -> bytes:
    """An HTTP/1.1 request body, chunked or by content-length (the fakes and the bench feeder)."""
    if "chunked" in headers.get("transfer-encoding", "").lower():
        parts = []
        while True:
            size = int((await reader.readline()).split(b";")[0].strip() or b"0", 16)
            if size == 0:
                await reader.readline()
                return b"".join(parts)
            parts.append(await reader.readexactly(size))
            await reader.readline()
    length = int(headers.get("content-length", "0") or 0)
    return await reader.readexactly(length) if length else b""


async def _send_json(
    writer: asyncio.StreamWriter, status: int, body: Any, headers: dict[str, str] | None = None
) -> None:
    data = json.dumps(body).encode()
    fields = {"content-type": "application/json", "content-length": str(len(data))}
    writer.write(_head(status, {**fields, **(headers or {})}) + data)
    await writer.drain()


def _head(status: int, headers: dict[str, str]) -> bytes:
    lines = [f"HTTP/1.1 {status} {_REASONS.get(status, 'Status')}"]
    lines += [f"{k}: {v}" for k, v in headers.items()]
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")
