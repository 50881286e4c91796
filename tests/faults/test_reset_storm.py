"""Issue 27 item 3: one client resetting `Run` streams right after their first exec request, more
of them than the proxy keeps live request ids for, locks out nobody else: a bystander with
another credential completes its turn during the storm, and every refusal is a Connect error."""

from __future__ import annotations

import asyncio
import collections
import os
import sys
import time
import uuid

import pytest
from cursor_client import FAKE_TOKEN
from cursor_client import CursorLikeClient
from faultlib import LARGE
from h2_client import H2Client
from mitm import TEST_HOST

from cursor_byok.pb import agent_v1_pb2 as pb
from cursor_byok.wire import connect

pytestmark = pytest.mark.timeout(240)
STORM = 3000 if LARGE else 1200  # past the 1,024 live request ids of the issue
BATCH = 90  # streams open at once on one connection (mitmproxy allows 100)


def open_fds(pid: int) -> int:
    return len(os.listdir(f"/proc/{pid}/fd")) if sys.platform == "linux" else 0


async def reset_after_first_exec(client: H2Client, token: str, outcomes: collections.Counter):
    """One `Run`: the run request, then RST_STREAM as soon as an exec request arrives."""
    rid = str(uuid.uuid4())
    stream = await client.request(
        "/agent.v1.AgentService/Run",
        {
            ":authority": TEST_HOST,
            "content-type": "application/connect+proto",
            "x-request-id": rid,
            "authorization": token,
            "te": "trailers",
        },
    )
    first = CursorLikeClient.run_request("read notes.txt", conversation_id=rid)
    try:
        await stream.send(connect.encode_frame(first.SerializeToString()))
        outcomes[await first_exec_then_reset(client, stream)] += 1
    finally:
        await client.reset(stream.stream_id)  # whatever happened, the stream is done with


async def first_exec_then_reset(client: H2Client, stream) -> str:
    decoder = connect.EnvelopeDecoder()
    async for chunk in stream.chunks():
        if not stream.headers.get("content-type", "").startswith("application/connect+proto"):
            return f"{stream.status} {stream.headers.get('content-type')}"
        for frame in decoder.feed(chunk):
            if frame.is_end_stream:
                end = connect.parse_end_stream(frame.payload)
                return "ok" if end.ok else f"connect {end.error.code}"
            message = pb.AgentServerMessage.FromString(frame.payload)
            if message.WhichOneof("message") == "exec_server_message":
                await client.reset(stream.stream_id)
                return "reset after exec"
    return "reset by the proxy" if stream.reset else f"ended {stream.status}"


async def storm(port: int, ca_file, token: str, outcomes: collections.Counter) -> None:
    client = await H2Client.connect(port, TEST_HOST, ca_file)
    try:
        for start in range(0, STORM, BATCH):
            count = min(BATCH, STORM - start)
            await asyncio.gather(
                *(reset_after_first_exec(client, token, outcomes) for _ in range(count))
            )
    finally:
        await client.aclose()


@pytest.mark.parametrize("transport", ["bidi", "run"], ids=["runsse", "run"])
async def test_a_reset_storm_locks_out_nobody_else(mitm, workspace, transport) -> None:
    outcomes: collections.Counter = collections.Counter()
    fds = open_fds(mitm.process.pid)
    started = time.monotonic()
    attack = asyncio.ensure_future(storm(mitm.port, mitm.ca_file, "Bearer attacker", outcomes))
    bystander = CursorLikeClient.through(mitm, workspace, transport=transport)
    results = []
    refused = 0  # RunSSE answered with an error status (the Cursor-like client asserts 200)
    try:
        while not attack.done():  # a bystander turn after another, as long as the storm lasts
            try:
                results.append(
                    await bystander.turn(
                        bystander.run_request("read notes.txt", conversation_id=str(uuid.uuid4()))
                    )
                )
            except AssertionError:
                refused += 1
        await attack
    finally:
        attack.cancel()
        await bystander.aclose()
    seconds = time.monotonic() - started
    failed = [r.end.error for r in results if not r.end.ok]
    print(
        f"{STORM} streams in {seconds:.1f} s: {dict(outcomes)}; bystander {len(results)} "
        f"turns, {len(failed) + refused} failed: {collections.Counter(e.code for e in failed)}"
    )
    assert sum(outcomes.values()) == STORM
    not_connect = {k: n for k, n in outcomes.items() if k[0].isdigit()}  # "403 text/plain"
    assert not not_connect, f"refusals that are not Connect errors: {not_connect}"
    assert len(results) >= 2 and not failed and not refused, (failed, refused)
    # issue 33 item 6: at most 8 of one client's turns run at once; the rest of a batch of 90
    # are refused at once (a Connect error), which is as harmless as a reset
    handled = outcomes["reset after exec"] + outcomes["connect resource_exhausted"]
    assert handled >= STORM * 0.9 and outcomes["reset after exec"] > 0, outcomes
    # Every reset stream's loopback hop is closed (mitmproxy_compat.close_sockets_when_told).
    if sys.platform == "linux":
        deadline = time.monotonic() + 10
        while open_fds(mitm.process.pid) > fds + 16 and time.monotonic() < deadline:
            await asyncio.sleep(0.1)
        assert open_fds(mitm.process.pid) <= fds + 16, "loopback hops left open"
    assert FAKE_TOKEN.split()[1] not in mitm.log() and "attacker" not in mitm.log()
    assert "Traceback" not in mitm.log()


async def test_streams_past_the_advertised_limit_are_refused_alone(mitm) -> None:
    """mitmproxy advertises SETTINGS_MAX_CONCURRENT_STREAMS (100): a client that honours it
    queues its 101st `Run`; one that opens 120 anyway gets REFUSED_STREAM for the 20 (safe to
    retry: not processed), and its connection and first 100 streams live on."""
    import h2.settings

    client = await H2Client.connect(mitm.port, TEST_HOST, mitm.ca_file)
    try:
        client.conn.remote_settings = h2.settings.Settings(client=False)  # ignore it
        streams = []
        for _ in range(120):
            rid = str(uuid.uuid4())
            stream = await client.request(
                "/agent.v1.AgentService/Run",
                {
                    ":authority": TEST_HOST,
                    "content-type": "application/connect+proto",
                    "x-request-id": rid,
                    "authorization": FAKE_TOKEN,
                    "te": "trailers",
                },
            )
            first = CursorLikeClient.run_request("hi", conversation_id=rid)
            await stream.send(connect.encode_frame(first.SerializeToString()))
            streams.append(stream)

        async def first_event(stream):
            event = await stream.events.get()
            return type(event).__name__ if event is not None else "connection closed"

        async with asyncio.timeout(30):
            events = collections.Counter(await asyncio.gather(*map(first_event, streams)))
        assert events == {"ResponseReceived": 100, "StreamReset": 20}, events
        assert not client.closed.is_set()
        assert client.conn.remote_settings.max_concurrent_streams == 100  # what it said
    finally:
        await client.aclose()
    assert "HTTP/2 protocol error" not in mitm.log()
