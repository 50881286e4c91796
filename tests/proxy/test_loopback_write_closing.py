"""The loopback writes nothing to a closing transport: Python 3.12.1's `writelines` would
register a writer on the dead socket, a stale selector entry that breaks the next connection
given the same fd number ("Unhandled error in task": selector.modify, FileNotFoundError)."""

from __future__ import annotations

import asyncio
import socket

from fakes.h11_response import chunked_response

from cursor_byok.proxy.loopback.server import _write_chunk


async def _chunk_after_the_peer_left() -> tuple[bool, bool]:
    """Write a chunk once the peer closed and the transport started closing; whether the fd is
    still registered with the selector (a writer) before and after the socket is gone."""
    ours, theirs = socket.socketpair()
    _reader, writer = await asyncio.open_connection(sock=ours)
    fd = ours.fileno()
    theirs.close()
    writer.close()  # as the loopback does when its client went away
    assert writer.transport.is_closing()
    _write_chunk(writer, chunked_response(), b"x" * 65536)
    loop = asyncio.get_running_loop()
    selector = loop._selector  # type: ignore[attr-defined]
    registered = fd in selector.get_map()
    await asyncio.sleep(0)
    await asyncio.sleep(0)
    return registered, fd in selector.get_map()


def test_a_closing_transport_gets_no_chunk_and_no_writer() -> None:
    registered, after = asyncio.run(_chunk_after_the_peer_left())
    assert not registered and not after
