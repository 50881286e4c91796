"""The provider client's network side (providers/http.py on aiohttp) over loopback sockets:
streaming, framing split anywhere, keep-alive, leaving early, errors, bounds, redirects.

TLS and proxies have their own files (test_http_tls.py, tests/e2e/test_corporate_proxy.py)."""

from __future__ import annotations

import asyncio
import gzip
import json
import socket
import zlib

import pytest
from fakes.raw_http import HEAD
from fakes.raw_http import Handler
from fakes.raw_http import Server
from fakes.raw_http import answer_each
from fakes.raw_http import answer_once
from fakes.raw_http import chunk
from fakes.raw_http import read_request
from fakes.sse_wire import sse

from cursor_byok.providers import ModelRequest
from cursor_byok.providers import ProviderError
from cursor_byok.providers import ProviderSettings
from cursor_byok.providers import TextDelta
from cursor_byok.providers import make_provider
from cursor_byok.providers import stream_with_retries
from cursor_byok.providers.http import HttpClient

REQ = ModelRequest(model="m", system="s", messages=[{"role": "user", "content": "hi"}])
CHAT_OK = (
    sse({"choices": [{"index": 0, "delta": {"content": "hello"}}]})
    + sse({"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]})
    + b"data: [DONE]\n\n"
)


def client(read_timeout: float = 10.0) -> HttpClient:
    return HttpClient(provider="p", connect_timeout=5.0, read_timeout=read_timeout)


async def body_of(http: HttpClient, url: str) -> bytes:
    async with http.post_stream(url, {}, {"x": 1}) as response:
        assert response.status == 200
        return b"".join([c async for c in response.iter_bytes()])


async def error_from(handler: Handler, *, read_timeout: float = 10.0) -> ProviderError:
    """The ProviderError a POST to a server running `handler` ends in."""
    async with Server(handler) as server:
        http = client(read_timeout)
        try:
            with pytest.raises(ProviderError) as caught:
                await body_of(http, server.url + "/")
        finally:
            await http.aclose()
    return caught.value


# --- bodies ----------------------------------------------------------------------------------


async def test_streams_chunks_and_reuses_the_connection() -> None:
    async def handler(reader, writer) -> None:
        while await read_request(reader) is not None:
            writer.write(HEAD)
            for i in range(50):
                writer.write(chunk(b"data: %d\n\n" % i))
            writer.write(b"0\r\n\r\n")
            await writer.drain()

    async with Server(handler) as server:
        http = client()
        try:
            first = await body_of(http, server.url + "/v1/x")
            second = await body_of(http, server.url + "/v1/x")
        finally:
            await http.aclose()
    expected = b"".join(b"data: %d\n\n" % i for i in range(50))
    assert first == second == expected
    assert server.connections == 1


async def test_a_chunked_body_split_at_every_byte_gives_the_same_body() -> None:
    """Chunk sizes with extensions, data, CRLFs and trailers, each written on its own byte by
    byte: the body comes out whole and the connection is reused after it."""
    pieces = [b"data: one\n\n", b"data: " + b"x" * 300 + b"\n\n", b"data: [DONE]\n\n"]
    wire = (
        HEAD
        + b"".join(b"%x;ext=1\r\n%s\r\n" % (len(p), p) for p in pieces)
        + b"0\r\nx-trailer: 1\r\n\r\n"
    )

    async def handler(reader, writer) -> None:
        while await read_request(reader) is not None:
            for i in range(len(wire)):
                writer.write(wire[i : i + 1])
                await writer.drain()
                if i % 50 == 0:
                    await asyncio.sleep(0.001)  # let the client read some one-byte writes alone

    async with Server(handler) as server:
        http = client()
        try:
            for _ in range(2):
                assert await body_of(http, server.url + "/") == b"".join(pieces)
        finally:
            await http.aclose()
    assert server.connections == 1


@pytest.mark.parametrize(
    "answer",
    [
        b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncontent-length: 10\r\n\r\n"
        b"data: a\n\n\n",
        b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\ncontent-length: 10\r\n\r\ndata: a\n\n\n",
        b"HTTP/1.0 200 OK\r\ncontent-type: text/event-stream\r\n\r\ndata: a\n\n\n",  # to the close
    ],
    ids=["content-length", "interim-100", "read-to-close"],
)
async def test_length_delimited_interim_and_read_to_close_bodies(answer: bytes) -> None:
    async def handler(reader, writer) -> None:
        await read_request(reader)
        writer.write(answer)
        await writer.drain()
        writer.close()

    async with Server(handler) as server:
        http = client()
        try:
            assert await body_of(http, server.url + "/") == b"data: a\n\n\n"
        finally:
            await http.aclose()


async def test_request_bytes_error_bodies_and_gzip() -> None:
    seen: list[bytes] = []

    async def handler(reader, writer) -> None:
        request = await read_request(reader)
        assert request is not None
        seen.append(request)
        body = gzip.compress(json.dumps({"error": {"message": "slow down"}}).encode())
        writer.write(
            b"HTTP/1.1 429 Too Many Requests\r\ncontent-type: application/json\r\n"
            b"retry-after: 2\r\nRetry-After: 3\r\ncontent-encoding: gzip\r\n"
            b"content-length: %d\r\n\r\n%s" % (len(body), body)
        )
        await writer.drain()
        await reader.read()

    async with Server(handler) as server:
        http = client()
        try:
            url = server.url + "/v1/chat/completions?x=1"
            own = {"Content-Length": "999", "Host": "evil", "transfer-encoding": "chunked"}
            headers = {"Authorization": "Bearer k", **own}
            async with http.post_stream(url, headers, {"a": "é"}) as r:
                assert r.status == 429 and r.headers["retry-after"] == "2, 3"
                assert json.loads(await r.read_capped()) == {"error": {"message": "slow down"}}
        finally:
            await http.aclose()
    head, _, body = seen[0].partition(b"\r\n\r\n")
    lines = head.decode().lower().split("\r\n")
    assert lines[0] == "post /v1/chat/completions?x=1 http/1.1"
    assert f"host: 127.0.0.1:{server.port}" in lines
    assert sum(x.startswith(("host:", "content-length:")) for x in lines) == 2
    assert "authorization: bearer k" in lines and "accept: text/event-stream" in lines
    assert "accept-encoding: identity" in lines and "user-agent: cursor-byok" in lines
    assert "content-type: application/json" in lines
    assert f"content-length: {len(body)}" in lines and not any(
        "transfer-encoding" in x for x in lines
    )
    assert body == '{"a":"é"}'.encode()


async def test_a_gzip_event_stream_is_decoded_as_it_arrives() -> None:
    obj = zlib.compressobj(wbits=31)
    parts = [obj.compress(b"data: %d\n\n" % i) + obj.flush(zlib.Z_SYNC_FLUSH) for i in range(5)]
    parts.append(obj.flush())

    async def handler(reader, writer) -> None:
        await read_request(reader)
        writer.write(
            b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncontent-encoding: gzip\r\n"
            b"transfer-encoding: chunked\r\n\r\n"
        )
        for part in parts:
            writer.write(chunk(part))
            await writer.drain()
            await asyncio.sleep(0.005)
        writer.write(b"0\r\n\r\n")
        await writer.drain()

    async with Server(handler) as server:
        http = client()
        try:
            body = await body_of(http, server.url + "/")
        finally:
            await http.aclose()
    assert body == b"".join(b"data: %d\n\n" % i for i in range(5))


async def test_an_unsupported_or_corrupt_coding_is_a_protocol_error() -> None:
    def answering(coding: bytes, body: bytes) -> Handler:
        async def handler(reader, writer) -> None:
            await read_request(reader)
            writer.write(
                b"HTTP/1.1 200 OK\r\ncontent-encoding: %s\r\ncontent-length: %d\r\n\r\n%s"
                % (coding, len(body), body)
            )
            await writer.drain()

        return handler

    for coding, body in ((b"compress", b"x"), (b"gzip", b"\x1f\x8b\x08\x00garbage!")):
        error = await error_from(answering(coding, body))
        assert error.kind == "protocol" and not error.retryable
        assert "undecodable response body" in error.message


# --- failures --------------------------------------------------------------------------------


async def test_read_timeout_is_a_retryable_timeout_error() -> None:
    async def handler(reader, writer) -> None:
        await read_request(reader)
        writer.write(HEAD + chunk(b"data: a\n\n"))
        await writer.drain()
        await asyncio.Event().wait()  # then silence

    async with Server(handler) as server:
        http = client(read_timeout=0.2)
        got: list[bytes] = []
        try:
            with pytest.raises(ProviderError) as caught:
                async with http.post_stream(server.url + "/", {}, {}) as r:
                    async for piece in r.iter_bytes():
                        got.append(piece)
        finally:
            await http.aclose()
    assert got == [b"data: a\n\n"]
    assert caught.value.kind == "timeout" and caught.value.retryable
    assert "read" in caught.value.message and "0.2 s" in caught.value.message


async def test_no_response_head_in_time_is_a_read_timeout() -> None:
    async def handler(reader, writer) -> None:
        await read_request(reader)
        await asyncio.Event().wait()

    error = await error_from(handler, read_timeout=0.2)
    assert error.kind == "timeout" and error.retryable


async def test_connection_cut_mid_body_is_a_network_error() -> None:
    async def handler(reader, writer) -> None:
        await read_request(reader)
        writer.write(HEAD + chunk(b"data: a\n\n"))
        await writer.drain()
        writer.transport.abort()

    error = await error_from(handler)
    assert error.kind == "network" and error.retryable
    assert "connection closed by the provider" in error.message


async def test_a_length_body_cut_short_is_a_network_error() -> None:
    async def handler(reader, writer) -> None:
        await read_request(reader)
        writer.write(b"HTTP/1.1 200 OK\r\ncontent-length: 100\r\n\r\ndata: a\n\n")
        await writer.drain()
        writer.close()

    error = await error_from(handler)
    assert error.kind == "network" and error.retryable


async def test_connection_refused_is_a_network_error_naming_the_address() -> None:
    probe = socket.socket()
    probe.bind(("127.0.0.1", 0))
    port = probe.getsockname()[1]
    probe.close()
    http = client()
    try:
        with pytest.raises(ProviderError) as caught:
            await body_of(http, f"http://127.0.0.1:{port}/")
    finally:
        await http.aclose()
    assert caught.value.kind == "network" and caught.value.retryable
    assert f"127.0.0.1:{port}" in caught.value.message and "\n" not in caught.value.message


@pytest.mark.parametrize(
    "answer",
    [
        b"SSH-2.0-OpenSSH_9.2\r\n\r\n",
        b"HTTP/1.1 abc OK\r\n\r\n",
        b"HTTP/1.1 200 OK\r\nno colon\r\ncontent-length: 0\r\n\r\n",
        b"HTTP/1.1 200 OK\r\ncontent-length: -1\r\n\r\n",
        HEAD + b"zz\r\n",
        HEAD + b"0x5\r\nabcde\r\n0\r\n\r\n",
        HEAD + b"3\r\nabcXY",
        b"HTTP/1.1 200 OK\r\nx-h\x01: 1\r\ncontent-length: 0\r\n\r\n",  # control character
    ],
)
async def test_malformed_responses_are_network_errors(answer: bytes) -> None:
    """llhttp's verdicts: never a hang, never a traceback, a retryable network error."""

    async def handler(reader, writer) -> None:
        await read_request(reader)
        writer.write(answer)
        await writer.drain()
        await asyncio.sleep(0.05)
        writer.close()

    error = await error_from(handler)
    assert error.kind == "network" and error.retryable, error


async def test_header_injection_is_refused_without_showing_the_value() -> None:
    http = client()
    try:
        with pytest.raises(ProviderError) as caught:
            async with http.post_stream(
                "http://127.0.0.1:9/", {"x-api-key": "sk-secret\r\nx-evil: 1"}, {}
            ):
                pass
    finally:
        await http.aclose()
    assert "sk-secret" not in str(caught.value) and not caught.value.retryable
    assert "x-api-key" in caught.value.message


async def test_a_redirect_is_an_error_and_not_followed() -> None:
    requests: list[bytes] = []

    async def handler(reader, writer) -> None:
        while (request := await read_request(reader)) is not None:
            requests.append(request)
            writer.write(
                b"HTTP/1.1 307 Temporary Redirect\r\nlocation: http://127.0.0.1:9/elsewhere\r\n"
                b"content-length: 0\r\n\r\n"
            )
            await writer.drain()

    async with Server(handler) as server:
        provider = make_provider(
            ProviderSettings(kind="openai-chat", base_url=server.url + "/v1", api_key="sk-k")
        )
        try:
            with pytest.raises(ProviderError) as caught:
                async for _ in stream_with_retries(provider, REQ, max_retries=2):
                    pass
        finally:
            await provider.aclose()
    assert caught.value.status == 307 and not caught.value.retryable
    assert "redirect to http://127.0.0.1:9/elsewhere" in caught.value.message
    assert "not followed" in caught.value.message
    assert len(requests) == 1  # neither followed nor retried


# --- keep-alive and the end of a response ----------------------------------------------------


async def test_an_idle_connection_closed_by_the_server_is_not_reused() -> None:
    """The server goes away right after answering (keep-alive was not refused): the next call
    gets a fresh connection, without an error."""
    async with Server(answer_once(b"data: a\n\n")) as server:
        http = client()
        try:
            assert await body_of(http, server.url + "/") == b"data: a\n\n"
            await asyncio.sleep(0.05)  # the close reaches the client
            assert await body_of(http, server.url + "/") == b"data: a\n\n"
        finally:
            await http.aclose()
    assert server.connections == 2


async def test_a_kept_alive_connection_closed_as_we_send_is_one_retry_of_the_loop() -> None:
    """The provider reads the second request on the kept-alive connection and drops it without
    a word (its idle timeout racing our send). The HTTP layer does not send the POST again on
    its own: the loop's policy does, once, after its back-off, and counts it."""
    requests = 0

    async def handler(reader, writer) -> None:
        nonlocal requests
        while await read_request(reader) is not None:
            requests += 1
            if requests == 2:
                writer.transport.abort()
                return
            writer.write(HEAD + chunk(CHAT_OK) + b"0\r\n\r\n")
            await writer.drain()

    async with Server(handler) as server:
        provider = make_provider(
            ProviderSettings(kind="openai-chat", base_url=server.url + "/v1", api_key="sk-k")
        )
        retries: list[tuple[int, str, float]] = []
        delays: list[float] = []

        async def sleep(delay: float) -> None:
            delays.append(delay)

        try:
            for _ in range(2):
                events = [
                    e
                    async for e in stream_with_retries(
                        provider,
                        REQ,
                        max_retries=2,
                        sleep=sleep,
                        jitter=lambda: 0.0,
                        on_retry=lambda n, e, d: retries.append((n, e.kind, d)),
                    )
                ]
                assert events[0] == TextDelta("hello")
        finally:
            await provider.aclose()
    assert retries == [(1, "network", 0.5)] and delays == [0.5]
    assert requests == 3 and server.connections == 2


async def test_a_fresh_connection_closed_without_an_answer_is_not_retried_by_http() -> None:
    requests = 0

    async def handler(reader, writer) -> None:
        nonlocal requests
        await read_request(reader)
        requests += 1
        writer.transport.abort()

    error = await error_from(handler)
    assert requests == 1  # the loop's retry policy decides, not the HTTP layer
    assert error.kind == "network" and error.retryable


async def _first_piece(http: HttpClient, url: str, *, settle: float = 0.0) -> bytes:
    """Read one body piece, wait `settle` s, then leave the response early."""
    async with http.post_stream(url, {}, {}) as response:
        async for piece in response.iter_bytes():
            await asyncio.sleep(settle)
            return piece
    raise AssertionError("no body")


async def test_leaving_at_the_formats_end_keeps_the_connection_when_the_body_has_ended() -> None:
    """Adapters stop at "data: [DONE]" / message_stop; the chunked end usually came with it."""
    async with Server(answer_each(b"data: [DONE]\n\n")) as server:
        http = client()
        try:
            for _ in range(3):
                assert await _first_piece(http, server.url + "/") == b"data: [DONE]\n\n"
        finally:
            await http.aclose()
    assert server.connections == 1


async def test_leaving_in_the_middle_of_a_body_closes_the_connection() -> None:
    gone = asyncio.Event()

    async def handler(reader, writer) -> None:
        while await read_request(reader) is not None:
            writer.write(HEAD + chunk(b"data: 1\n\n"))
            await writer.drain()
            if not await reader.read(1):  # the client closed
                gone.set()
                return

    async with Server(handler) as server:
        http = client()
        try:
            assert await _first_piece(http, server.url + "/") == b"data: 1\n\n"
            async with asyncio.timeout(5):
                await gone.wait()
            assert await _first_piece(http, server.url + "/") == b"data: 1\n\n"
        finally:
            await http.aclose()
    assert server.connections == 2


async def test_cancelling_a_stream_closes_its_connection() -> None:
    gone = asyncio.Event()
    got_first = asyncio.Event()

    async def handler(reader, writer) -> None:
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
            task = asyncio.ensure_future(consume(http, server.url + "/"))
            async with asyncio.timeout(5):
                await got_first.wait()
                task.cancel()
                await gone.wait()
            assert task.cancelled()
        finally:
            await http.aclose()


async def test_a_closed_client_refuses_new_calls() -> None:
    http = client()
    await http.aclose()
    with pytest.raises(ProviderError, match="closed"):
        await body_of(http, "http://127.0.0.1:9/")


# --- loops and names -------------------------------------------------------------------------


async def test_streams_under_an_eager_task_factory_as_in_mitmproxy() -> None:
    """mitmproxy runs its loop with asyncio.eager_task_factory; asyncio's own happy-eyeballs
    race asserted under it (Python < 3.12.7). aiohttp's (aiohappyeyeballs) must not: by name,
    which resolves to two addresses here, and by address."""
    loop = asyncio.get_running_loop()
    previous = loop.get_task_factory()
    loop.set_task_factory(asyncio.eager_task_factory)  # type: ignore[arg-type]
    try:
        async with Server(answer_each(b"data: named\n\n")) as server:
            http = client()
            try:
                for host in ("localhost", "127.0.0.1"):
                    url = f"http://{host}:{server.port}/"
                    assert await body_of(http, url) == b"data: named\n\n"
            finally:
                await http.aclose()
    finally:
        loop.set_task_factory(previous)


def test_streams_on_uvloop_too() -> None:
    """Not a dependency; run with `uv run --with uvloop pytest` to check the client there."""
    uvloop = pytest.importorskip("uvloop")
    uvloop.run(test_streams_chunks_and_reuses_the_connection())


async def test_long_header_lines_are_read_and_an_endless_one_refused() -> None:
    """A 20 KiB Content-Security-Policy (some gateways send such) is fine; a 1 MiB line is a
    network error, not memory."""

    def answering(size: int) -> Handler:
        async def handler(reader, writer) -> None:
            await read_request(reader)
            writer.write(
                b"HTTP/1.1 200 OK\r\ncontent-security-policy: %s\r\ncontent-length: 9\r\n\r\n"
                b"data: a\n\n" % (b"x" * size)
            )
            await writer.drain()

        return handler

    async with Server(answering(20 * 1024)) as server:
        http = client()
        try:
            assert await body_of(http, server.url + "/") == b"data: a\n\n"
        finally:
            await http.aclose()
    error = await error_from(answering(1 << 20))
    assert error.kind == "network" and "\n" not in error.message


@pytest.mark.parametrize(
    ("head", "connections"),
    [
        (b"HTTP/1.1 200 OK\r\ncontent-length: 9\r\n\r\n", 1),
        (b"HTTP/1.1 200 OK\r\nconnection: close\r\ncontent-length: 9\r\n\r\n", 2),
        (b"HTTP/1.0 200 OK\r\ncontent-length: 9\r\n\r\n", 2),
    ],
    ids=["http/1.1", "connection-close", "http/1.0"],
)
async def test_keep_alive_follows_the_version_and_the_connection_header(head, connections) -> None:
    async def handler(reader, writer) -> None:
        while await read_request(reader) is not None:
            writer.write(head + b"data: a\n\n")
            await writer.drain()

    async with Server(handler) as server:
        http = client()
        try:
            for _ in range(2):
                assert await body_of(http, server.url + "/") == b"data: a\n\n"
        finally:
            await http.aclose()
    assert server.connections == connections
