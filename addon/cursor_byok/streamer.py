"""The in-process loopback HTTP/1.1 server that serves Agent response streams live.

mitmproxy cannot stream a response body made in the `request` hook (mitmproxy.md §2), but it does
stream whatever an upstream server sends once `flow.response.stream = True`. So the addon points
RunSSE and `Run` flows at this server, on 127.0.0.1 and an ephemeral port, in the same event loop;
it writes the frames of one attempt as they are queued, all frames ready together as one chunk.
Internal headers, guarded by a per-process secret, say which attempt a loopback request reads.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import secrets
from dataclasses import dataclass

import h11

from cursor_byok import connect
from cursor_byok.session import Refused
from cursor_byok.sessions import SessionRegistry

log = logging.getLogger(__name__)

STREAM_HEADER = "x-cursor-byok-stream"
_MAX_HEAD = 64 * 1024


@dataclass(frozen=True, slots=True)
class StreamSpec:
    """What the addon tells the streamer about one response stream."""

    request_id: str
    owner: bytes = b""
    encoding: str | None = None
    content_type: str = "text/event-stream"
    grpc_web: bool = False
    transport: str = "bidi"
    error: tuple[str, str] | None = None  # answer only this (code, message), read nothing
    error_stream: bool = False  # as a stream end (`Run`), else as a unary Connect error

    def encode(self, secret: str) -> str:
        body = {
            "r": self.request_id,
            "o": self.owner.hex(),
            "e": self.encoding or "",
            "c": self.content_type,
            "g": self.grpc_web,
            "t": self.transport,
            "x": list(self.error) if self.error else None,
            "s": self.error_stream,
        }
        return secret + ":" + json.dumps(body, separators=(",", ":"))

    @classmethod
    def decode(cls, value: str, secret: str) -> StreamSpec | None:
        given, _, body = value.partition(":")
        if not secrets.compare_digest(given.encode(), secret.encode()):
            return None
        try:
            data = json.loads(body)
            return cls(
                request_id=str(data["r"]),
                owner=bytes.fromhex(data["o"]),
                encoding=data["e"] or None,
                content_type=str(data["c"]),
                grpc_web=bool(data["g"]),
                transport=str(data["t"]),
                error=(str(data["x"][0]), str(data["x"][1])) if data["x"] else None,
                error_stream=bool(data["s"]),
            )
        except (ValueError, KeyError, TypeError):
            return None


class Streamer:
    def __init__(self, registry: SessionRegistry, host: str = "127.0.0.1") -> None:
        self.registry = registry
        self.host = host
        self.secret = secrets.token_hex(16)
        self.port: int | None = None
        self._server: asyncio.Server | None = None
        self._connections: set[asyncio.Task] = set()

    def header_value(self, spec: StreamSpec) -> str:
        return spec.encode(self.secret)

    async def start(self) -> int:
        self._server = await asyncio.start_server(self._serve, self.host, 0)
        self.port = self._server.sockets[0].getsockname()[1]
        log.debug("loopback streamer on %s:%d", self.host, self.port)
        return self.port

    async def stop(self) -> None:
        if self._server is not None:
            self._server.close()
            for task in list(self._connections):
                task.cancel()
            with contextlib.suppress(Exception):
                await self._server.wait_closed()
            self._server = None

    @property
    def open_streams(self) -> int:
        return len(self._connections)

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        if task is not None:
            self._connections.add(task)
        conn = h11.Connection(h11.SERVER, max_incomplete_event_size=_MAX_HEAD)
        try:
            request = await self._read_request(conn, reader)
            if request is None:
                return
            await self._respond(conn, request, reader, writer)
        except (ConnectionError, h11.ProtocolError, asyncio.IncompleteReadError) as exc:
            log.debug("loopback connection ended: %s", exc)
        except asyncio.CancelledError:
            log.debug("loopback connection closed by shutdown")  # nothing awaits this task
        finally:
            if task is not None:
                self._connections.discard(task)
            writer.close()
            # At shutdown this task is cancelled: end it quietly, nobody awaits it.
            with contextlib.suppress(Exception, asyncio.CancelledError):
                await writer.wait_closed()

    async def _read_request(
        self, conn: h11.Connection, reader: asyncio.StreamReader
    ) -> h11.Request | None:
        request = None
        while True:
            event = conn.next_event()
            if event is h11.NEED_DATA:
                data = await reader.read(65536)
                conn.receive_data(data)
                if not data and request is None:
                    return None
                continue
            if isinstance(event, h11.Request):
                request = event
            elif isinstance(event, h11.EndOfMessage):
                return request
            elif isinstance(event, h11.ConnectionClosed):
                return None

    async def _refuse(self, conn, writer, status: int, text: str) -> None:
        body = text.encode()
        head = h11.Response(status_code=status, headers=[("content-length", str(len(body)))])
        writer.write(
            conn.send(head) + conn.send(h11.Data(data=body)) + conn.send(h11.EndOfMessage())
        )
        await writer.drain()

    async def _answer_error(self, conn, writer, spec: StreamSpec) -> None:
        code, message = spec.error or ("internal", "")
        if spec.error_stream:
            body = connect.encode_end_stream(connect.EndStreamError(code, message))
            head = h11.Response(
                status_code=200,
                headers=[
                    ("content-type", "application/connect+proto"),
                    ("content-length", str(len(body))),
                ],
            )
        else:
            status, body = connect.unary_error(code, message)
            head = h11.Response(
                status_code=status,
                headers=[("content-type", "application/json"), ("content-length", str(len(body)))],
            )
        writer.write(
            conn.send(head) + conn.send(h11.Data(data=body)) + conn.send(h11.EndOfMessage())
        )
        await writer.drain()

    async def _respond(
        self,
        conn: h11.Connection,
        request: h11.Request,
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
    ) -> None:
        headers = {k.decode().lower(): v.decode() for k, v in request.headers}
        spec = StreamSpec.decode(headers.get(STREAM_HEADER, ""), self.secret)
        if spec is None:
            await self._refuse(conn, writer, 404, "unknown stream\n")
            return
        if spec.error is not None:
            await self._answer_error(conn, writer, spec)
            return
        try:
            sub = self.registry.subscribe(
                spec.request_id,
                owner=spec.owner,
                encoding=spec.encoding,
                grpc_web=spec.grpc_web,
                transport=spec.transport,
            )
        except Refused as exc:
            await self._refuse(conn, writer, 403, f"{exc}\n")
            return
        response_headers = [
            ("content-type", spec.content_type),
            ("cache-control", "no-cache"),
        ]
        if not spec.grpc_web:
            response_headers.append(("connect-protocol-version", "1"))
        if spec.encoding:
            key = "grpc-encoding" if spec.grpc_web else "connect-content-encoding"
            response_headers.append((key, spec.encoding))
        writer.write(conn.send(h11.Response(status_code=200, headers=response_headers)))
        gone = asyncio.ensure_future(reader.read(1))  # EOF here: mitmproxy dropped the stream
        chunks = 0
        try:
            await writer.drain()
            async for chunk in self.registry.frames(sub, until=gone):
                writer.write(conn.send(h11.Data(data=chunk)))
                await writer.drain()
                chunks += 1
            if not gone.done():
                writer.write(conn.send(h11.EndOfMessage()))
                await writer.drain()
        finally:
            gone.cancel()
            self.registry.unsubscribe(sub)
            log.debug("request %s: stream wrote %d chunks", spec.request_id, chunks)
