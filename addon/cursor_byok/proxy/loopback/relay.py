"""Relay one stream of a run on one of Cursor's models to Cursor's backend: a `Run` stream over
HTTP/2 (`relay_h2`, its lifecycle in `Stage`), a RunSSE request over HTTP/1.1 (`relay_h11`).

The flow's upstream was fixed (our loopback) before its first envelope said which model, so the
loopback side forwards it itself (mitmproxy.md §3.3): one TLS + h2 connection per stream to the
original host:port, the client's request headers as they were, the upload's bytes as they come
(the envelopes read before the decision first), and the response body's bytes back as they come.
Our response head is already out, so an upstream failure before any data becomes a Connect
end-of-stream error; a reset after data aborts the loopback response (the client sees a reset).
With mitmproxy's `upstream:http://HOST:PORT` mode the connection is tunnelled through that proxy
(HTTP CONNECT, `upstream_auth` as Basic credentials), as mitmproxy's own upstream traffic is.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import enum
import json
import logging
import ssl
import urllib.parse
from collections.abc import Callable
from collections.abc import Sequence
from dataclasses import dataclass

import h2.config
import h2.connection
import h2.errors
import h2.events
import h2.exceptions
import h11

from cursor_byok.errors import ByokError
from cursor_byok.errors import Code
from cursor_byok.proxy.loopback.spec import RELAY_RESET
from cursor_byok.proxy.loopback.spec import STREAM_HEADER
from cursor_byok.proxy.loopback.spec import Forward
from cursor_byok.proxy.loopback.spec import StreamSpec
from cursor_byok.wire import connect

log = logging.getLogger(__name__)

CONNECT_TIMEOUT = 15.0  # seconds to reach Cursor's backend for a passed-through run
_MAX_ERROR_BODY = 64 * 1024
_STATUS_CODES = {
    400: "invalid_argument",
    401: "unauthenticated",
    403: "permission_denied",
    404: "unimplemented",
    429: "resource_exhausted",
}
_SKIP = {
    "host",
    "connection",
    "keep-alive",
    "proxy-connection",
    "proxy-authorization",
    "transfer-encoding",
    "content-length",
    "upgrade",
    "x-cursor-byok-stream",
}


@dataclass(frozen=True, slots=True)
class UpstreamProxy:
    """mitmproxy's `upstream:` proxy, which relays must go through too."""

    host: str
    port: int
    auth: str = ""  # "user:password" (mitmproxy's `upstream_auth`); never logged


def upstream_proxy(modes: Sequence[str], auth: str | None = None) -> UpstreamProxy | None:
    """The `upstream:http://host:port` proxy among mitmproxy's modes, if any."""
    for mode in modes:
        if not str(mode).startswith("upstream:"):
            continue
        url = urllib.parse.urlsplit(str(mode).removeprefix("upstream:"))
        if url.scheme not in ("http", "") or not url.hostname:
            log.warning("relays to Cursor connect directly: upstream proxy %s not supported", mode)
            return None
        return UpstreamProxy(url.hostname, url.port or 80, auth or "")
    return None


async def open_upstream(
    host: str,
    port: int,
    *,
    context: ssl.SSLContext | None,
    sni: str,
    proxy: UpstreamProxy | None = None,
) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    """A connection to Cursor's host (TLS when `context`), through `proxy` if there is one."""
    if proxy is None:
        return await asyncio.open_connection(
            host, port, ssl=context, server_hostname=sni if context is not None else None
        )
    reader, writer = await asyncio.open_connection(proxy.host, proxy.port)
    target = f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
    head = f"CONNECT {target} HTTP/1.1\r\nHost: {target}\r\n"
    if proxy.auth:
        head += f"Proxy-Authorization: Basic {base64.b64encode(proxy.auth.encode()).decode()}\r\n"
    writer.write((head + "\r\n").encode())
    try:
        await writer.drain()
        answer = await reader.readuntil(b"\r\n\r\n")
    except (asyncio.IncompleteReadError, asyncio.LimitOverrunError) as exc:
        writer.close()
        raise ConnectionError(f"upstream proxy {proxy.host}:{proxy.port}: {exc}") from None
    status_line = answer.split(b"\r\n", 1)[0].decode("latin-1")
    if status_line.split(" ")[1:2] != ["200"]:
        writer.close()
        raise ConnectionError(f"upstream proxy {proxy.host}:{proxy.port}: {status_line}")
    if context is not None:
        await writer.start_tls(context, server_hostname=sni)
    return reader, writer


class Aborted(ByokError):
    """The upstream reset the stream or went away mid-response."""

    code = Code.UNAVAILABLE


class Stage(enum.Enum):
    """Where one relayed stream is: what an upstream failure or end becomes depends on it."""

    OPENING = enum.auto()  # no answer head from Cursor yet
    ANSWERED = enum.auto()  # a 200 head, nothing of its body written to the client yet
    RELAYING = enum.auto()  # body bytes reached the client: a failure now aborts our response
    REFUSED = enum.auto()  # a non-200 head: the start of its body is kept for the error shown


_RELAY_FAILURES = (Aborted, ConnectionError, ssl.SSLError, h2.exceptions.ProtocolError)


async def relay_h2(
    forward: Forward,
    spec: StreamSpec,
    conn: h11.Connection,
    writer: asyncio.StreamWriter,
    gone: asyncio.Future,
    upstream_ssl: Callable[[], ssl.SSLContext],
    proxy: UpstreamProxy | None = None,
) -> None:
    """Relay a `Run` stream (the upload queue's bytes up, the answer's down) until it ends, the
    client goes (`gone`) or either side fails."""
    assert forward.upload is not None  # a Run relay always has its upload queue
    context = upstream_ssl()
    context.set_alpn_protocols(["h2"])
    opened = await connect_upstream(forward, spec, conn, writer, context, proxy, "Run")
    if opened is None:
        return
    reader, up = opened
    ssl_object = up.get_extra_info("ssl_object")
    if ssl_object is None or ssl_object.selected_alpn_protocol() != "h2":
        up.close()
        problem = "Cursor's backend did not offer HTTP/2"
        await end_with_error(conn, writer, spec, "unavailable", problem)
        return
    await _H2Relay(forward, spec, conn, writer, reader, up).run(gone)


async def connect_upstream(
    forward: Forward,
    spec: StreamSpec,
    conn: h11.Connection,
    writer: asyncio.StreamWriter,
    context: ssl.SSLContext | None,
    proxy: UpstreamProxy | None,
    what: str,
) -> tuple[asyncio.StreamReader, asyncio.StreamWriter] | None:
    """The connection to Cursor's backend for a relay; None once the client was told it is
    unreachable (`what` names the stream in the log)."""
    try:
        async with asyncio.timeout(CONNECT_TIMEOUT):
            return await open_upstream(
                forward.host,
                forward.port,
                context=context,
                sni=forward.sni or forward.host,
                proxy=proxy,
            )
    except (OSError, TimeoutError) as exc:
        log.warning("%s %s: Cursor's backend unreachable: %s", what, spec.request_id, exc)
        await end_with_error(conn, writer, spec, "unavailable", f"Cursor's backend: {exc}")
        return None


class _H2Relay:
    """One `Run` stream relayed over its own h2 connection to Cursor; `stage` is its lifecycle."""

    def __init__(
        self,
        forward: Forward,
        spec: StreamSpec,
        conn: h11.Connection,
        writer: asyncio.StreamWriter,
        reader: asyncio.StreamReader,
        up: asyncio.StreamWriter,
    ) -> None:
        assert forward.upload is not None
        self.spec = spec
        self.conn = conn  # our loopback response to mitmproxy
        self.writer = writer
        self.reader = reader  # Cursor's side
        self.up = up
        self.queue = forward.upload
        self.stage = Stage.OPENING
        self.status = 0  # Cursor's HTTP status
        self.error = b""  # the start of a non-200 body, for the error we show
        self.window = asyncio.Event()  # set when the upstream opens its flow-control window
        self.h2conn = h2.connection.H2Connection(
            h2.config.H2Configuration(client_side=True, header_encoding=None)
        )
        self.h2conn.initiate_connection()
        self.stream_id = self.h2conn.get_next_available_stream_id()
        authority = forward.authority or forward.host
        headers = [
            (b":method", b"POST"),
            (b":scheme", b"https"),
            (b":authority", authority.encode()),
            (b":path", forward.path.encode()),
        ]
        headers += [(k.lower(), v) for k, v in forward.headers if k.decode().lower() not in _SKIP]
        self.h2conn.send_headers(self.stream_id, headers)
        up.write(self.h2conn.data_to_send())

    async def run(self, gone: asyncio.Future) -> None:
        up_task = asyncio.ensure_future(self._upload())
        down_task = asyncio.ensure_future(self._download())
        try:
            await asyncio.wait({down_task, gone}, return_when=asyncio.FIRST_COMPLETED)
            if not down_task.done():  # the client went away: cancel Cursor's side too
                _reset(self.h2conn, self.up, self.stream_id)
                return
            failure = down_task.exception()
            if failure is None and up_task.done() and up_task.exception() is not None:
                failure = up_task.exception()
            if failure is not None:
                raise failure
        except _RELAY_FAILURES as exc:
            await self._failed(exc)
            return
        finally:
            for task in (up_task, down_task):
                task.cancel()
            with contextlib.suppress(Exception):
                self.up.close()
        if self.stage in (Stage.OPENING, Stage.REFUSED):
            code, message = upstream_error(self.status, self.error)
            await end_with_error(self.conn, self.writer, self.spec, code, message)
            return
        self.writer.write(self.conn.send(h11.EndOfMessage()))
        await self.writer.drain()

    async def _failed(self, exc: Exception) -> None:
        log.warning("Run %s: relay to Cursor ended: %s", self.spec.request_id, exc)
        if isinstance(exc, Aborted) and str(exc) == "client reset":
            _reset(self.h2conn, self.up, self.stream_id)
        if self.stage is Stage.RELAYING:
            self.writer.transport.abort()  # mid-stream: the client sees a reset, as upstream did
        else:
            message = f"Cursor's backend: {exc}"
            await end_with_error(self.conn, self.writer, self.spec, "unavailable", message)

    async def _upload(self) -> None:
        """The client's upload, chunk by chunk, within Cursor's flow-control window."""
        while True:
            chunk = await self.queue.get()
            if chunk is None:
                self.h2conn.end_stream(self.stream_id)
                await self._flush()
                return
            if chunk is RELAY_RESET:
                raise Aborted("client reset")
            view = memoryview(chunk)
            while view:
                size = min(
                    len(view),
                    self.h2conn.local_flow_control_window(self.stream_id),
                    self.h2conn.max_outbound_frame_size,
                )
                if size <= 0:
                    self.window.clear()
                    await self.window.wait()
                    continue
                self.h2conn.send_data(self.stream_id, view[:size].tobytes())
                view = view[size:]
                await self._flush()

    async def _download(self) -> None:
        """Cursor's answer until it ends our stream; Aborted when it resets or goes away."""
        while True:
            data = await self.reader.read(65536)
            if not data:
                raise Aborted("Cursor's backend closed the connection")
            for event in self.h2conn.receive_data(data):
                if await self._on_event(event):
                    return
            await self._flush()

    async def _on_event(self, event: h2.events.Event) -> bool:
        """Take one h2 event of Cursor's connection; True once Cursor ended our stream."""
        ours = getattr(event, "stream_id", None) == self.stream_id
        if isinstance(event, h2.events.ResponseReceived):
            self._answered(event.headers)
        elif isinstance(event, h2.events.DataReceived):
            self.h2conn.acknowledge_received_data(event.flow_controlled_length, self.stream_id)
            if ours:
                await self._body(event.data)
        elif isinstance(event, h2.events.StreamEnded) and ours:
            self.up.write(self.h2conn.data_to_send())
            return True
        elif isinstance(event, h2.events.StreamReset) and ours:
            raise Aborted(f"Cursor's backend reset the stream ({event.error_code!r})")
        elif isinstance(event, h2.events.ConnectionTerminated):
            raise Aborted("Cursor's backend ended the connection")
        elif isinstance(event, h2.events.WindowUpdated | h2.events.RemoteSettingsChanged):
            self.window.set()
        return False

    def _answered(self, headers: Sequence[tuple[bytes, bytes]]) -> None:
        for name, value in headers:
            if name == b":status":
                self.status = int(value)
        if self.stage is not Stage.RELAYING:
            self.stage = Stage.ANSWERED if self.status == 200 else Stage.REFUSED

    async def _body(self, data: bytes) -> None:
        if self.stage in (Stage.ANSWERED, Stage.RELAYING):
            self.stage = Stage.RELAYING
            self.writer.write(self.conn.send(h11.Data(data=data)))
            await self.writer.drain()
        elif len(self.error) < _MAX_ERROR_BODY:
            self.error += data

    async def _flush(self) -> None:
        self.up.write(self.h2conn.data_to_send())
        await self.up.drain()


def _reset(h2conn: h2.connection.H2Connection, up: asyncio.StreamWriter, stream_id: int) -> None:
    with contextlib.suppress(Exception):
        h2conn.reset_stream(stream_id, h2.errors.ErrorCodes.CANCEL)
        up.write(h2conn.data_to_send())


async def end_with_error(conn, writer, spec: StreamSpec, code: str, message: str) -> None:
    """End a loopback response whose head is out with a Connect (or gRPC-Web) error."""
    error = connect.EndStreamError(code, message)
    if spec.grpc_web:
        data = connect.encode_grpc_web_trailer(error)
    else:
        data = connect.encode_end_stream(error)
    writer.write(conn.send(h11.Data(data=data)) + conn.send(h11.EndOfMessage()))
    await writer.drain()


def upstream_error(status: int, body: bytes) -> tuple[str, str]:
    """A Connect (code, message) for a non-200 answer of Cursor's backend."""
    with contextlib.suppress(ValueError, AttributeError):
        data = json.loads(body)
        if isinstance(data.get("code"), str):
            return data["code"], str(data.get("message", ""))
    code = _STATUS_CODES.get(status, "unavailable" if status >= 500 else "unknown")
    return code, f"Cursor's backend answered HTTP {status}"


_HOP_BY_HOP = {
    "connection",
    "keep-alive",
    "proxy-connection",
    "proxy-authorization",
    "transfer-encoding",
    "content-length",
    "te",
    "upgrade",
    STREAM_HEADER,
}


async def relay_h11(
    forward: Forward,
    spec: StreamSpec,
    conn: h11.Connection,
    writer: asyncio.StreamWriter,
    gone: asyncio.Future,
    upstream_ssl: Callable[[], ssl.SSLContext],
    proxy: UpstreamProxy | None = None,
) -> None:
    """Send a RunSSE stream's original request to Cursor's backend; its body bytes go to the
    client as they come. Our response head is already out (the client may wait for it before
    it sends the run request), so an upstream error becomes an end-of-stream error."""
    https = forward.scheme == "https"
    context = upstream_ssl() if https else None
    opened = await connect_upstream(forward, spec, conn, writer, context, proxy, "RunSSE")
    if opened is None:
        return
    up_reader, up_writer = opened
    client = h11.Connection(h11.CLIENT)
    answer = _H11Answer()
    try:
        up_writer.write(_h11_request(client, forward, https))
        await up_writer.drain()
        if not await answer.read(client, up_reader, conn, writer, gone):
            return  # the client went away: drop the upstream call too
    except (ConnectionError, h11.ProtocolError, ssl.SSLError) as exc:
        log.warning("RunSSE %s: Cursor's backend: %s", spec.request_id, exc)
        if answer.status != 200:
            await end_with_error(conn, writer, spec, "unavailable", f"Cursor's backend: {exc}")
        return  # mid-stream: end without an end envelope, as the upstream did
    finally:
        up_writer.close()
    if answer.status != 200:
        code, message = upstream_error(answer.status, answer.error)
        await end_with_error(conn, writer, spec, code, message)
        return
    writer.write(conn.send(h11.EndOfMessage()))
    await writer.drain()


def _h11_request(client: h11.Connection, forward: Forward, https: bool) -> bytes:
    """The held request as it came, without hop-by-hop headers, for an HTTP/1.1 upstream."""
    headers = [(k, v) for k, v in forward.headers if k.decode().lower() not in _HOP_BY_HOP]
    if not any(k.lower() == b"host" for k, _ in headers):
        default = 443 if https else 80
        host = forward.host if forward.port == default else f"{forward.host}:{forward.port}"
        headers.insert(0, (b"host", host.encode()))
    headers.append((b"content-length", str(len(forward.body)).encode()))
    return (
        client.send(h11.Request(method="POST", target=forward.path, headers=headers))
        + client.send(h11.Data(data=forward.body))
        + client.send(h11.EndOfMessage())
    )


@dataclass
class _H11Answer:
    """Cursor's answer to a relayed RunSSE request as it is read."""

    status: int = 0
    error: bytes = b""  # the start of a non-200 body, for the error we show

    async def read(
        self,
        client: h11.Connection,
        up_reader: asyncio.StreamReader,
        conn: h11.Connection,
        writer: asyncio.StreamWriter,
        gone: asyncio.Future,
    ) -> bool:
        """Relay a 200's body to the client until Cursor ends it; False when the client went
        away first."""
        while True:
            event = client.next_event()
            if event is h11.NEED_DATA:
                read = asyncio.ensure_future(up_reader.read(65536))
                await asyncio.wait({read, gone}, return_when=asyncio.FIRST_COMPLETED)
                if not read.done():
                    read.cancel()
                    return False
                client.receive_data(read.result())
            elif isinstance(event, h11.Response):
                self.status = event.status_code
            elif isinstance(event, h11.Data):
                if self.status == 200:
                    writer.write(conn.send(h11.Data(data=bytes(event.data))))
                    await writer.drain()
                elif len(self.error) < _MAX_ERROR_BODY:
                    self.error += bytes(event.data)
            elif isinstance(event, h11.EndOfMessage | h11.ConnectionClosed):
                return True
