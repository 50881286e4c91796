"""Issue 27 item 8: request heads that never finish, sent straight to a loopback streamer port,
cost the proxy a bounded number of connections for a bounded time, and served turns go on."""

from __future__ import annotations

import asyncio
import os
import re
import sys
import time
import uuid

import pytest
from cursor_client import CursorLikeClient
from faultlib import LARGE

pytestmark = [
    pytest.mark.timeout(120),
    pytest.mark.skipif(sys.platform != "linux", reason="open descriptors are read from /proc"),
]
FLOOD = 1000 if LARGE else 400
HEAD_TIMEOUT = 10.0  # proxy/loopback/server.py
MAX_PENDING = 256  # plus the streams the addon pointed at the loopback: here only the turn's


def open_fds(pid: int) -> int:
    return len(os.listdir(f"/proc/{pid}/fd"))


async def test_a_flood_of_unfinished_heads_is_bounded(mitm, workspace) -> None:
    ports = re.search(r"loopback streamer on 127\.0\.0\.1, ports (\d+)-", mitm.log())
    assert ports, mitm.log()
    port = int(ports.group(1))
    pid = mitm.process.pid
    before = open_fds(pid)
    flood = []
    for _ in range(FLOOD):
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        writer.write(b"POST /agent.v1.AgentService/Run HTTP/1.1\r\nhost: 127.0.0.1\r\n")
        flood.append((reader, writer))
    await asyncio.gather(*(w.drain() for _, w in flood))
    # A served turn while the flood holds its connections.
    client = CursorLikeClient.through(mitm, workspace)
    started = time.monotonic()
    try:
        result = await client.turn(
            client.run_request("read notes.txt", conversation_id=str(uuid.uuid4()))
        )
    finally:
        await client.aclose()
    turn_seconds = time.monotonic() - started
    during = open_fds(pid) - before
    print(f"flood {FLOOD}: +{during} fds during, turn {turn_seconds:.2f} s", flush=True)
    # Every flood connection is closed by the proxy (EOF), within the head timeout.
    async with asyncio.timeout(HEAD_TIMEOUT + 5):
        await asyncio.gather(*(r.read() for r, _ in flood))
    for _, writer in flood:
        writer.close()
    after = open_fds(pid) - before
    print(f"flood {FLOOD}: +{after} fds after the head timeout")
    assert result.end.ok and "alpha" in result.text
    assert during <= MAX_PENDING + 16, f"{during} descriptors held by {FLOOD} unfinished heads"
    assert after <= 8
    assert "Traceback" not in mitm.log()
