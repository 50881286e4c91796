"""Restarting the proxy while Cursor is open: Agent calls that arrive during start-up must not
take mitmdump down (they once hit an assert and mitmproxy exited on the error logged)."""

from __future__ import annotations

import asyncio
import uuid

import httpx
import pytest
from cursor_client import FAKE_TOKEN
from cursor_client import ssl_context
from mitm import TEST_HOST
from mitm import start_mitmdump

from cursor_byok.wire import connect
from cursor_byok.wire.bidi import encode_run_sse_request

pytestmark = pytest.mark.timeout(90)


async def test_agent_calls_during_start_up_never_kill_the_proxy(tmp_path) -> None:
    proxy = start_mitmdump(tmp_path, wait_ready=False)
    statuses: list[int] = []
    try:
        async with httpx.AsyncClient(
            proxy=proxy.proxy_url, verify=ssl_context(proxy.ca_file, False), trust_env=False
        ) as http:

            async def one() -> None:
                body = connect.encode_frame(encode_run_sse_request(str(uuid.uuid4())))
                async with http.stream(
                    "POST",
                    f"https://{TEST_HOST}/agent.v1.AgentService/RunSSE",
                    content=body,
                    headers={
                        "content-type": "application/connect+proto",
                        "authorization": FAKE_TOKEN,
                    },
                ) as response:
                    statuses.append(response.status_code)

            # Fire from the moment the port listens until well after the addon is ready.
            while "cursor-byok ready" not in proxy.log() and proxy.process.poll() is None:
                await asyncio.gather(*(one() for _ in range(4)))
            await asyncio.gather(*(one() for _ in range(4)))
    finally:
        alive = proxy.process.poll() is None
        proxy.stop()
    assert alive, proxy.log()
    assert statuses and set(statuses) <= {200, 503}, statuses
    log = proxy.log()
    assert "Traceback" not in log, log[log.find("Traceback") - 300 :][:3000]
