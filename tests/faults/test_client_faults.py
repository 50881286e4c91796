"""A client that misbehaves: never acknowledges, never answers, leaves gaps, impersonates."""

from __future__ import annotations

import asyncio
import uuid

import httpx
import pytest
from cursor_client import BIDI_APPEND
from cursor_client import RUN_SSE
from cursor_client import CursorLikeClient
from cursor_client import ssl_context
from mitm import TEST_HOST
from mitm import start_mitmdump

from cursor_byok.pb import agent_v1_pb2 as pb
from cursor_byok.wire import connect
from cursor_byok.wire.bidi import encode_bidi_append
from cursor_byok.wire.bidi import encode_run_sse_request

pytestmark = pytest.mark.timeout(90)


async def test_client_that_never_acknowledges_blobs_gets_an_error_naming_them(
    tmp_path, workspace
) -> None:
    proxy = start_mitmdump(tmp_path, "--set", "cursor_byok_ack_timeout_ms=1500")
    client = CursorLikeClient.through(proxy, workspace, answer_kv=False, heartbeat_interval=0.2)
    try:
        result = await client.turn(client.run_request("read notes.txt", conversation_id="ack"))
    finally:
        await client.aclose()
        proxy.stop()
    error = result.end.error
    assert error is not None and error.code == "deadline_exceeded"
    assert "did not acknowledge stored blobs" in error.message
    assert "kv 1 (set_blob_args" in error.message
    assert "turn_ended" not in result.kinds()


async def test_exec_never_answered_fails_with_what_is_missing(tmp_path, workspace) -> None:
    proxy = start_mitmdump(tmp_path, "--set", "cursor_byok_exec_timeout_ms=800")
    client = CursorLikeClient.through(proxy, workspace, answer_execs=False)
    try:
        result = await client.turn(client.run_request("read notes.txt", conversation_id="exec"))
    finally:
        await client.aclose()
        proxy.stop()
    error = result.end.error
    assert error is not None and error.code == "deadline_exceeded", error
    assert "exec 1 (read_args" in error.message


async def test_a_seqno_gap_that_never_fills_fails_the_run(tmp_path, workspace) -> None:
    proxy = start_mitmdump(tmp_path, "--set", "cursor_byok_gap_timeout_ms=800")
    client = CursorLikeClient.through(proxy, workspace, heartbeat_interval=0.1)

    lost: list[int] = []

    def lose_one_upload(run) -> None:
        original = run.append

        async def append(message):
            if run.seqno > 0 and not lost and message.WhichOneof("message") != "run_request":
                lost.append(run.seqno)  # this upload is "lost in transit"
                run.seqno += 1
            await original(message)

        run.append = append

    try:
        result = await client.turn(
            client.run_request("read notes.txt", conversation_id="gap"), during=lose_one_upload
        )
    finally:
        await client.aclose()
        proxy.stop()
    assert result.end.error is not None
    assert f"append_seqno {lost[0]} never arrived" in result.end.error.message


async def test_another_client_can_neither_read_nor_write_a_run(mitm, workspace) -> None:
    victim = CursorLikeClient.through(mitm, workspace, answer_execs=False)
    request_id = str(uuid.uuid4())
    turn = asyncio.ensure_future(
        victim.turn(
            victim.run_request("read notes.txt", conversation_id="v"), request_id=request_id
        )
    )
    try:
        while not victim.exec_log:
            await asyncio.sleep(0.02)
        async with httpx.AsyncClient(
            proxy=mitm.proxy_url, verify=ssl_context(mitm.ca_file, False), trust_env=False
        ) as http:
            headers = {"authorization": "Bearer someone-else", "content-type": "application/proto"}
            injected = pb.AgentClientMessage()
            injected.exec_client_message.id = victim.exec_log[0].id
            injected.exec_client_message.read_result.success.content = "injected"
            post = await http.post(
                f"https://{TEST_HOST}{BIDI_APPEND}",
                content=encode_bidi_append(request_id, 50, injected.SerializeToString()),
                headers=headers,
            )
            read = await http.post(
                f"https://{TEST_HOST}{RUN_SSE}",
                content=connect.encode_frame(encode_run_sse_request(request_id)),
                headers={**headers, "content-type": "application/connect+proto"},
            )
    finally:
        turn.cancel()
        await victim.aclose()
    assert post.status_code == 403 and post.json()["code"] == "permission_denied"
    assert read.status_code == 403 and read.json()["code"] == "permission_denied"
    assert "someone-else" not in mitm.log() and "eyJfake" not in mitm.log()


@pytest.mark.parametrize(
    "request_id",
    ["a\r\nforged log line", "nul\x00id", "x" * 70_000, " spaced ", "ümlaut"],
    ids=["crlf", "nul", "huge", "spaces", "non-ascii"],
)
async def test_bad_request_ids_get_connect_errors(mitm, request_id) -> None:
    async with httpx.AsyncClient(
        proxy=mitm.proxy_url, verify=ssl_context(mitm.ca_file, False), trust_env=False
    ) as http:
        append = await http.post(
            f"https://{TEST_HOST}{BIDI_APPEND}",
            content=encode_bidi_append(request_id, 0, b""),
            headers={"content-type": "application/proto"},
        )
        stream = await http.post(
            f"https://{TEST_HOST}{RUN_SSE}",
            content=connect.encode_frame(encode_run_sse_request(request_id)),
            headers={"content-type": "application/connect+proto"},
        )
    for response in (append, stream):
        assert response.status_code == 400, response.text
        assert response.json()["code"] == "invalid_argument"
    assert "forged log line" not in mitm.log()
