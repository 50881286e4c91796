"""The asyncio socket layer under httpx (netstream.py): same HTTP behaviour, errors and bounds."""

from __future__ import annotations

import asyncio
import contextlib
import ssl
from collections.abc import AsyncIterator
from collections.abc import Awaitable
from collections.abc import Callable
from pathlib import Path

import httpx
import pytest
from fakes.certs import self_signed

from cursor_byok.providers import ProviderError
from cursor_byok.providers import netstream
from cursor_byok.providers.http import HttpClient

Handler = Callable[[asyncio.StreamReader, asyncio.StreamWriter], Awaitable[None]]
HEAD = b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n"


def chunk(data: bytes) -> bytes:
    return b"%x\r\n%s\r\n" % (len(data), data)


async def read_request(reader: asyncio.StreamReader) -> bool:
    """Consume one request (head and content-length body); False at EOF."""
    length = 0
    line = await reader.readline()
    if not line:
        return False
    while (raw := await reader.readline()) not in (b"\r\n", b""):
        name, _, value = raw.decode("latin-1").partition(":")
        if name.strip().lower() == "content-length":
            length = int(value)
    await reader.readexactly(length)
    return True


class Server:
    """A loopback HTTP/1.1 server running `handler` per connection; counts connections."""

    def __init__(self, handler: Handler, ssl_context: ssl.SSLContext | None = None) -> None:
        self.handler = handler
        self.ssl_context = ssl_context
        self.connections = 0
        self.port = 0
        self._server: asyncio.Server | None = None
        self._tasks: set[asyncio.Task[None]] = set()

    async def _run(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.connections += 1
        task = asyncio.current_task()
        assert task is not None
        self._tasks.add(task)
        try:
            await self.handler(reader, writer)
        except (ConnectionError, asyncio.IncompleteReadError, ssl.SSLError):
            pass
        finally:
            self._tasks.discard(task)
            writer.close()

    async def __aenter__(self) -> Server:
        self._server = await asyncio.start_server(self._run, "127.0.0.1", 0, ssl=self.ssl_context)
        self.port = self._server.sockets[0].getsockname()[1]
        return self

    async def __aexit__(self, *exc: object) -> None:
        assert self._server is not None
        self._server.close()
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)


def client(read_timeout: float = 10.0) -> HttpClient:
    return HttpClient(provider="p", connect_timeout=5.0, read_timeout=read_timeout)


async def body_of(http: HttpClient, url: str) -> bytes:
    async with http.post_stream(url, {}, {"x": 1}) as response:
        assert response.status == 200
        return b"".join([c async for c in response.iter_bytes()])


async def test_the_provider_client_uses_the_asyncio_backend_with_the_locked_httpx() -> None:
    http = client()
    try:
        # if an httpx upgrade moves the pool, this fails instead of silently losing the win
        assert http.native_io
    finally:
        await http.aclose()


async def test_the_environment_can_turn_it_off(monkeypatch) -> None:
    monkeypatch.setenv("CURSOR_BYOK_NATIVE_IO", "0")
    http = client()
    try:
        assert not http.native_io
    finally:
        await http.aclose()


async def test_install_leaves_proxies_and_custom_transports_alone() -> None:
    proxied = httpx.AsyncClient(proxy="http://127.0.0.1:9", trust_env=False)
    mocked = httpx.AsyncClient(transport=httpx.MockTransport(lambda r: httpx.Response(200)))
    plain = httpx.AsyncClient(trust_env=False)
    try:
        assert not netstream.install(mocked)
        # the proxy's own pool (a mount) keeps httpx's default backend
        for transport in proxied._mounts.values():
            assert transport is not None
            assert not isinstance(transport._pool._network_backend, netstream.AsyncioBackend)  # type: ignore[attr-defined]
        assert netstream.install(plain)
    finally:
        for c in (proxied, mocked, plain):
            await c.aclose()


async def test_streams_chunks_and_reuses_the_connection() -> None:
    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        while await read_request(reader):
            writer.write(HEAD)
            for i in range(50):
                writer.write(chunk(b"data: %d\n\n" % i))
            writer.write(b"0\r\n\r\n")
            await writer.drain()

    async with Server(handler) as server:
        http = client()
        try:
            url = f"http://127.0.0.1:{server.port}/v1/x"
            first = await body_of(http, url)
            second = await body_of(http, url)
        finally:
            await http.aclose()
    expected = b"".join(b"data: %d\n\n" % i for i in range(50))
    assert first == second == expected
    assert server.connections == 1


async def test_an_idle_connection_closed_by_the_server_is_not_reused() -> None:
    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await read_request(reader)
        writer.write(HEAD + chunk(b"data: a\n\n") + b"0\r\n\r\n")
        await writer.drain()
        # keep-alive was not refused, but the server goes away right after answering

    async with Server(handler) as server:
        http = client()
        try:
            url = f"http://127.0.0.1:{server.port}/v1/x"
            assert await body_of(http, url) == b"data: a\n\n"
            # wait until the client's side has seen the close (no sleeping on a guess)
            pool = http._client._transport._pool  # type: ignore[attr-defined]

            def closed_seen() -> bool:  # dropped by the pool already, or known to be unusable
                conns = pool.connections
                return not conns or conns[0]._connection._network_stream.get_extra_info(
                    "is_readable"
                )

            async with asyncio.timeout(5):
                while not closed_seen():
                    await asyncio.sleep(0.005)
            assert await body_of(http, url) == b"data: a\n\n"
        finally:
            await http.aclose()
    assert server.connections == 2


async def test_read_timeout_is_a_retryable_timeout_error() -> None:
    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await read_request(reader)
        writer.write(HEAD + chunk(b"data: a\n\n"))
        await writer.drain()
        await asyncio.Event().wait()  # then silence

    async with Server(handler) as server:
        http = client(read_timeout=0.2)
        got: list[bytes] = []
        try:
            with pytest.raises(ProviderError) as caught:
                async with http.post_stream(f"http://127.0.0.1:{server.port}/", {}, {}) as r:
                    async for piece in r.iter_bytes():
                        got.append(piece)
        finally:
            await http.aclose()
    assert got == [b"data: a\n\n"]
    assert caught.value.kind == "timeout" and caught.value.retryable
    assert "read" in caught.value.message


async def test_connection_cut_mid_body_is_a_network_error() -> None:
    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await read_request(reader)
        writer.write(HEAD + chunk(b"data: a\n\n"))
        await writer.drain()
        writer.transport.abort()

    async with Server(handler) as server:
        http = client()
        try:
            with pytest.raises(ProviderError) as caught:
                await body_of(http, f"http://127.0.0.1:{server.port}/")
        finally:
            await http.aclose()
    assert caught.value.kind == "network" and caught.value.retryable


async def test_connection_refused_is_a_network_error() -> None:
    probe = await asyncio.start_server(lambda r, w: None, "127.0.0.1", 0)
    port = probe.sockets[0].getsockname()[1]
    probe.close()
    await probe.wait_closed()
    http = client()
    try:
        with pytest.raises(ProviderError) as caught:
            await body_of(http, f"http://127.0.0.1:{port}/")
    finally:
        await http.aclose()
    assert caught.value.kind == "network" and caught.value.retryable


@contextlib.asynccontextmanager
async def tls_server(tmp_path: Path) -> AsyncIterator[tuple[Server, ssl.SSLContext]]:
    cert, key = self_signed("127.0.0.1")
    (tmp_path / "cert.pem").write_bytes(cert)
    (tmp_path / "key.pem").write_bytes(key)
    server_ctx = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    server_ctx.load_cert_chain(tmp_path / "cert.pem", tmp_path / "key.pem")
    trusting = ssl.create_default_context(cafile=str(tmp_path / "cert.pem"))

    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        while await read_request(reader):
            writer.write(HEAD + chunk(b"data: secret\n\n") + b"0\r\n\r\n")
            await writer.drain()

    async with Server(handler, server_ctx) as server:
        yield server, trusting


async def test_tls_certificates_are_still_verified(tmp_path: Path) -> None:
    async with tls_server(tmp_path) as (server, _):
        http = client()
        try:
            with pytest.raises(ProviderError) as caught:
                await body_of(http, f"https://127.0.0.1:{server.port}/")
        finally:
            await http.aclose()
    assert caught.value.kind == "network"
    assert "CERTIFICATE_VERIFY_FAILED" in caught.value.message


async def test_tls_stream_through_the_asyncio_backend(tmp_path: Path) -> None:
    async with tls_server(tmp_path) as (server, trusting):
        raw = httpx.AsyncClient(verify=trusting, trust_env=False)
        assert netstream.install(raw)
        try:
            for _ in range(2):
                async with raw.stream("POST", f"https://127.0.0.1:{server.port}/", json={}) as r:
                    assert r.status_code == 200
                    assert b"".join([c async for c in r.aiter_bytes()]) == b"data: secret\n\n"
            stream = raw._transport._pool.connections[0]._connection._network_stream  # type: ignore[attr-defined]
            assert isinstance(stream, netstream.AsyncioStream)
            assert stream.get_extra_info("ssl_object") is not None
        finally:
            await raw.aclose()
    assert server.connections == 1


class _FakeTransport(asyncio.Transport):
    def __init__(self) -> None:
        super().__init__()
        self.reading = True

    def pause_reading(self) -> None:
        self.reading = False

    def resume_reading(self) -> None:
        self.reading = True

    def is_closing(self) -> bool:
        return False


def test_read_ahead_is_bounded_by_the_high_water_mark() -> None:
    protocol = netstream._StreamProtocol()
    transport = _FakeTransport()
    protocol.connection_made(transport)
    piece = b"x" * 64 * 1024
    fed = 0
    while transport.reading:
        protocol.data_received(piece)
        fed += len(piece)
    assert netstream.HIGH_WATER < fed <= netstream.HIGH_WATER + len(piece)
    taken = 0
    while not transport.reading:
        taken += len(protocol.take(64 * 1024))
    assert protocol.size < netstream.LOW_WATER
    assert taken + protocol.size == fed
    # a read larger than one buffered piece joins them, in order
    protocol.data_received(b"ab")
    protocol.data_received(b"cd")
    rest = protocol.take(10**9)
    assert rest.endswith(b"abcd") and protocol.size == 0 and protocol.buffer == []


def test_streams_on_uvloop_too() -> None:
    """Not a dependency; run with `uv run --with uvloop pytest` to check the backend there."""
    uvloop = pytest.importorskip("uvloop")
    uvloop.run(test_streams_chunks_and_reuses_the_connection())


async def test_streams_under_an_eager_task_factory_as_in_mitmproxy() -> None:
    """mitmproxy runs its loop with asyncio.eager_task_factory; asyncio's own happy-eyeballs
    race asserts under it (Python < 3.12.7), which the addon's turns hit end to end."""
    loop = asyncio.get_running_loop()
    previous = loop.get_task_factory()
    loop.set_task_factory(asyncio.eager_task_factory)  # type: ignore[arg-type]
    try:
        await test_streams_chunks_and_reuses_the_connection()
    finally:
        loop.set_task_factory(previous)


async def test_connects_by_host_name() -> None:
    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await read_request(reader)
        writer.write(HEAD + chunk(b"data: named\n\n") + b"0\r\n\r\n")
        await writer.drain()

    async with Server(handler) as server:
        http = client()
        try:
            assert await body_of(http, f"http://localhost:{server.port}/") == b"data: named\n\n"
        finally:
            await http.aclose()


class _Sock:
    def __init__(self, name: str) -> None:
        self.name = name
        self.closed = False

    def close(self) -> None:
        self.closed = True


def _attempts(plan: dict[str, str], log: list[str], socks: dict[str, _Sock]):
    """An attempt function: address → "ok", "fail" or "hang" (until cancelled)."""

    async def attempt(family: int, address: str) -> _Sock:
        log.append(address)
        how = plan[address]
        if how == "fail":
            raise ConnectionRefusedError(f"refused {address}")
        if how == "hang":
            await asyncio.Event().wait()
        await asyncio.sleep(0)
        socks[address] = _Sock(address)
        return socks[address]

    return attempt


@pytest.mark.parametrize("eager", [False, True])
async def test_race_a_hanging_first_address_loses_to_the_next_after_the_delay(eager) -> None:
    loop = asyncio.get_running_loop()
    previous = loop.get_task_factory()
    if eager:
        loop.set_task_factory(asyncio.eager_task_factory)  # type: ignore[arg-type]
    try:
        log: list[str] = []
        socks: dict[str, _Sock] = {}
        attempt = _attempts({"v6": "hang", "v4": "ok"}, log, socks)
        got = await netstream.race([(10, "v6"), (2, "v4")], attempt, 0.01)  # type: ignore[arg-type]
    finally:
        loop.set_task_factory(previous)
    assert got is socks["v4"] and log == ["v6", "v4"] and not got.closed  # type: ignore[attr-defined]


async def test_race_a_refused_address_starts_the_next_at_once() -> None:
    log: list[str] = []
    socks: dict[str, _Sock] = {}
    attempt = _attempts({"a": "fail", "b": "ok"}, log, socks)
    # a one-hour delay: finishing at all shows the failure did not wait for it
    async with asyncio.timeout(5):
        got = await netstream.race([(2, "a"), (2, "b")], attempt, 3600)  # type: ignore[arg-type]
    assert got is socks["b"]


async def test_race_all_failing_reports_every_error() -> None:
    attempt = _attempts({"a": "fail", "b": "fail"}, [], {})
    with pytest.raises(OSError, match="refused a; refused b"):
        await netstream.race([(2, "a"), (2, "b")], attempt, 3600)  # type: ignore[arg-type]


def test_interleave_alternates_families_from_the_first() -> None:
    addrs = [(10, "6a"), (10, "6b"), (10, "6c"), (2, "4a")]
    assert netstream.interleave(addrs) == [(10, "6a"), (2, "4a"), (10, "6b"), (10, "6c")]
