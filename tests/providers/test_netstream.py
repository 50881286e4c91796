"""The provider client's own network path: HTTP/1.1 (h1.py) on our asyncio socket layer
(netstream.py), end to end over loopback sockets: streaming, keep-alive, errors, TLS, bounds."""

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


def answer_each(body: bytes) -> Handler:
    """A handler answering every request on its connection with `body`, chunked."""

    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        while await read_request(reader):
            writer.write(HEAD + chunk(body) + b"0\r\n\r\n")
            await writer.drain()

    return handler


def answer_once(body: bytes) -> Handler:
    """As answer_each, for one request; then the server closes the connection."""

    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await read_request(reader)
        writer.write(HEAD + chunk(body) + b"0\r\n\r\n")
        await writer.drain()

    return handler


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


async def test_direct_connections_use_our_http11_client() -> None:
    http = client()
    try:
        assert http.native_io and http._h1 is not None
    finally:
        await http.aclose()


async def test_the_environment_can_turn_it_off(monkeypatch) -> None:
    monkeypatch.setenv("CURSOR_BYOK_NATIVE_IO", "0")
    http = client()
    try:
        assert not http.native_io and http._h1 is None
    finally:
        await http.aclose()


async def test_proxies_and_custom_transports_keep_httpx() -> None:
    proxied = HttpClient(
        provider="p", connect_timeout=5, read_timeout=5, proxy="http://127.0.0.1:9"
    )
    mocked = HttpClient(
        provider="p",
        connect_timeout=5,
        read_timeout=5,
        transport=httpx.MockTransport(lambda r: httpx.Response(200)),
    )
    try:
        assert not proxied.native_io and not mocked.native_io
    finally:
        for c in (proxied, mocked):
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
    # keep-alive was not refused, but the server goes away right after answering
    async with Server(answer_once(b"data: a\n\n")) as server:
        http = client()
        try:
            url = f"http://127.0.0.1:{server.port}/v1/x"
            assert await body_of(http, url) == b"data: a\n\n"
            # wait until the client's side has seen the close (no sleeping on a guess)
            assert http._h1 is not None
            idle = http._h1._idle[("http", "127.0.0.1", server.port)]
            assert len(idle) == 1

            def closed_seen() -> bool:
                return idle[0].protocol.eof

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

    error = await error_from(handler)
    assert error.kind == "network" and error.retryable


async def error_from(handler: Handler) -> ProviderError:
    """The ProviderError a POST to a server running `handler` ends in."""
    async with Server(handler) as server:
        http = client()
        try:
            with pytest.raises(ProviderError) as caught:
                await body_of(http, f"http://127.0.0.1:{server.port}/")
        finally:
            await http.aclose()
    return caught.value


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

    async with Server(answer_each(b"data: secret\n\n"), server_ctx) as server:
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


async def test_tls_streams_and_keeps_the_connection(tmp_path: Path) -> None:
    async with tls_server(tmp_path) as (server, trusting):
        http = HttpClient(provider="p", connect_timeout=5, read_timeout=5, tls_context=trusting)
        try:
            for _ in range(2):
                assert await body_of(http, f"https://127.0.0.1:{server.port}/") == (
                    b"data: secret\n\n"
                )
            assert http._h1 is not None
            (conn,) = http._h1._idle[("https", "127.0.0.1", server.port)]
            assert conn.transport.get_extra_info("ssl_object") is not None
        finally:
            await http.aclose()
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
    protocol = netstream.StreamProtocol()
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
    """Not a dependency; run with `uv run --with uvloop pytest` to check the client there."""
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
    async with Server(answer_once(b"data: named\n\n")) as server:
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


# --- keep-alive and the end of a response (h1.py over real sockets) ---------------------------


async def test_a_kept_alive_connection_closed_as_we_send_is_retried_once_on_a_fresh_one() -> None:
    """The server reads the second request on the kept-alive connection and closes it without
    a word (its idle timeout racing our send): the request goes again on a new connection."""
    requests = 0

    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        nonlocal requests
        while await read_request(reader):
            requests += 1
            if requests == 2:
                writer.transport.abort()
                return
            writer.write(HEAD + chunk(b"data: %d\n\n" % requests) + b"0\r\n\r\n")
            await writer.drain()

    async with Server(handler) as server:
        http = client()
        try:
            url = f"http://127.0.0.1:{server.port}/"
            assert await body_of(http, url) == b"data: 1\n\n"
            assert await body_of(http, url) == b"data: 3\n\n"
        finally:
            await http.aclose()
    assert server.connections == 2 and requests == 3


async def test_a_fresh_connection_closed_without_an_answer_is_not_retried() -> None:
    requests = 0

    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        nonlocal requests
        await read_request(reader)
        requests += 1
        writer.transport.abort()

    error = await error_from(handler)
    assert requests == 1  # the loop's retry policy decides, not the HTTP layer
    assert error.kind == "network" and error.retryable


async def _first_piece_then(http: HttpClient, url: str, arrived) -> bytes:
    """Read one body piece, wait until `arrived()` holds, then leave the response early."""
    async with http.post_stream(url, {}, {}) as response:
        async for piece in response.iter_bytes():
            async with asyncio.timeout(5):
                while not arrived():
                    await asyncio.sleep(0.005)
            return piece
    raise AssertionError("no body")


async def test_leaving_at_the_formats_end_keeps_the_connection_when_the_body_has_ended() -> None:
    """Adapters stop at "data: [DONE]" / message_stop; the chunked end usually came with it."""
    first_read = asyncio.Event()

    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        while await read_request(reader):
            writer.write(HEAD + chunk(b"data: [DONE]\n\n"))
            await writer.drain()
            await first_read.wait()
            first_read.clear()
            writer.write(b"0\r\n\r\n")
            await writer.drain()

    async with Server(handler) as server:
        http = client()
        assert http._h1 is not None
        url = f"http://127.0.0.1:{server.port}/"

        def tail_arrived() -> bool:
            first_read.set()
            return any(r._parser.done or r._conn.protocol.buffer for r in _responses_open())

        try:
            assert await _first_piece_then(http, url, tail_arrived) == b"data: [DONE]\n\n"
            assert await _first_piece_then(http, url, tail_arrived) == b"data: [DONE]\n\n"
        finally:
            await http.aclose()
    assert server.connections == 1


def _responses_open():
    """The responses being read, with their connections (a test-only view)."""
    import gc

    from cursor_byok.providers.h1 import H1Response

    return [r for r in gc.get_objects() if isinstance(r, H1Response) and r._conn is not None]


async def test_leaving_in_the_middle_of_a_body_closes_the_connection() -> None:
    gone = asyncio.Event()

    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        while await read_request(reader):
            writer.write(HEAD + chunk(b"data: 1\n\n"))
            await writer.drain()
            if not await reader.read(1):  # the client closed
                gone.set()
                return

    async with Server(handler) as server:
        http = client()
        try:
            url = f"http://127.0.0.1:{server.port}/"
            assert await _first_piece_then(http, url, lambda: True) == b"data: 1\n\n"
            async with asyncio.timeout(5):
                await gone.wait()
            assert await _first_piece_then(http, url, lambda: True) == b"data: 1\n\n"
        finally:
            await http.aclose()
    assert server.connections == 2


async def test_cancelling_a_stream_closes_its_connection() -> None:
    gone = asyncio.Event()
    got_first = asyncio.Event()

    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await read_request(reader)
        writer.write(HEAD + chunk(b"data: 1\n\n"))
        await writer.drain()
        if not await reader.read(1):
            gone.set()

    async def consume(http: HttpClient, url: str) -> None:
        async with http.post_stream(url, {}, {}) as response:
            async for _ in response.iter_bytes():
                got_first.set()

    async with Server(handler) as server:
        http = client()
        try:
            task = asyncio.ensure_future(consume(http, f"http://127.0.0.1:{server.port}/"))
            async with asyncio.timeout(5):
                await got_first.wait()
                task.cancel()
                await gone.wait()
            assert task.cancelled()
        finally:
            await http.aclose()


async def test_request_bytes_error_bodies_and_gzip() -> None:
    import gzip
    import json

    seen: list[bytes] = []

    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        head = await reader.readuntil(b"\r\n\r\n")
        length = int(head.lower().split(b"content-length: ")[1].split(b"\r\n")[0])
        seen.append(head + await reader.readexactly(length))
        body = json.dumps({"error": {"message": "slow down"}}).encode()
        writer.write(
            b"HTTP/1.1 429 Too Many Requests\r\ncontent-type: application/json\r\n"
            b"retry-after: 2\r\ncontent-encoding: gzip\r\ncontent-length: %d\r\n\r\n%s"
            % (len(gzip.compress(body)), gzip.compress(body))
        )
        await writer.drain()
        await reader.read()

    async with Server(handler) as server:
        http = client()
        try:
            url = f"http://127.0.0.1:{server.port}/v1/chat/completions?x=1"
            async with http.post_stream(url, {"authorization": "Bearer k"}, {"a": "é"}) as r:
                assert r.status == 429 and r.headers["retry-after"] == "2"
                assert json.loads(await r.read_capped()) == {"error": {"message": "slow down"}}
        finally:
            await http.aclose()
    request = seen[0].decode()
    assert request.startswith("POST /v1/chat/completions?x=1 HTTP/1.1\r\n")
    assert f"host: 127.0.0.1:{server.port}\r\n" in request
    assert "authorization: Bearer k\r\n" in request and "transfer-encoding" not in request
    assert "accept: text/event-stream\r\n" in request
    assert request.endswith('\r\n\r\n{"a":"é"}')


def test_an_ip_address_needs_no_resolver() -> None:
    import socket

    v4 = (socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP, "", ("127.0.0.1", 80))
    assert netstream._ip_literal("127.0.0.1", 80) == v4
    assert netstream._ip_literal("::1", 443)[4] == ("::1", 443, 0, 0)  # type: ignore[index]
    assert netstream._ip_literal("localhost", 80) is None
    assert netstream._ip_literal("fe80::1%eth0", 80) is None  # scoped: left to the resolver
