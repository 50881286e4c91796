"""Issue 27 item 10: a run started without an Authorization header is bound to the client
connection that started it, so another credential-less client that knows its request id can
neither read it nor inject results into it; a reconnect on the same connection still works."""

from __future__ import annotations

import asyncio
import uuid

import httpx
import pytest
from cursor_client import BIDI_APPEND
from cursor_client import RUN_SSE
from cursor_client import CursorLikeClient
from cursor_client import CursorTurn
from cursor_client import ssl_context
from mitm import TEST_HOST

from cursor_byok.pb import agent_v1_pb2 as pb
from cursor_byok.protocol import connect
from cursor_byok.protocol.bidi import encode_bidi_append
from cursor_byok.protocol.bidi import encode_run_sse_request

pytestmark = pytest.mark.timeout(90)


@pytest.fixture
def no_credential(monkeypatch):
    """The Cursor-like client, minus its Authorization header (an SDK script, a test tool)."""
    headers = CursorTurn.headers

    def without(self, content_type: str) -> dict[str, str]:
        sent = headers(self, content_type)
        sent.pop("authorization")
        return sent

    monkeypatch.setattr(CursorTurn, "headers", without)


async def test_a_credentialless_run_is_its_connections_alone(mitm, workspace, no_credential):
    victim = CursorLikeClient.through(mitm, workspace, transport="run", answer_execs=False)
    request_id = str(uuid.uuid4())
    turn = asyncio.ensure_future(
        victim.turn(
            victim.run_request("read notes.txt", conversation_id="v"), request_id=request_id
        )
    )
    try:
        async with asyncio.timeout(20):
            while not victim.exec_log:
                await asyncio.sleep(0.02)
        async with httpx.AsyncClient(  # another client, on connections of its own
            proxy=mitm.proxy_url, verify=ssl_context(mitm.ca_file, False), trust_env=False
        ) as http:
            injected = pb.AgentClientMessage()
            injected.exec_client_message.id = victim.exec_log[0].id
            injected.exec_client_message.read_result.success.content = "injected"
            post = await http.post(
                f"https://{TEST_HOST}{BIDI_APPEND}",
                content=encode_bidi_append(request_id, 0, injected.SerializeToString()),
                headers={"content-type": "application/proto"},
            )
            read = await http.post(
                f"https://{TEST_HOST}{RUN_SSE}",
                content=connect.encode_frame(encode_run_sse_request(request_id)),
                headers={"content-type": "application/connect+proto"},
            )
            # a reconnect as Cursor makes one: the same run request (its run id) under a new
            # request id
            attach = CursorLikeClient.run_request("read notes.txt", conversation_id="v")
            attach.run_request.run_id = request_id
            other_id = str(uuid.uuid4())
            await http.post(
                f"https://{TEST_HOST}{BIDI_APPEND}",
                content=encode_bidi_append(other_id, 0, attach.SerializeToString()),
                headers={"content-type": "application/proto"},
            )
            attached = await http.post(
                f"https://{TEST_HOST}{RUN_SSE}",
                content=connect.encode_frame(encode_run_sse_request(other_id)),
                headers={"content-type": "application/connect+proto"},
            )
    finally:
        turn.cancel()
        await victim.aclose()
    print(f"injection: HTTP {post.status_code} {post.text[:80]}; read: HTTP {read.status_code}")
    assert post.status_code == 403 and post.json()["code"] == "permission_denied"
    assert read.status_code == 403 and read.json()["code"] == "permission_denied"
    assert "its connection if none" in post.json()["message"]  # says what binds a run
    assert b"permission_denied" in attached.content and b"alpha" not in attached.content


async def test_a_credentialless_client_reconnects_on_its_connection(mitm, workspace, no_credential):
    """A `Run` stream reset and reopened on the same HTTP/2 connection carries the run on."""
    client = CursorLikeClient.through(mitm, workspace, transport="run", drop_after=[2])
    try:
        result = await client.turn(
            client.run_request("read notes.txt", conversation_id=str(uuid.uuid4()))
        )
    finally:
        await client.aclose()
    assert result.reconnects == 1
    assert result.end.ok and "alpha" in result.text
