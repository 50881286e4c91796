"""Issue 27 item 9 through a real mitmdump in `--mode upstream:`: served runs work behind an
upstream proxy, and their loopback hop never leaves the machine (the upstream proxy never sees
it), while traffic that is not served still goes through the upstream proxy. Before, mitmproxy
sent the loopback hop through the upstream proxy too, and every served turn failed."""

from __future__ import annotations

import asyncio
import contextlib
import uuid

import httpx
import pytest
from cursor_client import CursorLikeClient
from cursor_client import ssl_context
from mitm import TEST_HOST
from mitm import start_mitmdump

pytestmark = pytest.mark.timeout(90)


class UpstreamProxy:
    """Records the request line of every connection it gets and answers 502: a proxy the
    served turns must never need."""

    def __init__(self) -> None:
        self.seen: list[str] = []
        self.server: asyncio.Server | None = None

    async def __aenter__(self) -> UpstreamProxy:
        self.server = await asyncio.start_server(self._serve, "127.0.0.1", 0)
        return self

    async def __aexit__(self, *exc: object) -> None:
        assert self.server is not None
        self.server.close()

    @property
    def url(self) -> str:
        assert self.server is not None
        return f"http://127.0.0.1:{self.server.sockets[0].getsockname()[1]}"

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        with contextlib.suppress(ConnectionError, asyncio.IncompleteReadError):
            line = await reader.readline()
            self.seen.append(line.decode("latin-1").strip())
            await reader.readuntil(b"\r\n\r\n")
            writer.write(b"HTTP/1.1 502 Bad Gateway\r\ncontent-length: 0\r\n\r\n")
            await writer.drain()
        writer.close()


async def test_served_runs_work_behind_an_upstream_proxy(tmp_path, workspace, transport) -> None:
    async with UpstreamProxy() as upstream:
        proxy = start_mitmdump(
            tmp_path, "--set", "cursor_byok_heartbeat_ms=300", mode=f"upstream:{upstream.url}"
        )
        client = CursorLikeClient.through(proxy, workspace, transport=transport)
        try:
            result = await client.turn(
                client.run_request("read notes.txt", conversation_id=str(uuid.uuid4()))
            )
            async with httpx.AsyncClient(  # not an Agent call: it goes upstream
                proxy=proxy.proxy_url, verify=ssl_context(proxy.ca_file, False), trust_env=False
            ) as http:
                passed = await http.get(f"https://{TEST_HOST}/auth/full_stripe_profile")
        finally:
            await client.aclose()
            proxy.stop()
    assert result.end.ok, result.end.error
    assert "alpha" in result.text
    assert not [line for line in upstream.seen if "127.0.0.1" in line], upstream.seen
    assert f"CONNECT {TEST_HOST}:443 HTTP/1.1" in upstream.seen  # the mode is upstream
    assert passed.status_code == 502
    assert "Traceback" not in proxy.log()
