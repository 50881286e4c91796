"""The in-process loopback HTTP/1.1 server that serves RunSSE bodies as live streams.

mitmproxy cannot stream a response body made in the `request` hook (mitmproxy.md §2), but it does
stream whatever an upstream server sends once `flow.response.stream = True`. So the addon points
RunSSE flows at this server, on 127.0.0.1 and an ephemeral port, in the same event loop; it writes
one chunk per Connect frame as the session produces them. A header carrying a per-process secret
and the request id ties the loopback request to its session.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import secrets

import h11

from cursor_byok.sessions import SessionRegistry

log = logging.getLogger(__name__)

STREAM_HEADER = "x-cursor-byok-stream"
ENCODING_HEADER = "x-cursor-byok-encoding"
_MAX_HEAD = 64 * 1024


class Streamer:
    def __init__(self, registry: SessionRegistry, host: str = "127.0.0.1") -> None:
        self.registry = registry
        self.host = host
        self.secret = secrets.token_hex(16)
        self.port: int | None = None
        self._server: asyncio.Server | None = None
        self._connections: set[asyncio.Task] = set()

    def header_value(self, request_id: str) -> str:
        return f"{self.secret}:{request_id}"

    async def start(self) -> int:
        self._server = await asyncio.start_server(self._serve, self.host, 0)
        self.port = self._server.sockets[0].getsockname()[1]
        log.debug("RunSSE loopback streamer on %s:%d", self.host, self.port)
        return self.port

    async def stop(self) -> None:
        if self._server is not None:
            self._server.close()
            for task in list(self._connections):
                task.cancel()
            with contextlib.suppress(Exception):
                await self._server.wait_closed()
            self._server = None

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
        finally:
            if task is not None:
                self._connections.discard(task)
            writer.close()
            with contextlib.suppress(Exception):
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

    async def _respond(
        self,
        conn: h11.Connection,
        request: h11.Request,
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
    ) -> None:
        headers = {k.decode().lower(): v.decode() for k, v in request.headers}
        secret, _, request_id = headers.get(STREAM_HEADER, "").partition(":")
        live = (
            self.registry.get(request_id) if secrets.compare_digest(secret, self.secret) else None
        )
        if live is None:
            body = b"unknown stream\n"
            writer.write(
                conn.send(
                    h11.Response(status_code=404, headers=[("content-length", str(len(body)))])
                )
            )
            writer.write(conn.send(h11.Data(data=body)) + conn.send(h11.EndOfMessage()))
            await writer.drain()
            return
        encoding = headers.get(ENCODING_HEADER) or None
        response_headers = [
            ("content-type", "text/event-stream"),
            ("cache-control", "no-cache"),
            ("connect-protocol-version", "1"),
        ]
        if encoding:
            response_headers.append(("connect-content-encoding", encoding))
        writer.write(conn.send(h11.Response(status_code=200, headers=response_headers)))
        await writer.drain()
        sub = live.subscribe(encoding)
        gone = asyncio.ensure_future(reader.read(1))  # EOF here: mitmproxy dropped the stream
        frames = 0
        try:
            async for frame in _until(live.frames(sub), gone):
                writer.write(conn.send(h11.Data(data=frame)))
                await writer.drain()
                frames += 1
            if not gone.done():
                writer.write(conn.send(h11.EndOfMessage()))
                await writer.drain()
        finally:
            gone.cancel()
            live.unsubscribe(sub)
            log.debug("request %s: RunSSE subscriber sent %d frames", request_id, frames)


async def _until(frames, stop: asyncio.Future):
    """Yield from an async iterator until `stop` completes."""
    iterator = frames.__aiter__()
    while True:
        step = asyncio.ensure_future(iterator.__anext__())
        done, _ = await asyncio.wait({step, stop}, return_when=asyncio.FIRST_COMPLETED)
        if step not in done:
            step.cancel()
            return
        try:
            yield step.result()
        except StopAsyncIteration:
            return
