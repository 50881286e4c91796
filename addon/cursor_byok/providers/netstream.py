"""An asyncio-native network backend for httpcore: the socket layer under our provider streams.

Why: httpx reads the provider's response through httpcore's default backend, anyio. On asyncio
every anyio read re-registers the socket with the selector (resume_reading / pause_reading,
two epoll_ctl calls) and opens a cancel scope for the read timeout; per provider delta that was
most of the HTTP layer's cost (bench/bench_provider_stream.py). This backend keeps one
`asyncio.Protocol` per connection that reads continuously into a buffer (paused only above a
high-water mark, so memory stays bounded) and waits for data on a plain future with one timer.

Everything above the socket stays httpx/httpcore: connection pool and keep-alive, HTTP/1.1
parsing (h11), TLS settings (the `ssl.SSLContext` httpx builds is the one `start_tls` uses),
timeouts as httpcore passes them, and httpcore's exception types (ConnectError, ReadTimeout,
…), which httpx maps to its own as before. `install(client)` swaps the backend into an
`httpx.AsyncClient`'s pool for direct connections; anything it does not recognise (a proxy,
a test transport, another httpx version) keeps httpx's default.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import socket
import ssl
from collections.abc import Awaitable
from collections.abc import Callable
from collections.abc import Iterable
from typing import Any
from typing import cast

import httpcore
import httpx

log = logging.getLogger(__name__)

# Read-ahead bound per connection: reading pauses above HIGH and resumes below LOW.
HIGH_WATER = 512 * 1024
LOW_WATER = 128 * 1024
# httpcore's happy-eyeballs default in its anyio backend is 250 ms; asyncio's is off.
HAPPY_EYEBALLS_DELAY = 0.25


class _StreamProtocol(asyncio.Protocol):
    """Buffers what the transport delivers; one reader waits on `_waiter` at a time."""

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


def _expire(waiter: asyncio.Future[None], error: type[Exception]) -> None:
    if not waiter.done():
        waiter.set_exception(error("timed out"))


class AsyncioStream(httpcore.AsyncNetworkStream):
    def __init__(self, transport: asyncio.Transport, protocol: _StreamProtocol) -> None:
        self._transport = transport
        self._protocol = protocol
        self._loop = asyncio.get_running_loop()

    async def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        p = self._protocol
        if not p.buffer:
            if p.eof:
                return self._at_eof()
            if p.waiter is not None:
                raise httpcore.ReadError("concurrent read on one connection")
            p.waiter = waiter = self._loop.create_future()
            timer = (
                None
                if timeout is None
                else self._loop.call_later(timeout, _expire, waiter, httpcore.ReadTimeout)
            )
            try:
                await waiter
            finally:
                p.waiter = None
                if timer is not None:
                    timer.cancel()
            if not p.buffer:
                return self._at_eof()
        return p.take(max_bytes)

    def _at_eof(self) -> bytes:
        error = self._protocol.error
        if error is not None:
            raise httpcore.ReadError(str(error) or type(error).__name__) from error
        return b""

    async def write(self, buffer: bytes, timeout: float | None = None) -> None:
        if not buffer:
            return
        p = self._protocol
        if self._transport.is_closing():
            error = p.error
            raise httpcore.WriteError(str(error) if error else "connection closed")
        self._transport.write(buffer)
        if not p.write_paused:
            return
        p.drain_waiter = waiter = self._loop.create_future()
        timer = (
            None
            if timeout is None
            else self._loop.call_later(timeout, _expire, waiter, httpcore.WriteTimeout)
        )
        try:
            await waiter
        finally:
            if timer is not None:
                timer.cancel()
        if p.error is not None or self._transport.is_closing():
            raise httpcore.WriteError(str(p.error) if p.error else "connection closed")

    async def aclose(self) -> None:
        self._transport.close()

    async def start_tls(
        self,
        ssl_context: ssl.SSLContext,
        server_hostname: str | None = None,
        timeout: float | None = None,
    ) -> httpcore.AsyncNetworkStream:
        try:
            async with asyncio.timeout(timeout):
                transport = await self._loop.start_tls(
                    self._transport,
                    self._protocol,
                    ssl_context,
                    server_hostname=server_hostname,
                    ssl_handshake_timeout=timeout,
                )
        except TimeoutError as exc:
            self._transport.close()
            raise httpcore.ConnectTimeout(str(exc) or "TLS handshake timed out") from exc
        except (OSError, EOFError) as exc:  # ssl.SSLError is an OSError
            self._transport.close()
            raise httpcore.ConnectError(str(exc) or type(exc).__name__) from exc
        if transport is None:  # pragma: no cover - only for protocols without TLS support
            raise httpcore.ConnectError("TLS upgrade failed")
        self._protocol.transport = cast(asyncio.Transport, transport)
        return AsyncioStream(self._protocol.transport, self._protocol)

    def get_extra_info(self, info: str) -> Any:
        if info == "ssl_object":
            return self._transport.get_extra_info("ssl_object")
        if info == "client_addr":
            return self._transport.get_extra_info("sockname")
        if info == "server_addr":
            return self._transport.get_extra_info("peername")
        if info == "socket":
            return self._transport.get_extra_info("socket")
        if info == "is_readable":
            # an idle keep-alive connection that has data or EOF waiting is unusable
            p = self._protocol
            return bool(p.buffer) or p.eof or self._transport.is_closing()
        return None


Attempt = Callable[[int, Any], Awaitable[socket.socket]]


async def open_socket(
    host: str, port: int, *, local_address: str | None = None, delay: float = HAPPY_EYEBALLS_DELAY
) -> socket.socket:
    """A connected non-blocking TCP socket to `host`, trying its addresses happy-eyeballs
    style (RFC 8305) as httpcore's anyio backend does.

    Not `loop.create_connection(happy_eyeballs_delay=…)`: its staggered race asserts under an
    eager task factory on Python < 3.12.7, and mitmproxy runs its loop with one."""
    loop = asyncio.get_running_loop()
    infos = await loop.getaddrinfo(host, port, type=socket.SOCK_STREAM, proto=socket.IPPROTO_TCP)
    if not infos:
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

    return await race(interleave([(i[0], i[4]) for i in infos]), attempt, delay)


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


class AsyncioBackend(httpcore.AsyncNetworkBackend):
    async def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[Any] | None = None,
    ) -> httpcore.AsyncNetworkStream:
        loop = asyncio.get_running_loop()
        try:
            async with asyncio.timeout(timeout):
                sock = await open_socket(host, port, local_address=local_address)
                try:
                    for option in socket_options or ():
                        sock.setsockopt(*option)
                    transport, protocol = await loop.create_connection(_StreamProtocol, sock=sock)
                except BaseException:
                    sock.close()
                    raise
        except TimeoutError as exc:
            raise httpcore.ConnectTimeout(str(exc) or "connect timed out") from exc
        except OSError as exc:
            raise httpcore.ConnectError(str(exc) or type(exc).__name__) from exc
        return AsyncioStream(cast(asyncio.Transport, transport), protocol)

    async def connect_unix_socket(
        self,
        path: str,
        timeout: float | None = None,
        socket_options: Iterable[Any] | None = None,
    ) -> httpcore.AsyncNetworkStream:
        loop = asyncio.get_running_loop()
        try:
            async with asyncio.timeout(timeout):
                transport, protocol = await loop.create_unix_connection(_StreamProtocol, path)
        except TimeoutError as exc:
            raise httpcore.ConnectTimeout(str(exc) or "connect timed out") from exc
        except OSError as exc:
            raise httpcore.ConnectError(str(exc) or type(exc).__name__) from exc
        return AsyncioStream(cast(asyncio.Transport, transport), protocol)

    async def sleep(self, seconds: float) -> None:
        await asyncio.sleep(seconds)


def install(client: httpx.AsyncClient) -> bool:
    """Use `AsyncioBackend` for `client`'s direct connections; True if it was installed.

    httpx has no public knob for the backend, so this reaches one private attribute of the
    locked httpx version (the transport's httpcore pool) and checks its type first: with a
    proxy, a custom transport or an unknown layout the client is left as httpx made it.
    """
    transport = getattr(client, "_transport", None)
    if type(transport) is not httpx.AsyncHTTPTransport:
        return False
    pool = getattr(transport, "_pool", None)
    if type(pool) is not httpcore.AsyncConnectionPool:
        return False  # a proxy pool (HTTP or SOCKS): keep anyio
    if not hasattr(pool, "_network_backend") or pool.connections:
        return False
    pool._network_backend = AsyncioBackend()
    return True


__all__ = ["AsyncioBackend", "AsyncioStream", "install"]
