"""TLS to a provider as users expect it: the system store plus certifi's, a provider's own
`ca_file` for a company CA, and a failure that is one line naming the host and the check."""

from __future__ import annotations

import contextlib
import ssl
from collections.abc import AsyncIterator
from pathlib import Path

import certifi
import pytest
from fakes.certs import ca_and_server
from fakes.raw_http import HEAD
from fakes.raw_http import Server
from fakes.raw_http import chunk
from fakes.raw_http import read_request
from fakes.sse_wire import sse

from cursor_byok import outbound
from cursor_byok.providers import ModelRequest
from cursor_byok.providers import ProviderError
from cursor_byok.providers import ProviderSettings
from cursor_byok.providers import TextDelta
from cursor_byok.providers import make_provider
from cursor_byok.providers import stream_with_retries
from cursor_byok.providers.http import HttpClient

REQ = ModelRequest(model="m", system="s", messages=[{"role": "user", "content": "hi"}])
ANSWER = (
    sse({"choices": [{"index": 0, "delta": {"content": "over tls"}}]})
    + sse({"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]})
    + b"data: [DONE]\n\n"
)


@contextlib.asynccontextmanager
async def company_server(tmp_path: Path, *names: str) -> AsyncIterator[tuple[Server, Path]]:
    """A provider whose certificate a private CA issued; yields it and the CA file."""
    ca, cert, key = ca_and_server(*(names or ("127.0.0.1", "localhost")))
    (tmp_path / "ca.pem").write_bytes(ca)
    (tmp_path / "chain.pem").write_bytes(cert)
    (tmp_path / "key.pem").write_bytes(key)
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.load_cert_chain(tmp_path / "chain.pem", tmp_path / "key.pem")

    async def handler(reader, writer) -> None:
        while await read_request(reader) is not None:
            writer.write(HEAD + chunk(ANSWER) + b"0\r\n\r\n")
            await writer.drain()

    async with Server(handler, context) as server:
        yield server, tmp_path / "ca.pem"


def provider(server: Server, **kw):
    return make_provider(
        ProviderSettings(kind="openai-chat", base_url=server.url + "/v1", api_key="sk-k", **kw)
    )


async def texts(p) -> list[str]:
    try:
        return [
            e.text
            async for e in stream_with_retries(p, REQ, max_retries=2)
            if isinstance(e, TextDelta)
        ]
    finally:
        await p.aclose()


async def test_a_company_ca_in_ca_file_is_trusted_and_the_connection_kept(tmp_path) -> None:
    async with company_server(tmp_path) as (server, ca):
        http = HttpClient(provider="p", connect_timeout=5, read_timeout=5, ca_file=str(ca))
        try:
            for _ in range(3):
                async with http.post_stream(server.url + "/v1/chat/completions", {}, {}) as r:
                    assert r.status == 200
                    assert b"over tls" in b"".join([c async for c in r.iter_bytes()])
        finally:
            await http.aclose()
        assert server.connections == 1
        assert await texts(provider(server, ca_file=str(ca))) == ["over tls"]


async def test_without_ca_file_the_error_is_one_line_naming_host_and_check(tmp_path) -> None:
    retries: list[ProviderError] = []
    async with company_server(tmp_path) as (server, _):
        p = provider(server)
        with pytest.raises(ProviderError) as caught:
            async for _ in stream_with_retries(
                p, REQ, max_retries=2, on_retry=lambda n, e, d: retries.append(e)
            ):
                pass
        await p.aclose()
    error = caught.value
    assert error.kind == "network" and error.reason == "tls" and not error.retryable
    assert retries == []  # shown, not retried: it would fail the same way
    message = str(error)
    assert "\n" not in message and "Traceback" not in message
    assert f"TLS to 127.0.0.1:{server.port} failed" in message
    assert "certificate verify failed: unable to get local issuer certificate" in message
    assert "set ca_file" in message


async def test_a_certificate_for_another_name_is_a_named_tls_error(tmp_path) -> None:
    async with company_server(tmp_path, "provider.internal") as (server, ca):
        with pytest.raises(ProviderError) as caught:
            await texts(provider(server, ca_file=str(ca)))
    message = caught.value.message
    assert f"TLS to 127.0.0.1:{server.port} failed: certificate verify failed" in message
    assert "mismatch" in message and "\n" not in message


async def test_tls_to_a_plain_http_port_is_a_named_tls_error() -> None:
    async def plain(reader, writer) -> None:
        await reader.read(100)  # a ClientHello, to an HTTP server: it answers 400
        writer.write(b"HTTP/1.1 400 Bad Request\r\ncontent-length: 0\r\n\r\n")
        await writer.drain()

    async with Server(plain) as server:
        http = HttpClient(provider="p", connect_timeout=5, read_timeout=5)
        try:
            with pytest.raises(ProviderError) as caught:
                async with http.post_stream(f"https://127.0.0.1:{server.port}/", {}, {}):
                    pass
        finally:
            await http.aclose()
    message = caught.value.message
    assert message.startswith(f"TLS to 127.0.0.1:{server.port} failed: ")
    assert "\n" not in message and caught.value.reason == "tls"


async def test_a_ca_file_that_is_no_pem_bundle_is_a_clear_error(tmp_path) -> None:
    bad = tmp_path / "not-a-ca.pem"
    bad.write_text("hello\n")
    http = HttpClient(provider="p", connect_timeout=5, read_timeout=5, ca_file=str(bad))
    try:
        with pytest.raises(ProviderError) as caught:
            async with http.post_stream("https://127.0.0.1:9/", {}, {}):
                pass
    finally:
        await http.aclose()
    assert f"ca_file {bad}: not a PEM CA bundle" in caught.value.message
    assert not caught.value.retryable


def test_the_default_trust_is_the_system_store_plus_certifi(tmp_path) -> None:
    context = outbound.tls_context()
    assert context.verify_mode == ssl.CERT_REQUIRED and context.check_hostname
    bundle = ssl.create_default_context(cafile=certifi.where())
    # every certifi root is in ours (the system store adds to them, never replaces them)
    ours = context.get_ca_certs()
    serials = {c["serialNumber"] for c in ours}
    assert {c["serialNumber"] for c in bundle.get_ca_certs()} <= serials
    assert outbound.tls_context() is context  # built once per process
    ca, _, _ = ca_and_server("127.0.0.1")
    (tmp_path / "ca.pem").write_bytes(ca)
    with_company = outbound.tls_context(str(tmp_path / "ca.pem"))
    assert len(with_company.get_ca_certs()) == len(ours) + 1
