"""RunPoll, the third transport (HTTP Compatibility Mode: HTTP/1.0), end to end through a real
mitmdump: turns served from the same run core as RunSSE and `Run`, and the bad input of polls."""

from __future__ import annotations

import uuid

import httpx
import pytest
from cursor_client import FAKE_TOKEN
from cursor_client import CursorLikeClient
from cursor_client import ssl_context
from fakes.fake_provider import FakeProvider
from mitm import TEST_HOST
from mitm import start_mitmdump
from provider_config import MODEL
from provider_config import write_config

from cursor_byok.pb import aiserver_v1_pb2 as aipb
from cursor_byok.wire import connect
from cursor_byok.wire.bidi import encode_run_poll_request

pytestmark = pytest.mark.timeout(120)
RUN_POLL = "/agent.v1.AgentService/RunPoll"


@pytest.mark.parametrize("data", ["hex", "base64"])
async def test_runpoll_turn_with_a_tool_and_kv(tmp_path, workspace, data) -> None:
    """The scripted agent reads a file through the client (an exec) and stores the turn's blobs
    (KV SETs, acknowledged), all of it read by polls; seqnos count every response from 0."""
    proxy = start_mitmdump(
        tmp_path / "proxy",
        "--set",
        "cursor_byok_heartbeat_ms=300",
        "--set",
        f"cursor_byok_poll_data={data}",
    )
    client = CursorLikeClient.through(proxy, workspace, transport="poll", poll_data=data)
    try:
        first = client.run_request("please look at README.md", conversation_id=str(uuid.uuid4()))
        result = await client.turn(first)
    finally:
        await client.aclose()
        proxy.stop()
    assert result.end.ok, result.end.error
    kinds = result.kinds()
    assert kinds.index("exec:read_args") < kinds.index("tool_call_completed")
    assert "kv:set_blob_args" in kinds and "conversation_checkpoint_update" in kinds
    assert "# Demo project" in result.text
    assert result.polls > 2
    assert result.poll_seqnos == list(range(len(result.poll_seqnos)))  # no gap, no repeat
    final = result.checkpoints[-1]
    for ident in list(final.root_prompt_messages_json) + list(final.turns):
        assert ident in client.blobs  # every blob it refers to was SET and acknowledged
    assert "Traceback" not in proxy.log()


async def test_runpoll_provider_turn_and_a_second_turn(tmp_path, workspace) -> None:
    """The provider agent over RunPoll: a Read round trip, then a second turn from the
    checkpoint (its history blobs come back from our store, no KV GET)."""
    async with FakeProvider() as fp:
        fp.script.tool_calls([("call_read", "Read", {"path": str(workspace / "notes.txt")})])
        fp.script.text("notes has alpha and beta")
        fp.script.text("second answer")
        proxy = start_mitmdump(
            tmp_path / "proxy",
            agent="provider",
            config=write_config(tmp_path, fp, "openai-chat"),
            env={"FAKE_PROVIDER_KEY": "sk-test"},
        )
        client = CursorLikeClient.through(proxy, workspace, transport="poll")
        try:
            conversation = str(uuid.uuid4())
            one = await client.turn(
                client.run_request("read notes", conversation_id=conversation, model=MODEL)
            )
            two = await client.turn(
                client.run_request(
                    "again", conversation_id=conversation, model=MODEL, state=one.checkpoints[-1]
                )
            )
        finally:
            await client.aclose()
            proxy.stop()
        requests = list(fp.requests)
    assert one.end.ok and two.end.ok, (one.end, two.end)
    assert one.text == "notes has alpha and beta" and two.text == "second answer"
    tool = [m for m in requests[1].json["messages"] if m["role"] == "tool"]
    assert "alpha" in tool[0]["content"]
    assert "kv:get_blob_args" not in two.kinds()
    assert "alpha" in str(requests[2].json["messages"])  # the history came back


def poll_client(proxy) -> httpx.AsyncClient:
    return httpx.AsyncClient(
        proxy=proxy.proxy_url,
        verify=ssl_context(proxy.ca_file, False),
        trust_env=False,
        timeout=30,
    )


async def poll(http, request_id: str, *, token: str = FAKE_TOKEN, body: bytes | None = None):
    """One raw RunPoll: (BidiPollResponses, the end-stream)."""
    response = await http.post(
        f"https://{TEST_HOST}{RUN_POLL}",
        content=body
        if body is not None
        else connect.encode_frame(encode_run_poll_request(request_id, start=True)),
        headers={
            "content-type": "application/connect+proto",
            "connect-protocol-version": "1",
            "authorization": token,
        },
    )
    assert response.status_code == 200, response.text
    frames = connect.decode_envelopes(response.content)
    assert frames[-1].is_end_stream
    polls = [aipb.BidiPollResponse.FromString(f.payload) for f in frames[:-1]]
    return polls, connect.parse_end_stream(frames[-1].payload)


async def test_runpoll_bad_input(tmp_path, workspace) -> None:
    """An unknown request id: `not_found` at once, and again on a later poll, for any client
    (issue 33 item 5: a poll for an id that names no run makes nothing, so polls for made-up ids
    cannot fill the bound; before, each waited out the run-request time-out with heartbeats);
    a body that is not a BidiPollRequest: `invalid_argument` (a poll superseded by a newer one:
    tests/proxy/test_poll_cursors.py). The proxy keeps serving runs."""
    proxy = start_mitmdump(
        tmp_path / "proxy",
        "--set",
        "cursor_byok_heartbeat_ms=300",
        "--set",
        "cursor_byok_run_request_timeout_ms=1500",
    )
    try:
        async with poll_client(proxy) as http:
            unknown = str(uuid.uuid4())
            polls, end = await poll(http, unknown)
            assert polls == [] and end is not None and end.error is not None
            assert end.error.code == "not_found" and "BidiAppend first" in end.error.message
            again, end_again = await poll(http, unknown)
            assert again == [] and end_again.error is not None
            assert end_again.error.code == "not_found"
            _, foreign = await poll(http, unknown, token="Bearer someone-else")
            assert foreign.error is not None and foreign.error.code == "not_found"
            # not a BidiPollRequest
            _, bad = await poll(http, "x", body=connect.encode_frame(b"\xff\xff\xff"))
            assert bad.error is not None and bad.error.code == "invalid_argument"
        client = CursorLikeClient.through(proxy, workspace, transport="poll")
        try:
            result = await client.turn(
                client.run_request("read notes.txt", conversation_id=str(uuid.uuid4()))
            )
        finally:
            await client.aclose()
        assert result.end.ok and "alpha" in result.text
    finally:
        proxy.stop()
    assert "Traceback" not in proxy.log()
