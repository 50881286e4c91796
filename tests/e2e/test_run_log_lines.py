"""What the proxy console says about a `Run` stream served here: one line for its opening and
its route (each log record costs the proxy a dispatch to every addon and a console write), the
opening still said when the stream ends before its run request, and none of mitmproxy's lines
about the hop to the loopback streamer."""

from __future__ import annotations

import asyncio
import re
import time
import uuid

import pytest
from cursor_client import FAKE_TOKEN
from cursor_client import CursorLikeClient
from fakes.fake_provider import FakeProvider
from h2_client import H2Client
from mitm import TEST_HOST
from mitm import start_mitmdump
from provider_config import KEY_ENV
from provider_config import MODEL
from provider_config import write_config

pytestmark = pytest.mark.timeout(90)


async def _wait_for_line(proxy, pattern: str, timeout: float = 20) -> str:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = [line for line in proxy.log_lines if re.search(pattern, line)]
        if found:
            return found[0]
        await asyncio.sleep(0.05)
    raise AssertionError(f"no log line matching {pattern!r} in:\n{proxy.log()}")


async def test_a_run_says_opened_and_routed_in_one_line(tmp_path, workspace) -> None:
    async with FakeProvider() as fp:
        fp.script.text("hello")
        proxy = start_mitmdump(
            tmp_path, agent="provider", config=write_config(tmp_path, fp, "openai-chat"),
            env={KEY_ENV: "sk-test-not-a-real-key"},
        )  # fmt: skip
        client = CursorLikeClient.through(proxy, workspace, transport="run")
        try:
            first = client.run_request("hi", conversation_id="log-lines", model=MODEL)
            result = await client.turn(first)
            assert result.end.ok, result.end.error
            line = await _wait_for_line(proxy, r"turn \S+ conversation log-lines: ok")
            rid = line.split("turn ", 1)[1].split()[0]

            # A Run stream that ends before its first message: its opening is still said.
            h2 = await H2Client.connect(proxy.port, TEST_HOST, proxy.ca_file)
            quiet = str(uuid.uuid4())
            stream = await h2.request(
                "/agent.v1.AgentService/Run",
                {
                    ":authority": TEST_HOST,
                    "content-type": "application/connect+proto",
                    "connect-protocol-version": "1",
                    "authorization": FAKE_TOKEN,
                    "x-request-id": quiet,
                },
            )
            await stream.send(b"", end=True)
            quiet_line = await _wait_for_line(proxy, rf"Run {quiet} opened")
            await h2.aclose()
        finally:
            await client.aclose()
            proxy.stop()
    log = proxy.log()
    mentions = [x for x in proxy.log_lines if f"{rid} opened" in x or f"run {rid}" in x]
    assert len(mentions) == 1, log
    assert f"Run {rid} opened (HTTP/2): model '{MODEL}' → served here" in mentions[0]
    assert "opened (HTTP/2), no run request" in quiet_line
    # mitmproxy's own lines about the hop to the loopback streamer are not in the console.
    assert "Streaming response from 127.0.0.1." not in log
    assert "Streaming request to 127.0.0.1." not in log
    assert not re.search(r"server (dis)?connect 127\.0\.0\.1:", log), log
    assert "client connect" in log  # its other lines are
