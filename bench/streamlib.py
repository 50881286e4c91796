"""Shared parts of the streaming benchmarks: a feeder server and a cheap raw client.

The feeder (`python bench/streamlib.py feeder`) is one asyncio HTTP/1.1 server on 127.0.0.1 that
plays both ends a proxy can stream from:

- `POST …/chat/completions`: an OpenAI Chat provider streaming N small text deltas (the addon's
  agent calls it; A in bench_streaming.py);
- `POST /agent.v1.AgentService/RunSSE`: an Agent upstream streaming the very Connect frames the
  addon would send for those deltas (one `text_delta` AgentServerMessage per delta, then the
  end-stream envelope; B through plain mitmdump, C direct);
- the same RunSSE without `x-bench-deltas`, joined by its request id to the
  `POST /aiserver.v1.BidiService/BidiAppend` that carries the run request: Cursor's server side of
  the HTTP/1.1 fallback (BA through plain mitmdump). The deltas follow the run request, then the
  frames a real turn of the addon closed with (`--close-frames`, recorded by the bench: KV SETs,
  checkpoints, `turn_ended`), then the end-stream; every BidiAppend is answered at once, empty;
- `POST /agent.v1.AgentService/RunPoll`, read back by the request id of a run request that came
  by BidiAppend with no RunSSE waiting: Cursor's server side of the HTTP/1.0 mode (BP). The same
  deltas, coalesced by the run core's own `Outbox` and released to the polls as the addon's
  RunPoll releases them (`_PollRun`), so the frames, polls and flows of a turn are the addon's.

Every delta's text is `t=<time.monotonic_ns()>;`, taken when it is written, so the client can
measure provider-send → client-receive latency on the same clock. One ticker writes the next delta
of every open stream each `interval` (one wake-up per tick, not one per stream), so the feeder
stays cheap at 100 streams. It runs in its own process so it does not share the client's loop.

The client side speaks raw HTTP/1.1 from `asyncio.Protocol`s (CONNECT + TLS through a proxy, or
direct), with a sans-IO chunked/Connect-envelope parser: no httpx, no coroutine per chunk, so one
process can read 100 streams without being the bottleneck. For Cursor's default transport, the
HTTP/2 `Run` stream, the same idea on the `h2` state machine (`Http2`, `run_turn`): CONNECT + TLS
with ALPN h2, one connection and one full-duplex stream per turn, driven from `data_received`.
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

import h2.config  # noqa: E402
import h2.connection  # noqa: E402
import h2.events  # noqa: E402
import h2.exceptions  # noqa: E402
from fakes.fake_provider import read_body  # noqa: E402

from cursor_byok.core.outbox import Outbox  # noqa: E402
from cursor_byok.core.states import HoldState  # noqa: E402
from cursor_byok.pb import agent_v1_pb2 as pb  # noqa: E402
from cursor_byok.pb import aiserver_v1_pb2 as aipb  # noqa: E402
from cursor_byok.wire import connect  # noqa: E402
from cursor_byok.wire.bidi import encode_bidi_append  # noqa: E402
from cursor_byok.wire.bidi import encode_run_poll_request  # noqa: E402
from cursor_byok.wire.bidi import encode_run_sse_request  # noqa: E402

TEST_HOST = "api2.cursor.test"  # tests/e2e/mitm.py: the host the addon serves in the tests
RUN_SSE = "/agent.v1.AgentService/RunSSE"
RUN = "/agent.v1.AgentService/Run"
RUN_POLL = "/agent.v1.AgentService/RunPoll"
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
_RUN_HEAD = (
    b"HTTP/1.1 200 OK\r\ncontent-type: application/connect+proto\r\n"
    b"transfer-encoding: chunked\r\n\r\n"
)
_POLL_HEAD = (
    b"HTTP/1.1 200 OK\r\ncontent-type: application/connect+proto\r\ncontent-length: %d\r\n\r\n"
)
_SSE_TAIL = _chunk(connect.encode_frame_raw(connect.FLAG_END_STREAM, b"{}")) + b"0\r\n\r\n"


def delta_message(text: str) -> pb.AgentServerMessage:
    """The message the addon sends for one text delta."""
    return pb.AgentServerMessage(
        interaction_update=pb.InteractionUpdate(text_delta=pb.TextDeltaUpdate(text=text))
    )


def delta_frame(text: str) -> bytes:
    """The Connect envelope the addon sends for one text delta."""
    return connect.encode_frame_raw(0, delta_message(text).SerializeToString())


@dataclass(eq=False)
class _Stream:
    writer: asyncio.StreamWriter
    left: int
    kind: str  # "chat", "connect" or "poll"
    done: asyncio.Future
    tail: bytes = b""  # written before the end (BA: the recorded close frames)
    run: _PollRun | None = None  # BP: the frames go to RunPoll, not to `writer`


POLL_WINDOW = 0.015  # BP's release window and poll hold: P15's coalescing (cursor_byok_coalesce_ms)


class _PollRun:
    """BP: one run's frames, kept for RunPoll as the addon keeps them: in the run core's own
    `Outbox`, whose coalescing hold releases deltas at most once a window (any other frame goes
    at once, with what is held). A poll takes what is readable when it comes; one that had to
    wait stays open one window after the first release, or until the end, as the addon's RunPoll
    does (proxy/run_poll.py `_Gather`). Each frame is one `BidiPollResponse`, hex."""

    def __init__(self, window: float = POLL_WINDOW) -> None:
        self.loop = asyncio.get_running_loop()
        self.window = window
        self.outbox = Outbox()
        self.position = 0  # entries the polls have taken
        self.seqno = 0
        self.ended = False  # every frame is in (the last poll carries `eof`)
        self.answered_end = False
        self.wake: asyncio.Future[None] | None = None
        self.holding = False  # a poll that waited is held one window
        self.gathered: list[bytes] | None = None  # what the open poll has taken

    def add(self, message: pb.AgentServerMessage) -> None:
        """A delta, coalesced and held as the run core does."""
        holds = self.outbox.holds
        self.outbox.add(message, now=self.loop.time(), window=self.window)
        if self.outbox.holds != holds:  # a hold began: release it when its window is over
            self.loop.call_at(self.outbox.hold_until, self._release)
        self._wake()

    def end(self, frames: list[bytes]) -> None:
        """The turn's last frames (envelopes, final at once), then the end."""
        for frame in frames:
            self.outbox.append(frame)
        self.outbox.release_due(self.outbox.hold_until)  # nothing is held past the end
        self.ended = True
        self._wake()

    def _release(self) -> None:
        outbox = self.outbox
        if not outbox.release_due(self.loop.time()) and outbox.hold is HoldState.HELD:
            self.loop.call_at(outbox.hold_until, self._release)  # the timer ran a little early
        self._wake()

    def _wake(self) -> None:
        """An open poll takes what became readable, as a stream would (so later deltas are
        held, not joined to a tail it has); one waiting for its first frame has it now, one
        held hears only of the end."""
        if self.gathered is not None and self.outbox.readable() > self.position:
            self.gathered += self._take()
        wake = self.wake
        if wake is None or wake.done():
            return
        if self.ended or (not self.holding and self.gathered):
            wake.set_result(None)

    def _take(self) -> list[bytes]:
        """The readable frames' messages not taken yet (an open delta is made final now)."""
        outbox = self.outbox
        end = outbox.readable()
        taken = []
        for entry in outbox.entries[self.position : end]:
            frame = outbox.close(entry) if entry.delta is not None else entry.frame
            assert frame is not None
            taken.append(frame[connect.HEADER_SIZE :])
        self.position = end
        return taken

    async def answer(self) -> bytes:
        """One poll's body: the responses it takes, then the end-stream (`eof` on the last)."""
        self.gathered = self._take()
        if not self.gathered and not self.ended:
            self.wake = self.loop.create_future()
            await self.wake
            if not self.ended:
                self.wake = self.loop.create_future()
                self.holding = True
                hold = self.loop.call_later(self.window, self.wake.set_result, None)
                await self.wake  # one window, or the end
                hold.cancel()
                self.holding = False
        taken, self.gathered = self.gathered + self._take(), None
        parts = []
        for payload in taken:
            message = aipb.BidiPollResponse(seqno=self.seqno, data=payload.hex())
            parts.append(connect.encode_frame_raw(0, message.SerializeToString()))
            self.seqno += 1
        if self.ended:
            eof = aipb.BidiPollResponse(seqno=self.seqno, eof=True)
            parts.append(connect.encode_frame_raw(0, eof.SerializeToString()))
            self.answered_end = True
        parts.append(connect.encode_frame_raw(connect.FLAG_END_STREAM, b"{}"))
        return b"".join(parts)


_APPENDED = b"HTTP/1.1 200 OK\r\ncontent-type: application/proto\r\ncontent-length: 0\r\n\r\n"


def read_frames(path: Path | None) -> list[bytes]:
    """The Connect envelopes in a file of them (none when there is no file)."""
    if path is None or not path.exists():
        return []
    return read_frames_bytes(path.read_bytes())


def read_frames_bytes(data: bytes) -> list[bytes]:
    """The Connect envelopes in `data`, one after another."""
    frames, offset = [], 0
    while offset + connect.HEADER_SIZE <= len(data):
        end = offset + connect.HEADER_SIZE + int.from_bytes(data[offset + 1 : offset + 5], "big")
        frames.append(data[offset:end])
        offset = end
    return frames


class Feeder:
    """See the module docstring."""

    def __init__(self, deltas: int, interval: float, close_frames: Path | None = None) -> None:
        self.deltas = deltas
        self.interval = interval
        self.close_frames = close_frames
        self.active: list[_Stream] = []
        self.wake = asyncio.Event()
        self.streams = 0
        self.fallback: dict[str, _Stream] = {}  # BA: request id → RunSSE waiting for its run
        self.polled: dict[str, _PollRun] = {}  # BP: request id → its run, until the end is read

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
                if target.endswith(RUN):  # BR: the upload stays open, so no body to read first
                    await self._serve_run(reader, writer)
                    break
                body = await read_body(reader, headers)
                match = DELTAS_RE.search(body)
                deltas = int(headers.get("x-bench-deltas") or (match and match.group(1)) or 0)
                deltas = deltas or self.deltas
                done = asyncio.get_running_loop().create_future()
                if target.endswith("/chat/completions"):
                    writer.write(_CHAT_HEAD + _chunk(_chat_event("")))
                    kind = "chat"
                elif target.endswith(RUN_SSE):
                    writer.write(_SSE_HEAD)
                    kind = "connect"
                    if "x-bench-deltas" not in headers:  # BA: streams once its run request came
                        rid = headers.get("x-request-id", "")
                        self.fallback[rid] = _Stream(writer, 0, kind, done)
                        if not await done:
                            break
                        continue
                elif target.endswith(BIDI_APPEND):
                    writer.write(_APPENDED)
                    rid = headers.get("x-request-id", "")
                    waiting = self.fallback.pop(rid, None)
                    if match and waiting is None:  # BP: no RunSSE, so RunPoll reads it
                        run = self.polled[rid] = _PollRun()
                        waiting = _Stream(writer, 0, "poll", done, run=run)
                    if waiting is not None and match:
                        self._start(waiting, deltas, tail=b"".join(read_frames(self.close_frames)))
                    continue
                elif target.endswith(RUN_POLL):
                    rid = headers.get("x-request-id", "")
                    polled = self.polled.get(rid)
                    if polled is None:
                        writer.write(b"HTTP/1.1 404 Not Found\r\ncontent-length: 0\r\n\r\n")
                        continue
                    answer = await polled.answer()
                    if polled.answered_end:
                        del self.polled[rid]
                    writer.write(_POLL_HEAD % len(answer) + answer)
                    continue
                else:
                    writer.write(b"HTTP/1.1 404 Not Found\r\ncontent-length: 0\r\n\r\n")
                    continue
                stream = _Stream(writer, deltas, kind, done)
                self._start(stream, deltas)
                if not await stream.done:
                    break
        writer.close()

    async def _serve_run(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        """BR: a whole `Run` turn as Cursor's server answers it. mitmproxy hands an HTTP/2
        upload without a length to an HTTP/1.1 server unframed (mitmproxy_compat
        .frame_for_http1_upstream), so the request body is the client's envelopes as they come:
        the first is the run request; then the deltas, the recorded close frames and the end go
        down while the rest (the KV acks) is read and dropped until the proxy closes the hop."""
        head = await reader.readexactly(connect.HEADER_SIZE)
        payload = await reader.readexactly(int.from_bytes(head[1:], "big"))
        match = DELTAS_RE.search(payload)
        deltas = int(match.group(1)) if match else self.deltas
        writer.write(_RUN_HEAD)
        done = asyncio.get_running_loop().create_future()
        stream = _Stream(writer, deltas, "connect", done)
        self._start(stream, deltas, tail=b"".join(read_frames(self.close_frames)))
        while await reader.read(65536):
            pass

    def _start(self, stream: _Stream, deltas: int, tail: bytes = b"") -> None:
        stream.left, stream.tail = deltas, tail
        self.streams += 1
        self.active.append(stream)
        self.wake.set()

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
        if stream.run is not None:
            self._step_poll(stream, stream.run, text)
            return
        data = _chunk(_chat_event(text)) if stream.kind == "chat" else _chunk(delta_frame(text))
        stream.left -= 1
        if stream.left <= 0:
            data += (
                _CHAT_TAIL
                if stream.kind == "chat"
                else _chunk(stream.tail) * bool(stream.tail) + _SSE_TAIL
            )
            self.active.remove(stream)
            stream.done.set_result(True)
        stream.writer.write(data)

    def _step_poll(self, stream: _Stream, run: _PollRun, text: str) -> None:
        """BP: the next delta (then the close frames and the end) to the run's polls."""
        run.add(delta_message(text))
        stream.left -= 1
        if stream.left <= 0:
            run.end(read_frames_bytes(stream.tail))
            self.active.remove(stream)


async def run_feeder(deltas: int, interval: float, close_frames: Path | None = None) -> None:
    feeder = Feeder(deltas, interval, close_frames)
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

    def __init__(
        self, deltas: int = 200, interval: float = 0.005, close_frames: Path | None = None
    ) -> None:
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
                *(["--close-frames", str(close_frames)] if close_frames else []),
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


EDGE = 25  # deltas at each end of a turn, apart in `by_place`


def percentile_ms(values_ns: list[int], q: float) -> float:
    """The q-th percentile of latencies in ns, in ms (nan for none)."""
    xs = sorted(values_ns)
    return xs[min(len(xs) - 1, int(q * len(xs)))] / 1e6 if xs else float("nan")


def by_place(turns: list[list[int]], edge: int = EDGE) -> tuple[list[int], list[int], list[int]]:
    """Every turn's latencies split by a delta's place: its first `edge`, those between, its
    last `edge`: where a tail comes from (turns that start and end together)."""
    parts: tuple[list[int], list[int], list[int]] = ([], [], [])
    for xs in turns:
        parts[0].extend(xs[:edge])
        parts[1].extend(xs[edge:-edge])
        parts[2].extend(xs[-edge:] if len(xs) > edge else [])
    return parts


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


def client_tls_h2(ca_file: Path) -> ssl.SSLContext:
    context = ssl.create_default_context(cafile=str(ca_file))
    context.set_alpn_protocols(["h2"])
    return context


# --- raw HTTP/2 client ------------------------------------------------------------------------


@dataclass(eq=False)
class _H2Stream:
    sink: Callable[[bytes, int], None]
    head: asyncio.Future  # the response :status
    ended: asyncio.Future  # END_STREAM from the server (None) or reset (exception)
    pending: bytes = b""  # upload bytes waiting for flow-control window
    end_upload: bool = False


class Http2(asyncio.Protocol):
    """One HTTP/2 connection (after a CONNECT through the proxy and TLS with ALPN h2) on the `h2`
    state machine, driven from `data_received`: no reader task, no coroutine per frame. Response
    DATA goes to each stream's `sink(data, receive_ns)` as it arrives; the upload stays open until
    `send(..., end=True)`."""

    def __init__(self) -> None:
        self.transport: asyncio.Transport | None = None
        self.buf = b""
        self.tunnel: asyncio.Future | None = None  # the CONNECT answer's status
        self.conn: h2.connection.H2Connection | None = None
        self.streams: dict[int, _H2Stream] = {}
        self.lost = False

    def connection_made(self, transport) -> None:
        self.transport = transport

    def connection_lost(self, exc) -> None:
        self.lost = True
        self._fail_all(ConnectionError(f"connection lost: {exc}"))

    def _fail_all(self, exc: Exception) -> None:
        futures = [self.tunnel] + [f for s in self.streams.values() for f in (s.head, s.ended)]
        for fut in futures:
            if fut is not None and not fut.done():
                fut.set_exception(exc)

    def start_h2(self) -> None:
        self.conn = h2.connection.H2Connection(
            h2.config.H2Configuration(client_side=True, header_encoding=None)
        )
        self.conn.initiate_connection()
        self.conn.increment_flow_control_window(2**24)
        self._flush()

    def data_received(self, data: bytes) -> None:
        now = time.monotonic_ns()
        if self.conn is None:  # the CONNECT answer
            self.buf += data
            i = self.buf.find(b"\r\n\r\n")
            if i >= 0 and self.tunnel is not None and not self.tunnel.done():
                self.tunnel.set_result(int(self.buf.split(b" ", 2)[1]))
                self.buf = b""
            return
        try:
            events = self.conn.receive_data(data)
        except h2.exceptions.ProtocolError as exc:
            self._fail_all(ConnectionError(f"HTTP/2 protocol error: {exc}"))
            self.close()
            return
        for event in events:
            stream = self.streams.get(getattr(event, "stream_id", 0) or 0)
            if isinstance(event, h2.events.DataReceived):
                if event.flow_controlled_length:
                    self.conn.acknowledge_received_data(
                        event.flow_controlled_length, event.stream_id
                    )
                if stream is not None:
                    stream.sink(event.data, now)
            elif isinstance(event, h2.events.ResponseReceived):
                if stream is not None and not stream.head.done():
                    stream.head.set_result(int(dict(event.headers)[b":status"]))
            elif isinstance(event, h2.events.StreamEnded):
                if stream is not None and not stream.ended.done():
                    stream.ended.set_result(None)
            elif isinstance(event, h2.events.StreamReset):
                if stream is not None:
                    error = ConnectionError(f"stream reset by the proxy ({event.error_code!r})")
                    for fut in (stream.head, stream.ended):
                        if not fut.done():
                            fut.set_exception(error)
            elif isinstance(event, h2.events.WindowUpdated):
                for stream_id, waiting in self.streams.items():
                    if waiting.pending or waiting.end_upload:
                        self._upload(stream_id, waiting)
            elif isinstance(event, h2.events.ConnectionTerminated):
                self._fail_all(ConnectionError(f"GOAWAY ({event.error_code!r})"))
        self._flush()

    def request(
        self, path: str, headers: dict[str, str], sink: Callable[[bytes, int], None]
    ) -> tuple[int, asyncio.Future, asyncio.Future]:
        """Open a POST stream whose upload stays open: (stream id, head, ended)."""
        assert self.conn is not None
        loop = asyncio.get_running_loop()
        stream_id = self.conn.get_next_available_stream_id()
        stream = _H2Stream(sink, loop.create_future(), loop.create_future())
        stream.head.add_done_callback(_retrieved)
        stream.ended.add_done_callback(_retrieved)
        self.streams[stream_id] = stream
        fields = [
            (":method", "POST"),
            (":scheme", "https"),
            (":authority", headers.pop("host", TEST_HOST)),
            (":path", path),
            *headers.items(),
        ]
        self.conn.send_headers(stream_id, fields)
        self._flush()
        return stream_id, stream.head, stream.ended

    def send(self, stream_id: int, data: bytes, *, end: bool = False) -> None:
        """Queue upload bytes (and the upload's end); sent as far as the window allows."""
        stream = self.streams.get(stream_id)
        if stream is None or self.conn is None or self.lost:
            return
        stream.pending += data
        stream.end_upload = stream.end_upload or end
        self._upload(stream_id, stream)
        self._flush()

    def _upload(self, stream_id: int, stream: _H2Stream) -> None:
        assert self.conn is not None
        try:
            while stream.pending:
                window = self.conn.local_flow_control_window(stream_id)
                size = min(len(stream.pending), window, self.conn.max_outbound_frame_size)
                if size <= 0:
                    return  # the rest goes on WindowUpdated
                last = size == len(stream.pending) and stream.end_upload
                self.conn.send_data(stream_id, stream.pending[:size], end_stream=last)
                stream.pending = stream.pending[size:]
                if last:
                    stream.end_upload = False
            if stream.end_upload:
                self.conn.end_stream(stream_id)
                stream.end_upload = False
        except h2.exceptions.StreamClosedError:
            stream.pending, stream.end_upload = b"", False  # reset meanwhile: nothing to send

    def _flush(self) -> None:
        if self.conn is None or self.transport is None or self.transport.is_closing():
            return
        data = self.conn.data_to_send()
        if data:
            self.transport.write(data)

    def close(self) -> None:
        if self.conn is not None and not self.lost:
            with contextlib.suppress(Exception):
                self.conn.close_connection()
                self._flush()
        if self.transport is not None:
            self.transport.close()


async def open_h2(port: int, *, tunnel: str, tls: ssl.SSLContext) -> Http2:
    """An HTTP/2 connection through a proxy: CONNECT `tunnel`, TLS (ALPN h2), preface."""
    loop = asyncio.get_running_loop()
    proto = Http2()
    transport, _ = await loop.create_connection(lambda: proto, "127.0.0.1", port)
    proto.tunnel = loop.create_future()
    proto.transport.write(f"CONNECT {tunnel} HTTP/1.1\r\nhost: {tunnel}\r\n\r\n".encode())
    status = await proto.tunnel
    if status != 200:
        transport.close()
        raise ConnectionError(f"CONNECT {tunnel}: {status}")
    host = tunnel.rsplit(":", 1)[0]
    tls_transport = await loop.start_tls(transport, proto, tls, server_hostname=host)
    if tls_transport is None:
        raise ConnectionError("TLS handshake did not complete")
    proto.transport = tls_transport
    alpn = tls_transport.get_extra_info("ssl_object").selected_alpn_protocol()
    if alpn != "h2":
        tls_transport.close()
        raise ConnectionError(f"the proxy did not negotiate h2 (ALPN {alpn!r})")
    proto.start_h2()
    return proto


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
    first_delta_ns: int = 0  # monotonic_ns when the first text delta arrived
    polls: int = 0  # RunPoll requests made (P only)
    kept: list[bytes] | None = None  # when a list: every data frame but text deltas, as sent


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
    if stats.kept is not None and not message.interaction_update.HasField("text_delta"):
        stats.kept.append(connect.encode_frame_raw(flags, payload))
    if kind == "interaction_update":
        update = message.interaction_update.WhichOneof("message")
        if update == "heartbeat":
            stats.heartbeats += 1
            return False
        if update == "text_delta":
            stats.delta_frames += 1
            stats.first_delta_ns = stats.first_delta_ns or now
            for match in STAMP_RE.finditer(message.interaction_update.text_delta.text):
                stats.latencies_ns.append(now - int(match.group(1)))
                stats.deltas += 1
    stats.frames += 1
    if answer is not None:
        answer(message)
    return False


def _plain_stream(stats: TurnStats, deltas: int) -> tuple[asyncio.Future, _Envelopes, str, dict]:
    """What B, B2 and C share: the future the end-stream envelope sets, the envelope reader
    that accounts each frame, a request id and the request's headers."""
    done = asyncio.get_running_loop().create_future()

    def frame(flags: int, payload: bytes, now: int) -> None:
        if _on_frame(stats, flags, payload, now, None) and not done.done():
            done.set_result(None)

    rid = str(uuid.uuid4())
    headers = {
        "content-type": "application/connect+proto",
        "connect-protocol-version": "1",
        "x-request-id": rid,
        "x-bench-deltas": str(deltas),
    }
    return done, _Envelopes(frame), rid, headers


async def plain_turn(
    port: int, *, tls: ssl.SSLContext | None, deltas: int, stats: TurnStats
) -> None:
    """B/C: one RunSSE-shaped request whose upstream streams the delta frames (through a plain
    mitmdump's CONNECT + TLS when `tls` is given, else straight to the feeder)."""
    conn = await open_http(port, tunnel=f"{TEST_HOST}:443" if tls else None, tls=tls)
    done, envelopes, rid, headers = _plain_stream(stats, deltas)
    try:
        _, result = await conn.request(
            "POST",
            RUN_SSE,
            headers,
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


async def plain_turn_h2(port: int, *, tls: ssl.SSLContext, deltas: int, stats: TurnStats) -> None:
    """B2: B's one RunSSE-shaped request on an HTTP/2 connection of its own (ALPN h2, one
    stream), as `Run` reaches the proxy: what plain mitmproxy pays to relay the same frames to
    an HTTP/2 client (its h2 framing and flow control, against B's HTTP/1.1 chunks)."""
    conn = await open_h2(port, tunnel=f"{TEST_HOST}:443", tls=tls)
    done, envelopes, rid, headers = _plain_stream(stats, deltas)
    try:
        stream_id, head, ended = conn.request(RUN_SSE, headers, envelopes.feed)
        conn.send(stream_id, connect.encode_frame(encode_run_sse_request(rid)), end=True)
        status = await head
        if status != 200:
            stats.error = f"RunSSE {status}"
            return
        await asyncio.wait([done, ended], return_when=asyncio.FIRST_COMPLETED)
        if not done.done():
            ended.result()  # a reset raises here
            stats.error = "stream ended without an end-stream envelope"
    except Exception as exc:
        stats.error = f"{type(exc).__name__}: {exc}"
    finally:
        conn.close()


# The benches stream many turns from one client (one credential), as no one Cursor window does:
# the per-client bound on running turns (issue 33 item 6, 8 by default) would refuse all but 8.
# Every bench that measures streaming cost sets it out of the way; bench_fairness measures it.
MANY_TURNS = ("--set", "cursor_byok_max_turns_per_client=100000")
AUTHORIZATION = "Bearer eyJfake.cursor.token"  # the client's credential (bench_fairness: two)


def _headers(rid: str, content_type: str) -> dict[str, str]:
    return {
        "content-type": content_type,
        "connect-protocol-version": "1",
        "user-agent": "connect-es/1.6.1",
        "x-request-id": rid,
        "authorization": AUTHORIZATION,
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


def answerer(
    stats: TurnStats, send: Callable[[pb.AgentClientMessage], None]
) -> Callable[[pb.AgentServerMessage], None]:
    """What the client answers to a server message, whatever the transport: KV SET/GET acks
    (the bench's turns ask for nothing else; an exec request is an error)."""

    def answer(message: pb.AgentServerMessage) -> None:
        kind = message.WhichOneof("message")
        if kind == "kv_server_message":
            kv = message.kv_server_message
            reply = pb.KvClientMessage(id=kv.id)
            if kv.WhichOneof("message") == "set_blob_args":
                reply.set_blob_result.SetInParent()
            else:
                reply.get_blob_result.SetInParent()
            send(pb.AgentClientMessage(kv_client_message=reply))
        elif kind == "exec_server_message":
            stats.error = "unexpected exec request"

    return answer


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

    answer = answerer(stats, lambda message: spawn(append(message)))

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


async def poll_turn(
    port: int,
    *,
    tls: ssl.SSLContext,
    deltas: int,
    stats: TurnStats,
    workspace: Path,
    heartbeat: float = 0.0,
) -> None:
    """P: a full Agent turn over Cursor's HTTP/1.0 mode: the run request and KV acks over
    BidiAppend (as A), the server's frames by one RunPoll after another on a keep-alive
    connection of their own (each answer: BidiPollResponses with the frame hex-encoded, then the
    end-stream; the last one has `eof`). Heartbeats are not sent (`heartbeat` is ignored)."""
    del heartbeat
    loop = asyncio.get_running_loop()
    rid = str(uuid.uuid4())
    tunnel = f"{TEST_HOST}:443"
    polls = await open_http(port, tunnel=tunnel, tls=tls)
    uploads = await open_http(port, tunnel=tunnel, tls=tls)
    lock = asyncio.Lock()
    seqno = 0
    tasks: set[asyncio.Task] = set()

    async def append(message: pb.AgentClientMessage) -> None:
        nonlocal seqno
        async with lock:
            body = encode_bidi_append(rid, seqno, message.SerializeToString(), binary=True)
            seqno += 1
            _, result = await uploads.request(
                "POST", BIDI_APPEND, _headers(rid, "application/proto"), body
            )
            if (await result).status != 200:
                stats.appends_refused += 1

    def spawn(coro) -> None:
        task = loop.create_task(coro)
        tasks.add(task)
        task.add_done_callback(tasks.discard)

    answer = answerer(stats, lambda message: spawn(append(message)))
    ended = False

    def frame(flags: int, payload: bytes, now: int) -> None:
        nonlocal ended
        if flags & connect.FLAG_END_STREAM:  # after `eof`: the run's end, else the poll's
            if ended:
                _on_frame(stats, flags, payload, now, None)
            return
        poll = aipb.BidiPollResponse.FromString(payload)
        if poll.data:
            _on_frame(stats, 0, bytes.fromhex(poll.data), now, answer)
        ended = ended or poll.eof

    try:
        await append(run_request(f"stream please bench-deltas={deltas}", workspace))
        start = True
        while not ended:
            envelopes = _Envelopes(frame)
            body = connect.encode_frame(encode_run_poll_request(rid, start=start))
            start = False
            stats.polls += 1
            _, result = await polls.request(
                "POST", RUN_POLL, _headers(rid, "application/connect+proto"), body, envelopes.feed
            )
            response = await result
            if response.status != 200:
                stats.error = f"RunPoll {response.status}"
                return
        await asyncio.gather(*list(tasks))
    except Exception as exc:
        stats.ok = False
        stats.error = f"{type(exc).__name__}: {exc}"
    finally:
        for task in list(tasks):
            task.cancel()
        polls.close()
        uploads.close()


async def run_turn(
    port: int,
    *,
    tls: ssl.SSLContext,
    deltas: int,
    stats: TurnStats,
    workspace: Path,
    heartbeat: float = 0.0,
    end_wait: float = 5.0,
    conn: Http2 | None = None,
    end_upload_first: bool = False,
) -> None:
    """R: a full Agent turn over Cursor's default transport, one HTTP/2 `Run` stream, on a
    connection of its own (or on `conn`, shared with other turns, as Cursor does): the headers
    and the run request envelope go out together, KV acks and optional client heartbeats follow
    on the open upload; after the end-stream envelope the client waits (at most `end_wait` s)
    for the server's END_STREAM, then ends its upload and closes the connection if it opened
    it. `tls` must offer ALPN h2 (`client_tls_h2`). `end_upload_first` (BR): the upload ends
    at the end-stream envelope, before END_STREAM, which plain mitmproxy holds until then
    (mitmproxy.md §10.1); the same frames either way."""
    loop = asyncio.get_running_loop()
    rid = str(uuid.uuid4())
    own = conn is None
    if conn is None:
        conn = await open_h2(port, tunnel=f"{TEST_HOST}:443", tls=tls)
    done = loop.create_future()
    stream_id = 0

    def send(message: pb.AgentClientMessage) -> None:
        conn.send(stream_id, connect.encode_frame(message.SerializeToString()))

    answer = answerer(stats, send)

    def frame(flags: int, payload: bytes, now: int) -> None:
        if _on_frame(stats, flags, payload, now, answer) and not done.done():
            done.set_result(None)

    async def heartbeats() -> None:
        while True:
            await asyncio.sleep(heartbeat)
            send(pb.AgentClientMessage(client_heartbeat=pb.ClientHeartbeat()))

    envelopes = _Envelopes(frame)
    beat = None
    try:
        headers = _headers(rid, "application/connect+proto")
        headers["te"] = "trailers"
        stream_id, head, ended = conn.request(RUN, headers, envelopes.feed)
        send(run_request(f"stream please bench-deltas={deltas}", workspace))
        status = await head
        if status != 200:
            stats.ok = False
            stats.error = f"Run {status}"
            return
        beat = loop.create_task(heartbeats()) if heartbeat > 0 else None
        await asyncio.wait([done, ended], return_when=asyncio.FIRST_COMPLETED)
        if not done.done():
            ended.result()  # a reset raises here
            stats.ok = False
            stats.error = "stream ended without an end-stream envelope"
            return
        if end_upload_first:
            conn.send(stream_id, b"", end=True)
        try:
            await asyncio.wait_for(asyncio.shield(ended), end_wait)
        except TimeoutError:
            stats.ok = False
            stats.error = f"END_STREAM not within {end_wait:g} s of the end-stream envelope"
        if not end_upload_first:
            conn.send(stream_id, b"", end=True)
    except Exception as exc:
        stats.ok = False
        stats.error = f"{type(exc).__name__}: {exc}"
    finally:
        if beat is not None:
            beat.cancel()
        if own:
            conn.close()
        else:
            conn.streams.pop(stream_id, None)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    feeder = sub.add_parser("feeder", help="run the feeder server (prints its port)")
    feeder.add_argument("--deltas", type=int, default=200)
    feeder.add_argument("--interval", type=float, default=0.005)
    feeder.add_argument(
        "--close-frames", type=Path, help="a file of Connect envelopes BA's turns close with"
    )
    args = parser.parse_args()
    if args.command == "feeder":
        asyncio.run(run_feeder(args.deltas, args.interval, args.close_frames))


if __name__ == "__main__":
    main()
