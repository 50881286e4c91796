"""A small asyncio HTTP/2 client of our own, for full-duplex `Run` streams through the proxy.

CONNECT through mitmproxy, TLS with ALPN h2 (the proxy's CA), then the `h2` state machine. Each
stream has a queue of its events, so one connection can carry several `Run` streams and unrelated
requests at once, as Cursor's does. Timestamps let tests measure when END_STREAM arrived.
"""

from __future__ import annotations

import asyncio
import contextlib
import ssl
import time
from dataclasses import dataclass
from dataclasses import field
from pathlib import Path

import h2.config
import h2.connection
import h2.errors
import h2.events


@dataclass
class H2Stream:
    stream_id: int
    connection: H2Client
    events: asyncio.Queue = field(default_factory=asyncio.Queue)
    status: int | None = None
    headers: dict[str, str] = field(default_factory=dict)
    trailers: dict[str, str] = field(default_factory=dict)
    ended_at: float | None = None  # monotonic time END_STREAM arrived
    reset: bool = False
    reset_code: int | None = None  # the error code of a RST_STREAM from the server
    reset_seen: asyncio.Event = field(default_factory=asyncio.Event)  # ... when one came

    async def send(self, data: bytes, *, end: bool = False) -> None:
        await self.connection.send_data(self.stream_id, data, end=end)

    async def cancel(self) -> None:
        await self.connection.reset(self.stream_id)

    async def chunks(self):
        """Response body chunks until END_STREAM or reset."""
        while True:
            event = await self.events.get()
            if event is None:
                self.reset = True
                return
            if isinstance(event, h2.events.ResponseReceived):
                self.status = int(dict(event.headers)[b":status"])
                self.headers = {k.decode(): v.decode() for k, v in event.headers}
            elif isinstance(event, h2.events.DataReceived):
                yield event.data
            elif isinstance(event, h2.events.TrailersReceived):
                self.trailers = {k.decode(): v.decode() for k, v in event.headers}
            elif isinstance(event, h2.events.StreamEnded):
                return
            elif isinstance(event, h2.events.StreamReset):
                self.reset = True
                return


class H2Client:
    def __init__(self, reader, writer) -> None:
        self.reader = reader
        self.writer = writer
        self.conn = h2.connection.H2Connection(
            h2.config.H2Configuration(client_side=True, header_encoding=None)
        )
        self.streams: dict[int, H2Stream] = {}
        self._lock = asyncio.Lock()
        self._pump: asyncio.Task | None = None
        self.closed = asyncio.Event()
        self.holding = False  # True: received DATA is not acknowledged (a slow reader)
        self._unacked: dict[int, int] = {}  # stream id -> bytes received while holding

    @classmethod
    async def connect(cls, proxy_port: int, host: str, ca_file: Path, port: int = 443) -> H2Client:
        reader, writer = await asyncio.open_connection("127.0.0.1", proxy_port)
        writer.write(f"CONNECT {host}:{port} HTTP/1.1\r\nHost: {host}:{port}\r\n\r\n".encode())
        await writer.drain()
        head = await reader.readuntil(b"\r\n\r\n")
        assert head.split(b" ")[1] == b"200", head
        context = ssl.create_default_context(cafile=str(ca_file))
        context.set_alpn_protocols(["h2"])
        await writer.start_tls(context, server_hostname=host)
        ssl_object = writer.get_extra_info("ssl_object")
        assert ssl_object.selected_alpn_protocol() == "h2"
        client = cls(reader, writer)
        client.conn.initiate_connection()
        client.conn.increment_flow_control_window(2**24)
        await client._flush()
        client._pump = asyncio.ensure_future(client._read_loop())
        return client

    async def _flush(self) -> None:
        data = self.conn.data_to_send()
        if data:
            self.writer.write(data)
            await self.writer.drain()

    async def _read_loop(self) -> None:
        try:
            while True:
                data = await self.reader.read(65536)
                if not data:
                    break
                async with self._lock:
                    events = self.conn.receive_data(data)
                    for event in events:
                        stream_id = getattr(event, "stream_id", None)
                        stream = self.streams.get(stream_id) if stream_id else None
                        if isinstance(event, h2.events.DataReceived):
                            if self.holding:
                                self._unacked[event.stream_id] = (
                                    self._unacked.get(event.stream_id, 0)
                                    + event.flow_controlled_length
                                )
                            else:
                                self.conn.acknowledge_received_data(
                                    event.flow_controlled_length, event.stream_id
                                )
                        if stream is None:
                            continue
                        if isinstance(event, h2.events.StreamEnded):
                            stream.ended_at = time.monotonic()
                        if isinstance(event, h2.events.StreamReset):
                            stream.reset_code = event.error_code
                            stream.reset_seen.set()
                        stream.events.put_nowait(event)
                    await self._flush()
        except (ConnectionError, ssl.SSLError):
            pass
        finally:
            self.closed.set()
            for stream in self.streams.values():
                stream.events.put_nowait(None)  # the connection is gone
                stream.reset_seen.set()

    async def request(
        self, path: str, headers: dict[str, str], *, body: bytes = b"", end: bool = False
    ) -> H2Stream:
        """Open a POST stream; `end=False` keeps the upload open (full duplex)."""
        async with self._lock:
            stream_id = self.conn.get_next_available_stream_id()
            stream = self.streams[stream_id] = H2Stream(stream_id, self)
            authority = headers.pop(":authority")
            fields = [
                (":method", "POST"),
                (":path", path),
                (":scheme", "https"),
                (":authority", authority),
                *headers.items(),
            ]
            self.conn.send_headers(stream_id, fields, end_stream=end and not body)
            await self._flush()
        if body:
            await self.send_data(stream_id, body, end=end)
        return stream

    async def send_data(self, stream_id: int, data: bytes, *, end: bool = False) -> None:
        """Send in window-sized frames. Data for a stream the server has already ended goes
        nowhere, as in any client: a write racing the server's END_STREAM is not an error."""
        while True:
            async with self._lock:
                if self._closed_stream(stream_id):
                    return
                window = self.conn.local_flow_control_window(stream_id)
                size = min(len(data), window, self.conn.max_outbound_frame_size)
                if size or (not data and end):
                    self.conn.send_data(
                        stream_id, data[:size], end_stream=end and size == len(data)
                    )
                    data = data[size:]
                    await self._flush()
                if not data:
                    return
            await asyncio.sleep(0.005)  # wait for WINDOW_UPDATE

    def _closed_stream(self, stream_id: int) -> bool:
        """Ended both ways (h2 forgets a closed stream some time after it closes)."""
        stream = self.conn.streams.get(stream_id)
        return stream is None or stream.closed

    async def release(self) -> None:
        """Stop holding: acknowledge what came meanwhile (the sender's windows open again)."""
        async with self._lock:
            self.holding = False
            unacked, self._unacked = self._unacked, {}
            for stream_id, size in unacked.items():
                with contextlib.suppress(Exception):  # a stream closed meanwhile
                    self.conn.acknowledge_received_data(size, stream_id)
            await self._flush()

    async def reset(self, stream_id: int) -> None:
        async with self._lock:
            with contextlib.suppress(Exception):
                self.conn.reset_stream(stream_id, h2.errors.ErrorCodes.CANCEL)
                await self._flush()

    async def aclose(self) -> None:
        with contextlib.suppress(Exception):
            async with self._lock:
                self.conn.close_connection()
                await self._flush()
        if self._pump is not None:
            self._pump.cancel()
        self.writer.close()
        with contextlib.suppress(Exception):
            await self.writer.wait_closed()
