"""mitmproxy's hop to the loopback server, in memory (proxy/loopback/memory_hop.py): a connection
to one of the hop's ports behaves as a TCP stream would (bytes in order, EOF, half-close, reset,
back-pressure) without a socket, and every other connection still goes over TCP."""

from __future__ import annotations

import asyncio
import socket

import pytest

from cursor_byok.proxy.loopback.memory_hop import PIECE
from cursor_byok.proxy.loopback.memory_hop import MemoryHop

MiB = 1024 * 1024


def unused_port() -> int:
    """A port nothing listens on (bound, then closed): a TCP connect to it is refused."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class Served:
    """The server side: each connection's reader and writer, as `asyncio.start_server` gives."""

    def __init__(self) -> None:
        self.connections: asyncio.Queue[tuple[asyncio.StreamReader, asyncio.StreamWriter]] = (
            asyncio.Queue()
        )

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await self.connections.put((reader, writer))

    def accept(self) -> asyncio.StreamReaderProtocol:
        return asyncio.StreamReaderProtocol(asyncio.StreamReader(), self._serve)


async def _hop(port: int) -> tuple[MemoryHop, Served]:
    served = Served()
    hop = MemoryHop(served.accept, [port])
    assert hop.install(asyncio.get_running_loop())
    return hop, served


async def test_bytes_both_ways_and_eof_without_a_socket() -> None:
    port = unused_port()  # over TCP this connect would be refused
    hop, served = await _hop(port)
    try:
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        their_reader, their_writer = await served.connections.get()
        assert writer.get_extra_info("peername") == ("127.0.0.1", port)
        writer.write(b"GET / HTTP/1.1\r\n\r\n")
        assert await their_reader.readexactly(18) == b"GET / HTTP/1.1\r\n\r\n"
        their_writer.writelines([b"one ", b"two"])
        assert await reader.readexactly(7) == b"one two"
        writer.write_eof()  # half-close: the server reads EOF and can still answer
        assert await their_reader.read() == b""
        their_writer.write(b"after")
        their_writer.close()
        assert await reader.read() == b"after"  # what was sent comes before the EOF
        await their_writer.wait_closed()
        writer.close()
        await writer.wait_closed()
        assert hop.connections == 1
    finally:
        hop.uninstall()


async def test_other_ports_still_go_over_tcp() -> None:
    hop, _served = await _hop(unused_port())
    got: list[bytes] = []

    async def echo(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        got.append(await reader.readexactly(2))
        writer.close()

    server = await asyncio.start_server(echo, "127.0.0.1", 0)
    try:
        _reader, writer = await asyncio.open_connection(
            "127.0.0.1", server.sockets[0].getsockname()[1]
        )
        assert writer.get_extra_info("socket") is not None  # a real socket
        writer.write(b"hi")
        await writer.drain()
        await _reader.read()
        writer.close()
        assert got == [b"hi"] and hop.connections == 0
    finally:
        hop.uninstall()
        server.close()


async def test_uninstall_puts_tcp_back() -> None:
    port = unused_port()
    hop, _served = await _hop(port)
    hop.uninstall()
    with pytest.raises(OSError):
        await asyncio.open_connection("127.0.0.1", port)


async def test_a_reader_that_does_not_read_makes_the_writer_wait() -> None:
    """Back-pressure: the server streams 4 MiB at a client that reads nothing. Its drain waits,
    the client's buffer holds a bounded share, the rest stays where it was written (not copied);
    once the client reads, everything comes, in order."""
    port = unused_port()
    hop, served = await _hop(port)
    try:
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        _their_reader, their_writer = await served.connections.get()
        their_writer.transport.set_write_buffer_limits(high=0, low=0)
        payload = bytes(range(256)) * (4 * MiB // 256)
        their_writer.write(payload)
        drained = asyncio.ensure_future(their_writer.drain())
        await asyncio.sleep(0)
        assert not drained.done()
        assert their_writer.transport.get_write_buffer_size() > 3 * MiB
        assert len(reader._buffer) <= 2 * 64 * 1024 + PIECE  # type: ignore[attr-defined]
        assert await reader.readexactly(len(payload)) == payload
        await asyncio.wait_for(drained, 5)
        assert their_writer.transport.get_write_buffer_size() == 0
        writer.close()
    finally:
        hop.uninstall()


async def test_abort_is_a_reset_for_the_peer() -> None:
    port = unused_port()
    hop, served = await _hop(port)
    try:
        reader, _writer = await asyncio.open_connection("127.0.0.1", port)
        _their_reader, their_writer = await served.connections.get()
        their_writer.transport.abort()
        with pytest.raises(ConnectionResetError):
            await reader.read(1)
    finally:
        hop.uninstall()


async def test_the_connect_yields_once_as_a_socket_connect_does() -> None:
    """mitmproxy runs its tasks eagerly and records the task that opens a connection after
    creating it: a connect that never yielded would finish first (its record then overwrote
    the open connection's, and mitmproxy crashed on its first write)."""
    port = unused_port()
    hop, _served = await _hop(port)
    loop = asyncio.get_running_loop()
    loop.set_task_factory(asyncio.eager_task_factory)
    try:
        task = asyncio.create_task(asyncio.open_connection("127.0.0.1", port))
        assert not task.done()
        _reader, writer = await task
        writer.close()
    finally:
        loop.set_task_factory(None)
        hop.uninstall()


def test_a_loop_that_refuses_the_override_keeps_tcp() -> None:
    class Sealed:
        __slots__ = ()

        async def create_connection(self, *args, **kwargs):
            raise AssertionError("not called")

    hop = MemoryHop(lambda: asyncio.Protocol(), [1])
    assert hop.install(Sealed()) is False  # type: ignore[arg-type]
    hop.uninstall()


async def test_a_long_write_is_held_as_a_view_not_copied() -> None:
    """A long frame (the stream reads one from the data dir into a bytearray) stays where it
    was written while the reader takes it piece by piece, as a socket transport keeps it: a
    copy had it in memory twice (bench_memory.py's 8 MiB case: +8 MiB at the peak)."""
    port = unused_port()
    hop, served = await _hop(port)
    try:
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        _their_reader, their_writer = await served.connections.get()
        frame = bytearray(b"x" * (2 * MiB))
        their_writer.write(frame)
        held = writer.transport._held  # type: ignore[attr-defined]
        assert held and all(isinstance(piece, memoryview) and piece.obj is frame for piece in held)
        assert await reader.readexactly(len(frame)) == frame
        writer.close()
    finally:
        hop.uninstall()
