"""A loopback stand-in for Cursor's backend over TLS: the RunSSE + BidiAppend pair (HTTP/1.1)
and the `Run` stream (HTTP/2, chosen by ALPN).

    async with FakeCursor(tmp_path) as backend:   # backend.cert: its self-signed cert (PEM)
        ... mitmdump --set ssl_verify_upstream_trusted_ca=backend.cert, client → 127.0.0.1:port
        assert [r.body for r in backend.appends()] == client.sent_appends

- Records every request in arrival order (`requests`: path, headers, raw body).
- BidiAppend: 200, empty `application/proto`.
- RunSSE: 200 `text/event-stream`, chunked; writes `first` (one Connect frame), then waits
  for `release` (set it when the client has seen the first frame: proof of incremental
  delivery; bounded by `release_timeout`), then `rest` and the end-of-stream envelope. The
  frames it sent are in `sent` (bytes as written).
- `Run` (h2): 200 `application/connect+proto`; every upload byte is kept in `run_upload`, in
  order; after the first upload bytes it writes `first`, then as RunSSE (`release`, `rest`,
  end-of-stream envelope, END_STREAM). Its request headers are in `requests` (body empty).
- `checkpoints=True` (off by default): close each run as Cursor's backend does (protocol.md
  §4.5) instead of ending right after `rest`: wait (bounded) for the run request of the stream
  (BidiAppend seqno 0, or the first `Run` envelope), SET the blobs of its own checkpoint
  (`cursor_checkpoint.write_checkpoint`: the user message, the reply `first` + `rest` spell,
  optional `thinking`; KV ids from 0), wait for every acknowledgement the client sends back
  (BidiAppends / `Run` envelopes), then `turn_ended`, the staged checkpoint, the settled one
  twice, end of stream. Run requests it saw are in `run_requests`, acknowledgements in
  `kv_acks`, what it published in `written`, the order of close events in `timeline`. A blob
  the client does not acknowledge in `ack_timeout` ends the stream with `internal`.
"""

from __future__ import annotations

import asyncio
import contextlib
import ssl
from collections.abc import Awaitable
from collections.abc import Callable
from dataclasses import dataclass
from dataclasses import field
from pathlib import Path

import h2.config
import h2.connection
import h2.errors
import h2.events
import h11

from cursor_byok.pb import agent_v1_pb2 as pb
from cursor_byok.wire import connect
from cursor_byok.wire.bidi import decode_bidi_append
from cursor_byok.wire.bidi import decode_run_sse_request
from fakes.certs import self_signed
from fakes.cursor_checkpoint import CursorCheckpoint
from fakes.cursor_checkpoint import write_checkpoint


@dataclass
class Received:
    path: str
    headers: dict[str, str]
    body: bytes


class _Run:
    """What the stand-in learns of one run from the client's uploads."""

    def __init__(self) -> None:
        loop = asyncio.get_running_loop()
        self.request: asyncio.Future[pb.AgentRunRequest] = loop.create_future()
        self.acks: dict[int, pb.KvClientMessage] = {}
        self.changed = asyncio.Event()


def _frame(message: pb.AgentServerMessage) -> bytes:
    return connect.encode_frame(message.SerializeToString())


def text_frame(text: str) -> bytes:
    message = pb.AgentServerMessage()
    message.interaction_update.text_delta.text = text
    return connect.encode_frame(message.SerializeToString())


@dataclass
class FakeCursor:
    directory: Path
    first: bytes = field(default_factory=lambda: text_frame("cursor says hi"))
    rest: bytes = field(default_factory=lambda: text_frame(" from its own model"))
    release_timeout: float = 10.0
    requests: list[Received] = field(default_factory=list)
    sent: list[bytes] = field(default_factory=list)
    released_by_client: bool = False
    run_upload: bytearray = field(default_factory=bytearray)
    run_upload_ended: bool = False
    run_resets: int = 0  # `Run` streams the client side reset
    held_streams: int | None = None  # only this many RunSSE/`Run` streams wait for `release`
    reset_after_first: bool = False  # `Run`: reset the stream (INTERNAL_ERROR) after `first`
    refuse: int = 0  # answer RunSSE with this HTTP status and a Connect JSON error instead
    checkpoints: bool = False  # close runs with a checkpoint of its own, as Cursor does
    thinking: str = ""  # reasoning recorded in that checkpoint (with Cursor's signature)
    signature: str = "cursor-opaque-signature"
    ack_timeout: float = 10.0
    run_requests: list[pb.AgentRunRequest] = field(default_factory=list)
    kv_acks: list[pb.KvClientMessage] = field(default_factory=list)
    written: list[CursorCheckpoint] = field(default_factory=list)
    timeline: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.release = asyncio.Event()
        self.cert = self.directory / "fake-cursor-cert.pem"
        self.port = 0
        self._server: asyncio.Server | None = None
        self._tasks: set[asyncio.Task] = set()
        self._streams = 0
        self._runs: dict[str, _Run] = {}

    def appends(self) -> list[Received]:
        return [r for r in self.requests if r.path.endswith("/BidiAppend")]

    def run_sses(self) -> list[Received]:
        return [r for r in self.requests if r.path.endswith("/RunSSE")]

    async def __aenter__(self) -> FakeCursor:
        self.directory.mkdir(parents=True, exist_ok=True)
        cert, key = self_signed("127.0.0.1")
        self.cert.write_bytes(cert)
        key_file = self.directory / "fake-cursor-key.pem"
        key_file.write_bytes(key)
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(self.cert, key_file)
        context.set_alpn_protocols(["h2", "http/1.1"])
        self._server = await asyncio.start_server(self._serve, "127.0.0.1", 0, ssl=context)
        self.port = self._server.sockets[0].getsockname()[1]
        return self

    async def __aexit__(self, *exc) -> None:
        assert self._server is not None
        self._server.close()
        for task in list(self._tasks):
            task.cancel()
        with contextlib.suppress(Exception):
            await self._server.wait_closed()

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        if task is not None:
            self._tasks.add(task)
        ssl_object = writer.get_extra_info("ssl_object")
        if ssl_object is not None and ssl_object.selected_alpn_protocol() == "h2":
            try:
                await self._serve_h2(reader, writer)
            except (ConnectionError, ssl.SSLError):
                pass
            finally:
                if task is not None:
                    self._tasks.discard(task)
                writer.close()
            return
        conn = h11.Connection(h11.SERVER)
        try:
            while True:
                request, body = None, b""
                while True:
                    event = conn.next_event()
                    if event is h11.NEED_DATA:
                        data = await reader.read(65536)
                        if not data:
                            return
                        conn.receive_data(data)
                    elif isinstance(event, h11.Request):
                        request = event
                    elif isinstance(event, h11.Data):
                        body += bytes(event.data)
                    elif isinstance(event, h11.EndOfMessage):
                        break
                    elif isinstance(event, h11.ConnectionClosed):
                        return
                assert request is not None
                path = request.target.decode()
                headers = {k.decode().lower(): v.decode() for k, v in request.headers}
                self.requests.append(Received(path, headers, body))
                if path.endswith("/RunSSE"):
                    run_id = decode_run_sse_request(body) if self.checkpoints else ""
                    await self._run_sse(conn, writer, run_id)
                else:
                    if self.checkpoints and path.endswith("/BidiAppend"):
                        append = decode_bidi_append(body, headers.get("content-type"))
                        if append.message is not None:
                            self._received(self._run(append.request_id), append.message)
                    head = [("content-type", "application/proto"), ("content-length", "0")]
                    writer.write(conn.send(h11.Response(status_code=200, headers=head)))
                    writer.write(conn.send(h11.EndOfMessage()))
                    await writer.drain()
                if conn.our_state is h11.MUST_CLOSE:
                    return
                conn.start_next_cycle()
        except (ConnectionError, h11.ProtocolError, ssl.SSLError):
            return
        finally:
            if task is not None:
                self._tasks.discard(task)
            writer.close()

    async def _run_sse(
        self, conn: h11.Connection, writer: asyncio.StreamWriter, run_id: str
    ) -> None:
        if self.refuse:
            body = b'{"code":"unauthenticated","message":"not signed in to Cursor"}'
            head = [("content-type", "application/json"), ("content-length", str(len(body)))]
            writer.write(conn.send(h11.Response(status_code=self.refuse, headers=head)))
            writer.write(conn.send(h11.Data(data=body)) + conn.send(h11.EndOfMessage()))
            await writer.drain()
            return
        head = [
            ("content-type", "text/event-stream"),
            ("cache-control", "no-cache"),
            ("connect-protocol-version", "1"),
            ("x-fake-cursor", "yes"),
        ]
        writer.write(conn.send(h11.Response(status_code=200, headers=head)))
        self._send(conn, writer, self.first)
        await writer.drain()
        await self._hold()
        self._send(conn, writer, self.rest)
        error = None
        if self.checkpoints:

            async def send(frame: bytes) -> None:
                self._send(conn, writer, frame)
                await writer.drain()

            error = await self._close_run(self._run(run_id), run_id, send)
        self._send(conn, writer, connect.encode_end_stream(error))
        writer.write(conn.send(h11.EndOfMessage()))
        await writer.drain()

    async def _serve_h2(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        conn = h2.connection.H2Connection(
            h2.config.H2Configuration(client_side=False, header_encoding=None)
        )
        conn.initiate_connection()
        writer.write(conn.data_to_send())
        answering: set[int] = set()
        reset: set[int] = set()
        uploads: dict[int, connect.EnvelopeDecoder] = {}
        ids: dict[int, str] = {}  # stream → x-request-id
        runs: dict[int, _Run] = {}  # stream → what its upload told (checkpoints=True)

        async def answer(stream_id: int) -> None:
            conn.send_data(stream_id, self._sent(self.first))
            writer.write(conn.data_to_send())
            await writer.drain()
            if self.reset_after_first:
                conn.reset_stream(stream_id, h2.errors.ErrorCodes.INTERNAL_ERROR)
                writer.write(conn.data_to_send())
                await writer.drain()
                return
            await self._hold()
            if stream_id in reset:
                return
            conn.send_data(stream_id, self._sent(self.rest))
            error = None
            if self.checkpoints:

                async def send(frame: bytes) -> None:
                    if stream_id in reset:
                        return
                    conn.send_data(stream_id, self._sent(frame))
                    writer.write(conn.data_to_send())
                    await writer.drain()

                run = runs.setdefault(stream_id, _Run())
                error = await self._close_run(run, ids[stream_id], send)
            if stream_id in reset:
                return
            end = self._sent(connect.encode_end_stream(error))
            conn.send_data(stream_id, end, end_stream=True)
            writer.write(conn.data_to_send())
            await writer.drain()

        while True:
            data = await reader.read(65536)
            if not data:
                return
            for event in conn.receive_data(data):
                if isinstance(event, h2.events.RequestReceived):
                    headers = {k.decode(): v.decode() for k, v in event.headers}
                    self.requests.append(Received(headers[":path"], headers, b""))
                    ids[event.stream_id] = headers.get("x-request-id", "")
                    conn.send_headers(
                        event.stream_id,
                        [(":status", "200"), ("content-type", "application/connect+proto")],
                    )
                elif isinstance(event, h2.events.DataReceived):
                    conn.acknowledge_received_data(event.flow_controlled_length, event.stream_id)
                    self.run_upload += event.data
                    if self.checkpoints:
                        decoder = uploads.setdefault(event.stream_id, connect.EnvelopeDecoder())
                        for frame in decoder.feed(event.data):
                            message = pb.AgentClientMessage.FromString(frame.payload)
                            self._received(runs.setdefault(event.stream_id, _Run()), message)
                    if event.stream_id not in answering:
                        answering.add(event.stream_id)
                        task = asyncio.ensure_future(answer(event.stream_id))
                        self._tasks.add(task)
                        task.add_done_callback(self._tasks.discard)
                elif isinstance(event, h2.events.StreamEnded):
                    self.run_upload_ended = True
                elif isinstance(event, h2.events.StreamReset):
                    self.run_resets += 1
                    reset.add(event.stream_id)
            writer.write(conn.data_to_send())
            await writer.drain()

    def _run(self, key: str) -> _Run:
        run = self._runs.get(key)
        if run is None:
            run = self._runs[key] = _Run()
        return run

    def _received(self, run: _Run, message: pb.AgentClientMessage) -> None:
        kind = message.WhichOneof("message")
        if kind == "run_request" and not run.request.done():
            self.run_requests.append(message.run_request)
            run.request.set_result(message.run_request)
        elif kind == "kv_client_message":
            self.kv_acks.append(message.kv_client_message)
            run.acks[message.kv_client_message.id] = message.kv_client_message
            self.timeline.append(f"ack {message.kv_client_message.id}")
            run.changed.set()

    async def _close_run(
        self, run: _Run, request_id: str, send: Callable[[bytes], Awaitable[None]]
    ) -> connect.EndStreamError | None:
        """Cursor's turn close (protocol.md §4.5): SET ×n (all acknowledged) → `turn_ended` →
        staged checkpoint → settled checkpoint twice. Returns the error to end with, if any."""
        try:
            async with asyncio.timeout(self.ack_timeout):
                request = await run.request
        except TimeoutError:
            return connect.EndStreamError("internal", "stand-in: no run request arrived")
        reply = "".join(
            pb.AgentServerMessage.FromString(f.payload).interaction_update.text_delta.text
            for f in connect.EnvelopeDecoder().feed(self.first + self.rest)
        )
        written = write_checkpoint(
            request, reply, request_id=request_id, thinking=self.thinking, signature=self.signature
        )
        for kv_id, (ident, data) in enumerate(written.blobs.items()):
            args = pb.SetBlobArgs(blob_id=ident, blob_data=data)
            kv = pb.KvServerMessage(id=kv_id, set_blob_args=args)
            self.timeline.append(f"set {kv_id}")
            await send(_frame(pb.AgentServerMessage(kv_server_message=kv)))
        wanted = set(range(len(written.blobs)))
        try:
            async with asyncio.timeout(self.ack_timeout):
                while not wanted <= run.acks.keys():
                    run.changed.clear()
                    await run.changed.wait()
        except TimeoutError:
            missing = sorted(wanted - run.acks.keys())
            return connect.EndStreamError("internal", f"stand-in: blobs {missing} not acknowledged")
        failed = [a.id for i, a in run.acks.items() if a.set_blob_result.HasField("error")]
        if failed:
            return connect.EndStreamError("internal", f"stand-in: blobs {failed} not stored")
        self.timeline.append("turn_ended")
        ended = pb.InteractionUpdate(turn_ended=pb.TurnEndedUpdate(input_tokens=1, output_tokens=1))
        await send(_frame(pb.AgentServerMessage(interaction_update=ended)))
        for state in (written.staged, written.settled, written.settled):
            self.timeline.append("checkpoint")
            await send(_frame(pb.AgentServerMessage(conversation_checkpoint_update=state)))
        self.written.append(written)
        return None

    async def _hold(self) -> None:
        """Wait for `release` (bounded) before the rest of a stream, if this one is held."""
        self._streams += 1
        if self.held_streams is not None and self._streams > self.held_streams:
            return
        try:
            async with asyncio.timeout(self.release_timeout):
                await self.release.wait()
            self.released_by_client = True
        except TimeoutError:
            pass

    def _sent(self, data: bytes) -> bytes:
        self.sent.append(data)
        return data

    def _send(self, conn: h11.Connection, writer: asyncio.StreamWriter, data: bytes) -> None:
        self.sent.append(data)
        writer.write(conn.send(h11.Data(data=data)))
