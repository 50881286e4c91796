"""The socket layer under our provider client (h1.py): connect, and read without churn.

Why: asyncio's StreamReader and anyio (httpx's default backend) re-register the socket with the
selector on every read (pause_reading / resume_reading: two epoll_ctl calls) and anyio opens a
cancel scope per read; per provider delta that was most of the transport's cost
(bench/bench_provider_stream.py). `StreamProtocol` reads continuously into a buffer (paused only
above a high-water mark, so memory stays bounded) and wakes one reader through a plain future.
`open_socket` connects happy-eyeballs style (RFC 8305), as httpcore's anyio backend does.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import socket
from collections.abc import Awaitable
from collections.abc import Callable
from typing import Any
from typing import cast

log = logging.getLogger(__name__)

# Read-ahead bound per connection: reading pauses above HIGH and resumes below LOW.
HIGH_WATER = 512 * 1024
LOW_WATER = 128 * 1024
# httpcore's happy-eyeballs default in its anyio backend is 250 ms; asyncio's is off.
HAPPY_EYEBALLS_DELAY = 0.25


class StreamProtocol(asyncio.Protocol):
    """Buffers what the transport delivers; one reader waits on `waiter` at a time."""

    def __init__(self) -> None:
        self.transport: asyncio.Transport | None = None
        self.buffer: list[bytes] = []
        self.size = 0
        self.eof = False
        self.error: BaseException | None = None
        self.paused = False
        self.waiter: asyncio.Future[None] | None = None
        self.drain_waiter: asyncio.Future[None] | None = None
        self.write_paused = False

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        # a cast, not an isinstance check: uvloop's transports do not subclass asyncio's
        self.transport = cast(asyncio.Transport, transport)

    def data_received(self, data: bytes) -> None:
        self.buffer.append(data)
        self.size += len(data)
        if self.size > HIGH_WATER and not self.paused and self.transport is not None:
            self.paused = True
            self.transport.pause_reading()
        self._wake()

    def eof_received(self) -> bool:
        self.eof = True
        self._wake()
        return False  # close the transport (we never half-close)

    def connection_lost(self, exc: Exception | None) -> None:
        self.eof = True
        if exc is not None and self.error is None:
            self.error = exc
        self._wake()
        drain, self.drain_waiter = self.drain_waiter, None
        if drain is not None and not drain.done():
            drain.set_result(None)

    def pause_writing(self) -> None:
        self.write_paused = True

    def resume_writing(self) -> None:
        self.write_paused = False
        drain, self.drain_waiter = self.drain_waiter, None
        if drain is not None and not drain.done():
            drain.set_result(None)

    def _wake(self) -> None:
        waiter, self.waiter = self.waiter, None
        if waiter is not None and not waiter.done():
            waiter.set_result(None)

    def take(self, max_bytes: int) -> bytes:
        """Up to `max_bytes` buffered bytes (the buffer must not be empty)."""
        if len(self.buffer) == 1:
            data = self.buffer[0]
            if len(data) <= max_bytes:
                self.buffer.clear()
            else:
                data, rest = data[:max_bytes], data[max_bytes:]
                self.buffer[0] = rest
        else:
            joined = b"".join(self.buffer)
            data, rest = joined[:max_bytes], joined[max_bytes:]
            self.buffer[:] = [rest] if rest else []
        self.size -= len(data)
        if self.paused and self.size < LOW_WATER and self.transport is not None:
            self.paused = False
            self.transport.resume_reading()
        return data


Attempt = Callable[[int, Any], Awaitable[socket.socket]]


async def open_socket(
    host: str, port: int, *, local_address: str | None = None, delay: float = HAPPY_EYEBALLS_DELAY
) -> socket.socket:
    """A connected non-blocking TCP socket to `host`, trying its addresses happy-eyeballs
    style (RFC 8305) as httpcore's anyio backend does.

    Not `loop.create_connection(happy_eyeballs_delay=…)`: its staggered race asserts under an
    eager task factory on Python < 3.12.7, and mitmproxy runs its loop with one."""
    loop = asyncio.get_running_loop()
    literal = _ip_literal(host, port)
    addresses: list[tuple[int, Any]]
    if literal is not None:
        addresses = [(literal[0], literal[4])]  # no resolver thread for an address
    else:
        infos = await loop.getaddrinfo(
            host, port, type=socket.SOCK_STREAM, proto=socket.IPPROTO_TCP
        )
        addresses = [(i[0], i[4]) for i in infos]
    if not addresses:
        raise OSError(f"no address for {host}")

    async def attempt(family: int, sockaddr: Any) -> socket.socket:
        sock = socket.socket(family, socket.SOCK_STREAM)
        try:
            sock.setblocking(False)
            if local_address:
                sock.bind((local_address, 0))
            await loop.sock_connect(sock, sockaddr)
        except BaseException:
            sock.close()
            raise
        return sock

    return await race(interleave(addresses), attempt, delay)


def _ip_literal(host: str, port: int) -> tuple[int, int, int, str, Any] | None:
    """`host` as getaddrinfo would give it back, when it is an IP address and not a name."""
    for family in (socket.AF_INET, socket.AF_INET6):
        try:
            socket.inet_pton(family, host)
        except OSError:
            continue
        sockaddr = (host, port) if family == socket.AF_INET else (host, port, 0, 0)
        return (family, socket.SOCK_STREAM, socket.IPPROTO_TCP, "", sockaddr)
    return None


def interleave(addresses: list[tuple[int, Any]]) -> list[tuple[int, Any]]:
    """Alternate address families, starting with the resolver's first (RFC 8305 §4)."""
    first = addresses[0][0]
    same = [a for a in addresses if a[0] == first]
    other = [a for a in addresses if a[0] != first]
    out: list[tuple[int, Any]] = []
    for pair in itertools.zip_longest(same, other):
        out += [a for a in pair if a is not None]
    return out


async def race(addresses: list[tuple[int, Any]], attempt: Attempt, delay: float) -> socket.socket:
    """Start an attempt per address, the next one when the previous failed or after `delay`;
    the first connected socket wins and every other one is cancelled or closed."""
    todo = list(addresses)
    pending: set[asyncio.Future[socket.socket]] = set()
    errors: list[OSError] = []
    try:
        while todo or pending:
            if todo:
                pending.add(asyncio.ensure_future(attempt(*todo.pop(0))))
            done, pending = await asyncio.wait(
                pending, timeout=delay if todo else None, return_when=asyncio.FIRST_COMPLETED
            )
            connected = [task.result() for task in done if task.exception() is None]
            if connected:
                for extra in connected[1:]:
                    extra.close()
                return connected[0]
            for task in done:
                error = task.exception()
                if not isinstance(error, OSError):
                    raise error  # type: ignore[misc]  # not None: no task connected
                errors.append(error)
    finally:
        for task in pending:
            task.cancel()
        for result in await asyncio.gather(*pending, return_exceptions=True):
            if isinstance(result, socket.socket):  # connected just as it was cancelled
                result.close()
    if len(errors) == 1:
        raise errors[0]
    raise OSError("all connection attempts failed: " + "; ".join(map(str, errors)))


__all__ = ["HIGH_WATER", "LOW_WATER", "StreamProtocol", "interleave", "open_socket", "race"]
