"""Relay one `Run` stream to Cursor's backend over HTTP/2: a run on one of Cursor's models.

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
from cursor_byok.proxy.loopback.spec import Forward
from cursor_byok.proxy.loopback.spec import StreamSpec
from cursor_byok.wire import connect

log = logging.getLogger(__name__)

CONNECT_TIMEOUT = 15.0
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


async def relay_h2(
    forward: Forward,
    spec: StreamSpec,
    conn: h11.Connection,
    writer: asyncio.StreamWriter,
    gone: asyncio.Future,
    upstream_ssl: Callable[[], ssl.SSLContext],
    proxy: UpstreamProxy | None = None,
) -> None:

    assert forward.upload is not None
    context = upstream_ssl()
    context.set_alpn_protocols(["h2"])
    try:
        async with asyncio.timeout(CONNECT_TIMEOUT):
            reader, up = await open_upstream(
                forward.host,
                forward.port,
                context=context,
                sni=forward.sni or forward.host,
                proxy=proxy,
            )
    except (OSError, TimeoutError) as exc:
        log.warning("Run %s: Cursor's backend unreachable: %s", spec.request_id, exc)
        await end_with_error(conn, writer, spec, "unavailable", f"Cursor's backend: {exc}")
        return
    ssl_object = up.get_extra_info("ssl_object")
    if ssl_object is None or ssl_object.selected_alpn_protocol() != "h2":
        up.close()
        problem = "Cursor's backend did not offer HTTP/2"
        await end_with_error(conn, writer, spec, "unavailable", problem)
        return
    h2conn = h2.connection.H2Connection(
        h2.config.H2Configuration(client_side=True, header_encoding=None)
    )
    h2conn.initiate_connection()
    stream_id = h2conn.get_next_available_stream_id()
    authority = forward.authority or forward.host
    headers = [
        (b":method", b"POST"),
        (b":scheme", b"https"),
        (b":authority", authority.encode()),
        (b":path", forward.path.encode()),
    ]
    headers += [(k.lower(), v) for k, v in forward.headers if k.decode().lower() not in _SKIP]
    h2conn.send_headers(stream_id, headers)
    up.write(h2conn.data_to_send())
    window = asyncio.Event()  # set when the upstream opens its flow-control window
    state = _RelayState()

    queue = forward.upload
    assert queue is not None  # a Run relay always has its upload queue

    async def upload() -> None:
        while True:
            chunk = await queue.get()
            if chunk is None:
                h2conn.end_stream(stream_id)
                up.write(h2conn.data_to_send())
                await up.drain()
                return
            if chunk is RELAY_RESET:
                raise Aborted("client reset")
            view = memoryview(chunk)
            while view:
                size = min(
                    len(view),
                    h2conn.local_flow_control_window(stream_id),
                    h2conn.max_outbound_frame_size,
                )
                if size <= 0:
                    window.clear()
                    await window.wait()
                    continue
                h2conn.send_data(stream_id, view[:size].tobytes())
                view = view[size:]
                up.write(h2conn.data_to_send())
                await up.drain()

    async def download() -> None:
        while True:
            data = await reader.read(65536)
            if not data:
                raise Aborted("Cursor's backend closed the connection")
            for event in h2conn.receive_data(data):
                if isinstance(event, h2.events.ResponseReceived):
                    for name, value in event.headers:
                        if name == b":status":
                            state.status = int(value)
                elif isinstance(event, h2.events.DataReceived):
                    h2conn.acknowledge_received_data(event.flow_controlled_length, stream_id)
                    if event.stream_id != stream_id:
                        continue
                    if state.status == 200:
                        state.data = True
                        writer.write(conn.send(h11.Data(data=event.data)))
                        await writer.drain()
                    elif len(state.error) < 65536:
                        state.error += event.data
                elif isinstance(event, h2.events.StreamEnded) and event.stream_id == stream_id:
                    up.write(h2conn.data_to_send())
                    return
                elif isinstance(event, h2.events.StreamReset) and event.stream_id == stream_id:
                    raise Aborted(f"Cursor's backend reset the stream ({event.error_code!r})")
                elif isinstance(event, h2.events.ConnectionTerminated):
                    raise Aborted("Cursor's backend ended the connection")
                elif isinstance(event, h2.events.WindowUpdated | h2.events.RemoteSettingsChanged):
                    window.set()
            up.write(h2conn.data_to_send())
            await up.drain()

    up_task = asyncio.ensure_future(upload())
    down_task = asyncio.ensure_future(download())
    try:
        await asyncio.wait({down_task, gone}, return_when=asyncio.FIRST_COMPLETED)
        if not down_task.done():  # the client went away: cancel Cursor's side too
            _reset(h2conn, up, stream_id)
            return
        failure = down_task.exception()
        if failure is None and up_task.done() and up_task.exception() is not None:
            failure = up_task.exception()
        if failure is not None:
            raise failure
    except (Aborted, ConnectionError, ssl.SSLError, h2.exceptions.ProtocolError) as exc:
        log.warning("Run %s: relay to Cursor ended: %s", spec.request_id, exc)
        if isinstance(exc, Aborted) and str(exc) == "client reset":
            _reset(h2conn, up, stream_id)
        if not state.data:
            await end_with_error(conn, writer, spec, "unavailable", f"Cursor's backend: {exc}")
        else:
            writer.transport.abort()  # mid-stream: the client sees a reset, as upstream did
        return
    finally:
        for task in (up_task, down_task):
            task.cancel()
        with contextlib.suppress(Exception):
            up.close()
    if state.status != 200:
        code, message = upstream_error(state.status, state.error)
        await end_with_error(conn, writer, spec, code, message)
        return
    writer.write(conn.send(h11.EndOfMessage()))
    await writer.drain()


@dataclass
class _RelayState:
    status: int = 0  # Cursor's HTTP status
    data: bool = False  # whether any body reached the client
    error: bytes = b""  # the start of a non-200 body, for the error we show


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
