"""Relays to Cursor's backend: mitmproxy's `upstream:` proxy and Cursor's error answers."""

from __future__ import annotations

import asyncio
import ssl

from fakes.certs import self_signed

from cursor_byok.proxy.loopback.relay import UpstreamProxy
from cursor_byok.proxy.loopback.relay import open_upstream
from cursor_byok.proxy.loopback.relay import upstream_error
from cursor_byok.proxy.loopback.relay import upstream_proxy


def test_upstream_proxy_from_mitmproxy_modes() -> None:
    assert upstream_proxy(["regular"]) is None
    assert upstream_proxy(["upstream:http://10.0.0.1:3128"], "u:p") == UpstreamProxy(
        "10.0.0.1", 3128, "u:p"
    )
    assert upstream_proxy(["regular", "upstream:http://proxy.corp"]) == UpstreamProxy(
        "proxy.corp", 80
    )
    assert upstream_proxy(["upstream:https://proxy.corp:443"]) is None  # TLS proxy: direct


def test_cursor_error_answers_become_connect_errors() -> None:
    assert upstream_error(401, b'{"code":"unauthenticated","message":"no"}') == (
        "unauthenticated",
        "no",
    )
    assert upstream_error(503, b"<html>") == ("unavailable", "Cursor's backend answered HTTP 503")
    assert upstream_error(429, b"")[0] == "resource_exhausted"


async def test_relay_connections_tunnel_through_the_upstream_proxy(tmp_path) -> None:
    cert, key = self_signed("127.0.0.1")
    (tmp_path / "c.pem").write_bytes(cert)
    (tmp_path / "k.pem").write_bytes(key)
    server_context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    server_context.load_cert_chain(tmp_path / "c.pem", tmp_path / "k.pem")

    async def backend(reader, writer) -> None:
        writer.write(b"hello " + await reader.readline())
        await writer.drain()
        writer.close()

    heads: list[bytes] = []

    async def proxy(reader, writer) -> None:  # a minimal CONNECT proxy
        head = await reader.readuntil(b"\r\n\r\n")
        heads.append(head)
        host, port = head.split(b" ")[1].decode().rsplit(":", 1)
        up_reader, up_writer = await asyncio.open_connection(host, int(port))
        writer.write(b"HTTP/1.1 200 Connection established\r\n\r\n")

        async def pipe(src, dst) -> None:
            while data := await src.read(65536):
                dst.write(data)
                await dst.drain()
            dst.close()

        await asyncio.gather(pipe(reader, up_writer), pipe(up_reader, writer))

    tls = await asyncio.start_server(backend, "127.0.0.1", 0, ssl=server_context)
    plain = await asyncio.start_server(proxy, "127.0.0.1", 0)
    async with tls, plain:
        port = tls.sockets[0].getsockname()[1]
        via = UpstreamProxy("127.0.0.1", plain.sockets[0].getsockname()[1], "user:secret")
        context = ssl.create_default_context(cafile=str(tmp_path / "c.pem"))
        reader, writer = await open_upstream(
            "127.0.0.1", port, context=context, sni="127.0.0.1", proxy=via
        )
        writer.write(b"relay\n")
        assert await reader.read() == b"hello relay\n"
        writer.close()
    [head] = heads
    assert head.startswith(f"CONNECT 127.0.0.1:{port} HTTP/1.1\r\n".encode())
    assert b"Proxy-Authorization: Basic dXNlcjpzZWNyZXQ=" in head
