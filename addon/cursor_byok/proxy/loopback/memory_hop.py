"""mitmproxy's hop to the loopback server, made in memory instead of over loopback TCP.

Both ends of the hop live in this process, on this event loop: mitmproxy's upstream connection
and our loopback server (server.py says why the hop exists). Over TCP every frame we stream costs
a `send`, a wake-up in the selector and a `recv`, and every stream a connect and an accept. So
once the loopback server runs, the loop's `create_connection` (which `asyncio.open_connection`,
and so mitmproxy, calls) makes a connection to one of its ports as a pair of in-memory
transports instead: what one end writes is handed to the other's protocol as it is written, and
each side sees the same stream protocol it would on a socket (EOF, half-close, reset, and
back-pressure: a reader that pauses makes the writer's `drain` wait). Every other connection,
and every connection on a loop that will not take the override, goes over TCP as before; the
listeners stay open for them.
"""

from __future__ import annotations

import asyncio
import logging
from collections import deque
from collections.abc import Callable
from collections.abc import Collection
from typing import Any

log = logging.getLogger(__name__)

HOST = "127.0.0.1"
PIECE = 64 * 1024  # the most one `data_received` hands over (a socket's read is 64 KiB too)


class MemoryTransport(asyncio.Transport):
    """One end of an in-memory stream: writes go to the peer's protocol, in order."""

    def __init__(
        self,
        loop: asyncio.AbstractEventLoop,
        protocol: asyncio.BaseProtocol,
        *,
        sockname: tuple[str, int],
        peername: tuple[str, int],
    ) -> None:
        super().__init__({"sockname": sockname, "peername": peername})
        self._loop = loop
        self._protocol = protocol
        self.peer: MemoryTransport | None = None
        self._closing = False  # close() or abort() was called on this end
        self._lost = False  # connection_lost was called on this end's protocol
        self._eof_sent = False  # this end will write nothing more
        self._eof_received = False  # the peer will write nothing more
        self._eof_delivered = False  # and this end's protocol was told
        self._reading_paused = False
        # written to this end and not yet handed to its protocol (it paused, or it came long)
        self._held: deque[bytes | memoryview] = deque()
        self._held_bytes = 0
        self._writing_paused = False  # this end's protocol was told to pause writing
        self._high = 64 * 1024
        self._low = 16 * 1024

    # --- writing --------------------------------------------------------------------------

    def write(self, data: bytes | bytearray | memoryview) -> None:
        if not data or self._closing or self._eof_sent:
            return
        peer = self.peer
        if peer is None or peer._closing:
            return  # the other end is gone: what TCP would drop with a reset
        # Handed over as it is, never copied, as asyncio's socket transports keep what the
        # socket has not taken: a long frame (a bytearray the stream read from the data dir) was
        # in memory twice while it went
        peer._receive(memoryview(data) if isinstance(data, bytearray) else data)
        self._check_pressure()

    def writelines(self, list_of_data: Any) -> None:
        """Small pieces joined (one hand-over: a frame's chunk head, the frame, its CRLF), long
        ones each as it is (never copied)."""
        pieces = list(list_of_data)
        if sum(len(piece) for piece in pieces) <= PIECE:
            self.write(b"".join(pieces))
            return
        for piece in pieces:
            self.write(piece)

    def can_write_eof(self) -> bool:
        return True

    def write_eof(self) -> None:
        if self._eof_sent or self._closing:
            return
        self._eof_sent = True
        peer = self.peer
        if peer is not None:
            self._loop.call_soon(peer._receive_eof)

    def get_write_buffer_size(self) -> int:
        """What this end wrote that its peer has not read (held while the peer is paused)."""
        peer = self.peer
        return peer._held_bytes if peer is not None else 0

    def get_write_buffer_limits(self) -> tuple[int, int]:
        return self._low, self._high

    def set_write_buffer_limits(self, high: int | None = None, low: int | None = None) -> None:
        if high is None:
            high = 64 * 1024 if low is None else 4 * low
        if low is None:
            low = high // 4
        self._high, self._low = high, low
        self._check_pressure()

    def _check_pressure(self) -> None:
        size = self.get_write_buffer_size()
        if not self._writing_paused and size > self._high:
            self._writing_paused = True
            self._protocol.pause_writing()
        elif self._writing_paused and size <= self._low:
            self._writing_paused = False
            self._protocol.resume_writing()

    # --- reading --------------------------------------------------------------------------

    def _receive(self, data: bytes | memoryview) -> None:
        if self._lost:
            return
        if not self._held and not self._reading_paused and len(data) <= PIECE:
            self._protocol.data_received(data)  # type: ignore[attr-defined]
            return
        self._held.append(memoryview(data) if len(data) > PIECE else data)
        self._held_bytes += len(data)
        self._deliver_held()

    def _deliver_held(self) -> None:
        """Hand what is held to the protocol, a piece at a time, until it pauses: a long write
        stays where it was written (views of it), never copied whole into the reader's
        buffer."""
        held = self._held
        while held and not self._reading_paused and not self._lost:
            first = held[0]
            if len(first) > PIECE:
                piece: bytes | memoryview = first[:PIECE]
                held[0] = first[PIECE:]
            else:
                piece = held.popleft()
            self._held_bytes -= len(piece)
            self._protocol.data_received(piece)  # type: ignore[attr-defined]
        if self.peer is not None:
            self.peer._check_pressure()
        if not held and self._eof_received and not self._eof_delivered and not self._lost:
            self._deliver_eof()

    def _receive_eof(self) -> None:
        if self._lost or self._eof_received:
            return
        self._eof_received = True
        if not self._held:  # else EOF comes after what is held
            self._deliver_eof()

    def _deliver_eof(self) -> None:
        self._eof_delivered = True
        keep_open = self._protocol.eof_received()  # type: ignore[attr-defined]
        if not keep_open:
            self.close()

    def is_reading(self) -> bool:
        return not self._reading_paused and not self._closing

    def pause_reading(self) -> None:
        self._reading_paused = True

    def resume_reading(self) -> None:
        """Resume on the next loop pass, as a socket's reader does: a `StreamReader` resumes
        before it sets the waiter that data wakes, so data handed over now would wake nobody."""
        if self._reading_paused:
            self._reading_paused = False
            self._loop.call_soon(self._deliver_held)

    # --- closing --------------------------------------------------------------------------

    def is_closing(self) -> bool:
        return self._closing

    def close(self) -> None:
        """Close this end: the peer reads EOF after what it was sent, then this end is lost."""
        if self._closing:
            return
        if not self._eof_sent:
            self.write_eof()
        self._closing = True
        self._loop.call_soon(self._lose, None)

    def abort(self) -> None:
        """Drop this end at once: the peer sees a reset (as after a TCP RST)."""
        if self._lost:
            return
        self._closing = True
        self._held.clear()
        self._held_bytes = 0
        peer = self.peer
        if peer is not None and not peer._lost:
            peer._closing = True
            peer._held.clear()
            peer._held_bytes = 0
            self._loop.call_soon(peer._lose, ConnectionResetError("connection reset by peer"))
        self._loop.call_soon(self._lose, None)

    def _lose(self, exc: Exception | None) -> None:
        if self._lost:
            return
        self._lost = True
        self._closing = True
        self._protocol.connection_lost(exc)

    def get_protocol(self) -> asyncio.BaseProtocol:
        return self._protocol

    def set_protocol(self, protocol: asyncio.BaseProtocol) -> None:
        self._protocol = protocol


def connect_pair(
    loop: asyncio.AbstractEventLoop,
    client: asyncio.BaseProtocol,
    server: asyncio.BaseProtocol,
    port: int,
    client_port: int,
) -> MemoryTransport:
    """Join `client` and `server` by two in-memory ends; the client's end."""
    client_end = MemoryTransport(loop, client, sockname=(HOST, client_port), peername=(HOST, port))
    server_end = MemoryTransport(loop, server, sockname=(HOST, port), peername=(HOST, client_port))
    client_end.peer, server_end.peer = server_end, client_end
    server.connection_made(server_end)
    client.connection_made(client_end)
    return client_end


class MemoryHop:
    """Connections the loop makes to the loopback server's ports, made in memory.

    `install` overrides `create_connection` on the running loop (an attribute of that one loop
    object: nothing else in the process changes); `uninstall` puts it back."""

    def __init__(self, accept: Callable[[], asyncio.BaseProtocol], ports: Collection[int]) -> None:
        self._accept = accept  # a server-side protocol for a new connection
        self._ports = frozenset(ports)
        self._loop: asyncio.AbstractEventLoop | None = None
        self._next_port = 0
        self.connections = 0  # made in memory so far (tests read it)

    def install(self, loop: asyncio.AbstractEventLoop) -> bool:
        """Route the loop's connections to our ports in memory; False if the loop will not
        take the override (its own `create_connection` then serves them over TCP)."""
        original: Any = loop.create_connection  # overloaded: called with what it was given
        hop = self

        async def create_connection(
            protocol_factory: Callable[[], asyncio.BaseProtocol],
            host: str | None = None,
            port: int | None = None,
            **kwargs: Any,
        ) -> tuple[asyncio.BaseTransport, asyncio.BaseProtocol]:
            if host == HOST and port in hop._ports and not kwargs.get("ssl"):
                # A connect always yields to the loop once, and mitmproxy counts on it: under
                # its eager task factory, the task that opens the connection runs at once, and
                # it must not be done with it before its caller has recorded the task.
                await asyncio.sleep(0)
                return hop._connect(loop, protocol_factory, port)
            return await original(protocol_factory, host, port, **kwargs)

        try:
            loop.create_connection = create_connection  # type: ignore[method-assign,assignment]
        except (AttributeError, TypeError) as exc:
            log.debug("loopback hop stays on TCP: %s", exc)
            return False
        self._loop = loop
        return True

    def uninstall(self) -> None:
        loop, self._loop = self._loop, None
        if loop is not None and "create_connection" in vars(loop):
            del loop.create_connection

    def _connect(
        self,
        loop: asyncio.AbstractEventLoop,
        protocol_factory: Callable[[], asyncio.BaseProtocol],
        port: int,
    ) -> tuple[asyncio.BaseTransport, asyncio.BaseProtocol]:
        """One connection in memory (also one that began just before `uninstall`)."""
        self.connections += 1
        self._next_port = self._next_port % 28000 + 1  # a made-up source port, for the logs
        client = protocol_factory()
        transport = connect_pair(loop, client, self._accept(), port, 32768 + self._next_port)
        return transport, client
