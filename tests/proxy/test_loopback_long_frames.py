"""A stream writes a long frame and waits until its socket took all of it before reading the
next: what is left of a frame in the transport keeps the whole frame alive, so two long blob
SETs made from the data dir would otherwise be in memory at once (issue 38)."""

from __future__ import annotations

import asyncio
import socket

from fakes.h11_response import chunked_response

from cursor_byok.proxy.loopback.server import WRITE_HIGH_WATER
from cursor_byok.proxy.loopback.server import _write_chunk
from cursor_byok.proxy.write_pump import PumpState
from cursor_byok.proxy.write_pump import WritePump


async def _long_chunk_waits_for_the_socket() -> tuple[bool, int, int]:
    ours, theirs = socket.socketpair()
    ours.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 64 * 1024)
    theirs.setblocking(False)
    _reader, writer = await asyncio.open_connection(sock=ours)
    writer.transport.set_write_buffer_limits(high=WRITE_HIGH_WATER, low=0)
    chunk = b"x" * (4 * 1024 * 1024)
    _write_chunk(writer, chunked_response(), chunk)
    left = writer.transport.get_write_buffer_size()
    drained = asyncio.ensure_future(writer.drain())
    await asyncio.sleep(0)
    waited = not drained.done()  # the socket has not taken it all: the stream waits
    loop = asyncio.get_running_loop()
    got = 0
    while got < len(chunk):  # the chunk, its size line and its CRLF: all of it comes
        got += len(await loop.sock_recv(theirs, 1 << 20))
    await drained
    writer.close()
    theirs.close()
    return waited, left, writer.transport.get_write_buffer_size()


def test_a_long_chunk_makes_the_stream_wait_until_it_is_all_sent() -> None:
    waited, left, after = asyncio.run(_long_chunk_waits_for_the_socket())
    assert left > 0 and waited and after == 0


async def _pump(read_bytes: int | None, full_after: int) -> tuple[list[bytes], int, PumpState]:
    frames = [b"%d" % i * 20 for i in range(5)]
    written: list[bytes] = []
    reads = 0

    def read() -> tuple[list[bytes], bool]:
        nonlocal reads
        reads += 1
        return ([frames.pop(0)] if frames else []), False  # one frame per read: over the bound

    pump = WritePump(
        read,
        written.append,
        full=lambda: len(written) >= full_after,
        drain=None,
        read_bytes=read_bytes,
    )
    pump()
    return written, reads, pump.state


def test_the_pump_reads_again_while_the_transport_takes_more() -> None:
    written, reads, state = asyncio.run(_pump(read_bytes=10, full_after=99))
    assert len(written) == 5 and reads == 6 and state is PumpState.WRITING
    written, reads, state = asyncio.run(_pump(read_bytes=10, full_after=2))
    assert len(written) == 2 and state is PumpState.BLOCKED  # the next waits for the drain
    written, reads, state = asyncio.run(_pump(read_bytes=None, full_after=99))
    assert len(written) == 1 and reads == 1  # unbounded reads: one read has it all
