"""Shared parts of the streaming benchmarks: a feeder server and a cheap raw client.

The feeder (`python bench/streamlib.py feeder`) is one asyncio HTTP/1.1 server on 127.0.0.1 that
plays both ends a proxy can stream from:

- `POST …/chat/completions`: an OpenAI Chat provider streaming N small text deltas (the addon's
  agent calls it; A in bench_streaming.py);
- `POST /agent.v1.AgentService/RunSSE`: an Agent upstream streaming the very Connect frames the
  addon would send for those deltas (one `text_delta` AgentServerMessage per delta, then the
  end-stream envelope; B through plain mitmdump, C direct).

Every delta's text is `t=<time.monotonic_ns()>;`, taken when it is written, so the client can
measure provider-send → client-receive latency on the same clock. One ticker writes the next delta
of every open stream each `interval` (one wake-up per tick, not one per stream), so the feeder
stays cheap at 100 streams. It runs in its own process so it does not share the client's loop.

The client side speaks raw HTTP/1.1 from `asyncio.Protocol`s (CONNECT + TLS through a proxy, or
direct), with a sans-IO chunked/Connect-envelope parser: no httpx, no coroutine per chunk, so one
process can read 100 streams without being the bottleneck.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import re
import ssl
import sys
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from dataclasses import field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "e2e"))
sys.path.insert(0, str(ROOT / "tests"))

from cursor_byok import connect  # noqa: E402
from cursor_byok.bidi import encode_bidi_append  # noqa: E402
from cursor_byok.bidi import encode_run_sse_request  # noqa: E402
from cursor_byok.pb import agent_v1_pb2 as pb  # noqa: E402

TEST_HOST = "api2.cursor.test"  # tests/e2e/mitm.py: the host the addon serves in the tests
RUN_SSE = "/agent.v1.AgentService/RunSSE"
BIDI_APPEND = "/aiserver.v1.BidiService/BidiAppend"
MODEL = "Fake Model"  # tests/e2e/provider_config.py
DELTAS_RE = re.compile(rb"bench-deltas=(\d+)")
STAMP_RE = re.compile(r"t=(\d+);")

# --- feeder (server) ------------------------------------------------------------------------


def _chat_event(delta: str, finish: str | None = None) -> bytes:
    body = {
        "id": "chatcmpl-bench",
        "object": "chat.completion.chunk",
        "created": 0,
        "model": "bench",
        "choices": [{"index": 0, "delta": {"content": delta}, "finish_reason": finish}],
    }
    return b"data: " + json.dumps(body, separators=(",", ":")).encode() + b"\n\n"


def _chunk(data: bytes) -> bytes:
    return b"%x\r\n%s\r\n" % (len(data), data)


_CHAT_HEAD = (
    b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncache-control: no-cache\r\n"
    b"transfer-encoding: chunked\r\n\r\n"
)
_CHAT_TAIL = (
    _chunk(_chat_event("", "stop"))
    + _chunk(
        b'data: {"id":"chatcmpl-bench","object":"chat.completion.chunk","choices":[],'
        b'"usage":{"prompt_tokens":100,"completion_tokens":200,"total_tokens":300}}\n\n'
        b"data: [DONE]\n\n"
    )
    + b"0\r\n\r\n"
)
_SSE_HEAD = (
    b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n"
)
_SSE_TAIL = _chunk(connect.encode_frame_raw(connect.FLAG_END_STREAM, b"{}")) + b"0\r\n\r\n"


def delta_frame(text: str) -> bytes:
    """The Connect envelope the addon sends for one text delta."""
    message = pb.AgentServerMessage(
        interaction_update=pb.InteractionUpdate(text_delta=pb.TextDeltaUpdate(text=text))
    )
    return connect.encode_frame_raw(0, message.SerializeToString())


@dataclass(eq=False)
class _Stream:
    writer: asyncio.StreamWriter
    left: int
    kind: str  # "chat" or "connect"
    done: asyncio.Future


class Feeder:
    """See the module docstring."""

    def __init__(self, deltas: int, interval: float) -> None:
        self.deltas = deltas
        self.interval = interval
        self.active: list[_Stream] = []
        self.wake = asyncio.Event()
        self.streams = 0

    async def serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        with contextlib.suppress(ConnectionError, asyncio.IncompleteReadError, ValueError):
            while True:
                line = await reader.readline()
                if not line:
                    break
                _, target, _ = line.decode("latin-1").split(" ", 2)
                headers: dict[str, str] = {}
                while (raw := await reader.readline()) not in (b"\r\n", b"\n", b""):
                    name, _, value = raw.decode("latin-1").partition(":")
                    headers[name.strip().lower()] = value.strip()
                body = await _read_body(reader, headers)
                match = DELTAS_RE.search(body)
                deltas = int(headers.get("x-bench-deltas") or (match and match.group(1)) or 0)
                deltas = deltas or self.deltas
                if target.endswith("/chat/completions"):
                    writer.write(_CHAT_HEAD + _chunk(_chat_event("")))
                    kind = "chat"
                elif target.endswith(RUN_SSE):
                    writer.write(_SSE_HEAD)
                    kind = "connect"
                else:
                    writer.write(b"HTTP/1.1 404 Not Found\r\ncontent-length: 0\r\n\r\n")
                    continue
                stream = _Stream(writer, deltas, kind, asyncio.get_running_loop().create_future())
                self.streams += 1
                self.active.append(stream)
                self.wake.set()
                if not await stream.done:
                    break
        writer.close()

    async def ticker(self) -> None:
        loop = asyncio.get_running_loop()
        next_at = loop.time()
        while True:
            if not self.active:
                self.wake.clear()
                await self.wake.wait()
                next_at = loop.time()
            next_at += self.interval
            delay = next_at - loop.time()
            if delay > 0:
                await asyncio.sleep(delay)
            else:
                next_at = loop.time()  # fell behind: keep the spacing, do not burst
            for stream in list(self.active):
                self._step(stream)

    def _step(self, stream: _Stream) -> None:
        if stream.writer.is_closing():
            self.active.remove(stream)
            stream.done.set_result(False)
            return
        text = f"t={time.monotonic_ns()};"
        data = _chunk(_chat_event(text)) if stream.kind == "chat" else _chunk(delta_frame(text))
        stream.left -= 1
        if stream.left <= 0:
            data += _CHAT_TAIL if stream.kind == "chat" else _SSE_TAIL
            self.active.remove(stream)
            stream.done.set_result(True)
        stream.writer.write(data)


async def _read_body(reader: asyncio.StreamReader, headers: dict[str, str]) -> bytes:
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


async def run_feeder(deltas: int, interval: float) -> None:
    feeder = Feeder(deltas, interval)
    server = await asyncio.start_server(feeder.serve, "127.0.0.1", 0, backlog=1024)
    print(f"feeder port {server.sockets[0].getsockname()[1]}", flush=True)
    ticker = asyncio.ensure_future(feeder.ticker())
    loop = asyncio.get_running_loop()
    stdin_closed = loop.create_future()  # the parent closes our stdin (or dies): stop
    reader = asyncio.StreamReader()
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
    with contextlib.suppress(Exception):
        await reader.read()
    stdin_closed.cancel()
    ticker.cancel()
    server.close()


class FeederProcess:
    """The feeder in a child process (its own core time, its own event loop)."""

    def __init__(self, deltas: int = 200, interval: float = 0.005) -> None:
        import subprocess

        self.process = subprocess.Popen(
            [
                sys.executable,
                str(Path(__file__).resolve()),
                "feeder",
                "--deltas",
                str(deltas),
                "--interval",
                str(interval),
            ],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        assert self.process.stdout is not None
        line = self.process.stdout.readline()
        if not line.startswith("feeder port "):
            raise RuntimeError(f"feeder did not start: {line!r}")
        self.port = int(line.split()[-1])

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def stop(self) -> None:
        if self.process.stdin is not None:
            self.process.stdin.close()
        try:
            self.process.wait(timeout=5)
        except Exception:
            self.process.kill()
            self.process.wait()


# --- /proc figures ----------------------------------------------------------------------------


def cpu_seconds(pid: int) -> float:
    """utime + stime of a process (not its children), seconds."""
    import os

    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def status_kib(pid: int, key: str) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(key + ":"):
            return int(line.split()[1])
    return 0


def reset_peak(pid: int) -> None:
    """Reset VmHWM to the current RSS (Linux ≥ 4.0, same user)."""
    Path(f"/proc/{pid}/clear_refs").write_text("5")


def mib(kib: int) -> float:
    return kib / 1024


# --- raw HTTP/1.1 client ----------------------------------------------------------------------


class _Chunked:
    """Incremental `transfer-encoding: chunked` body parser (trailers ignored)."""

    def __init__(self) -> None:
        self.buf = b""
        self.need: int | None = None
        self.done = False

    def feed(self, data: bytes) -> list[bytes]:
        self.buf += data
        out = []
        while not self.done:
            if self.need is None:
                i = self.buf.find(b"\r\n")
                if i < 0:
                    break
                size = int(self.buf[:i].split(b";")[0], 16)
                self.buf = self.buf[i + 2 :]
                if size == 0:
                    self.done = True
                    break
                self.need = size
            if len(self.buf) < self.need + 2:
                break
            out.append(self.buf[: self.need])
            self.buf = self.buf[self.need + 2 :]
            self.need = None
        return out


@dataclass
class Response:
    status: int
    headers: dict[str, str]
    body: bytes = b""


class Http1(asyncio.Protocol):
    """One HTTP/1.1 connection, one request at a time. `begin()` before writing a request;
    body pieces go to `sink(piece, receive_ns)` if given, else into the Response."""

    def __init__(self) -> None:
        self.transport: asyncio.Transport | None = None
        self.buf = b""
        self.state = "idle"
        self.no_body = False
        self.sink: Callable[[bytes, int], None] | None = None
        self.head: asyncio.Future[Response] | None = None
        self.result: asyncio.Future[Response] | None = None
        self.response: Response | None = None
        self.parts: list[bytes] = []
        self.chunked: _Chunked | None = None
        self.remaining = 0
        self.lost = False

    def connection_made(self, transport) -> None:
        self.transport = transport

    def connection_lost(self, exc) -> None:
        self.lost = True
        for fut in (self.head, self.result):
            if fut is not None and not fut.done():
                fut.set_exception(ConnectionError(f"connection lost in state {self.state}"))

    def begin(self, sink=None, no_body: bool = False) -> tuple[asyncio.Future, asyncio.Future]:
        loop = asyncio.get_running_loop()
        self.state, self.sink, self.no_body, self.parts = "head", sink, no_body, []
        self.head, self.result = loop.create_future(), loop.create_future()
        self.head.add_done_callback(_retrieved)  # callers may only await the result
        return self.head, self.result

    def data_received(self, data: bytes) -> None:
        now = time.monotonic_ns()
        if self.state == "head":
            self.buf += data
            i = self.buf.find(b"\r\n\r\n")
            if i < 0:
                return
            head, data, self.buf = self.buf[:i], self.buf[i + 4 :], b""
            lines = head.decode("latin-1").split("\r\n")
            status = int(lines[0].split()[1])
            headers = {}
            for line in lines[1:]:
                name, _, value = line.partition(":")
                headers[name.strip().lower()] = value.strip()
            self.response = Response(status, headers)
            assert self.head is not None
            self.head.set_result(self.response)
            if self.no_body:
                self._finish()
                return
            if "chunked" in headers.get("transfer-encoding", ""):
                self.chunked, self.state = _Chunked(), "chunked"
            else:
                self.remaining, self.state = int(headers.get("content-length", "0")), "length"
                if not self.remaining:
                    self._finish()
                    return
        if self.state == "chunked":
            assert self.chunked is not None
            for piece in self.chunked.feed(data):
                self._deliver(piece, now)
            if self.chunked.done:
                self._finish()
        elif self.state == "length":
            piece = data[: self.remaining]
            self.remaining -= len(piece)
            self._deliver(piece, now)
            if not self.remaining:
                self._finish()

    def _deliver(self, piece: bytes, now: int) -> None:
        if self.sink is not None:
            self.sink(piece, now)
        else:
            self.parts.append(piece)

    def _finish(self) -> None:
        assert self.response is not None and self.result is not None
        self.response.body = b"".join(self.parts)
        self.state = "idle"
        if not self.result.done():
            self.result.set_result(self.response)

    def write(self, data: bytes) -> None:
        assert self.transport is not None
        self.transport.write(data)

    async def request(
        self, method: str, path: str, headers: dict[str, str], body: bytes, sink=None
    ) -> tuple[asyncio.Future, asyncio.Future]:
        head, result = self.begin(sink)
        lines = [f"{method} {path} HTTP/1.1", f"host: {headers.pop('host', TEST_HOST)}"]
        lines += [f"{k}: {v}" for k, v in headers.items()]
        lines.append(f"content-length: {len(body)}")
        self.write(("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + body)
        return head, result

    def close(self) -> None:
        if self.transport is not None:
            self.transport.close()


def _retrieved(future: asyncio.Future) -> None:
    if not future.cancelled():
        future.exception()


async def open_http(
    port: int, *, tunnel: str | None = None, tls: ssl.SSLContext | None = None
) -> Http1:
    """A connection to 127.0.0.1:port; through a proxy's CONNECT `tunnel` (then TLS) if given."""
    loop = asyncio.get_running_loop()
    proto = Http1()
    transport, _ = await loop.create_connection(lambda: proto, "127.0.0.1", port)
    if tunnel is not None:
        head, _ = proto.begin(no_body=True)
        proto.write(f"CONNECT {tunnel} HTTP/1.1\r\nhost: {tunnel}\r\n\r\n".encode())
        response = await head
        if response.status != 200:
            raise ConnectionError(f"CONNECT {tunnel}: {response.status}")
        if tls is not None:
            host = tunnel.rsplit(":", 1)[0]
            proto.transport = await loop.start_tls(transport, proto, tls, server_hostname=host)
    return proto


def client_tls(ca_file: Path) -> ssl.SSLContext:
    context = ssl.create_default_context(cafile=str(ca_file))
    context.set_alpn_protocols(["http/1.1"])
    return context


# --- turns -----------------------------------------------------------------------------------


@dataclass
class TurnStats:
    ok: bool = False
    error: str = ""
    frames: int = 0  # data frames the client saw (heartbeats excluded)
    delta_frames: int = 0  # frames carrying text deltas
    deltas: int = 0  # provider deltas received (stamps)
    heartbeats: int = 0
    latencies_ns: list[int] = field(default_factory=list)
    appends_refused: int = 0


class _Envelopes:
    """Connect envelopes out of body pieces (uncompressed: the client asks for no encoding)."""

    def __init__(self, on_frame: Callable[[int, bytes, int], None]) -> None:
        self.buf = b""
        self.on_frame = on_frame

    def feed(self, piece: bytes, now: int) -> None:
        buf = self.buf + piece if self.buf else piece
        pos = 0
        while len(buf) - pos >= 5:
            flags = buf[pos]
            length = int.from_bytes(buf[pos + 1 : pos + 5], "big")
            if len(buf) - pos - 5 < length:
                break
            self.on_frame(flags, buf[pos + 5 : pos + 5 + length], now)
            pos += 5 + length
        self.buf = buf[pos:]


def _on_frame(stats: TurnStats, flags: int, payload: bytes, now: int, answer) -> bool:
    """Account one frame; True at the end of the stream."""
    if flags & connect.FLAG_END_STREAM:
        end = connect.parse_end_stream(payload)
        stats.ok = end.ok
        stats.error = "" if end.ok else f"{end.error.code}: {end.error.message}"
        return True
    message = pb.AgentServerMessage.FromString(payload)
    kind = message.WhichOneof("message")
    if kind == "interaction_update":
        update = message.interaction_update.WhichOneof("message")
        if update == "heartbeat":
            stats.heartbeats += 1
            return False
        if update == "text_delta":
            stats.delta_frames += 1
            for match in STAMP_RE.finditer(message.interaction_update.text_delta.text):
                stats.latencies_ns.append(now - int(match.group(1)))
                stats.deltas += 1
    stats.frames += 1
    if answer is not None:
        answer(message)
    return False


async def plain_turn(
    port: int, *, tls: ssl.SSLContext | None, deltas: int, stats: TurnStats
) -> None:
    """B/C: one RunSSE-shaped request whose upstream streams the delta frames (through a plain
    mitmdump's CONNECT + TLS when `tls` is given, else straight to the feeder)."""
    conn = await open_http(port, tunnel=f"{TEST_HOST}:443" if tls else None, tls=tls)
    done = asyncio.get_running_loop().create_future()

    def frame(flags: int, payload: bytes, now: int) -> None:
        if _on_frame(stats, flags, payload, now, None) and not done.done():
            done.set_result(None)

    envelopes = _Envelopes(frame)
    try:
        rid = str(uuid.uuid4())
        _, result = await conn.request(
            "POST",
            RUN_SSE,
            {
                "content-type": "application/connect+proto",
                "connect-protocol-version": "1",
                "x-request-id": rid,
                "x-bench-deltas": str(deltas),
            },
            connect.encode_frame(encode_run_sse_request(rid)),
            sink=envelopes.feed,
        )
        await result
        if not done.done():
            stats.error = "stream ended without an end-stream envelope"
    except Exception as exc:
        stats.error = f"{type(exc).__name__}: {exc}"
    finally:
        conn.close()


def _headers(rid: str, content_type: str) -> dict[str, str]:
    return {
        "content-type": content_type,
        "connect-protocol-version": "1",
        "user-agent": "connect-es/1.6.1",
        "x-request-id": rid,
        "authorization": "Bearer eyJfake.cursor.token",
    }


def run_request(text: str, workspace: Path) -> pb.AgentClientMessage:
    """A first-turn run request for MODEL, as tests/e2e/cursor_client.py builds it."""
    request = pb.AgentRunRequest(conversation_id=str(uuid.uuid4()))
    request.conversation_state.SetInParent()
    action = request.action.user_message_action
    action.user_message.text = text
    action.user_message.message_id = str(uuid.uuid4())
    action.user_message.mode = 1
    env = action.request_context.env
    env.os_version = "linux 6.8"
    env.shell = "bash"
    env.workspace_paths.append(str(workspace))
    request.requested_model.model_id = MODEL
    request.model_details.model_id = MODEL
    return pb.AgentClientMessage(run_request=request)


async def addon_turn(
    port: int,
    *,
    tls: ssl.SSLContext,
    deltas: int,
    stats: TurnStats,
    workspace: Path,
    heartbeat: float = 0.0,
) -> None:
    """A: a full Agent turn through the addon: RunSSE, the run request and KV acks over
    BidiAppend (one keep-alive connection, appends in order), optional client heartbeats."""
    loop = asyncio.get_running_loop()
    rid = str(uuid.uuid4())
    tunnel = f"{TEST_HOST}:443"
    sse = await open_http(port, tunnel=tunnel, tls=tls)
    uploads = await open_http(port, tunnel=tunnel, tls=tls)
    lock = asyncio.Lock()
    seqno = 0
    tasks: set[asyncio.Task] = set()
    done = loop.create_future()

    async def append(message: pb.AgentClientMessage) -> None:
        nonlocal seqno
        async with lock:
            body = encode_bidi_append(rid, seqno, message.SerializeToString(), binary=True)
            seqno += 1
            _, result = await uploads.request(
                "POST", BIDI_APPEND, _headers(rid, "application/proto"), body
            )
            response = await result
            if response.status != 200:
                stats.appends_refused += 1

    def spawn(coro) -> None:
        task = loop.create_task(coro)
        tasks.add(task)
        task.add_done_callback(tasks.discard)

    def answer(message: pb.AgentServerMessage) -> None:
        if message.WhichOneof("message") == "kv_server_message":
            kv = message.kv_server_message
            reply = pb.KvClientMessage(id=kv.id)
            if kv.WhichOneof("message") == "set_blob_args":
                reply.set_blob_result.SetInParent()
            else:
                reply.get_blob_result.SetInParent()
            spawn(append(pb.AgentClientMessage(kv_client_message=reply)))
        elif message.WhichOneof("message") == "exec_server_message":
            stats.error = "unexpected exec request"

    def frame(flags: int, payload: bytes, now: int) -> None:
        if _on_frame(stats, flags, payload, now, answer) and not done.done():
            done.set_result(None)

    async def heartbeats() -> None:
        while True:
            await asyncio.sleep(heartbeat)
            spawn(append(pb.AgentClientMessage(client_heartbeat=pb.ClientHeartbeat())))

    envelopes = _Envelopes(frame)
    beat = loop.create_task(heartbeats()) if heartbeat > 0 else None
    try:
        head, result = await sse.request(
            "POST",
            RUN_SSE,
            _headers(rid, "application/connect+proto"),
            connect.encode_frame(encode_run_sse_request(rid)),
            sink=envelopes.feed,
        )
        response = await head
        if response.status != 200:
            stats.error = f"RunSSE {response.status}: {(await result).body[:200]!r}"
            return
        spawn(append(run_request(f"stream please bench-deltas={deltas}", workspace)))
        await result
        if not done.done():
            stats.error = "stream ended without an end-stream envelope"
        await asyncio.gather(*list(tasks))
    except Exception as exc:
        stats.ok = False
        stats.error = f"{type(exc).__name__}: {exc}"
    finally:
        if beat is not None:
            beat.cancel()
        for task in list(tasks):
            task.cancel()
        sse.close()
        uploads.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    feeder = sub.add_parser("feeder", help="run the feeder server (prints its port)")
    feeder.add_argument("--deltas", type=int, default=200)
    feeder.add_argument("--interval", type=float, default=0.005)
    args = parser.parse_args()
    if args.command == "feeder":
        asyncio.run(run_feeder(args.deltas, args.interval))


if __name__ == "__main__":
    main()
