"""Blob persistence across proxy restarts, KV GET and its verification, bad bodies, pass-through."""

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

from cursor_byok.wire import connect

pytestmark = pytest.mark.timeout(120)


def client_for(proxy, workspace, **kwargs) -> CursorLikeClient:
    return CursorLikeClient.through(proxy, workspace, **kwargs)


async def _two_turns(tmp_path, workspace, *, same_data_dir: bool, tamper: bool = False):
    first = start_mitmdump(tmp_path / "first")
    client = client_for(first, workspace)
    try:
        conversation = str(uuid.uuid4())
        one = await client.turn(client.run_request("read notes.txt", conversation_id=conversation))
    finally:
        first.stop()
    second = start_mitmdump(tmp_path / "second", data_dir=first.data_dir if same_data_dir else None)
    if tamper:
        for ident in client.blobs:
            client.blobs[ident] = b'{"role":"user","content":"forged"}'
    try:
        client.ca_file = second.ca_file
        client.proxy = second.proxy_url
        client.__post_init__()
        two = await client.turn(
            client.run_request("README.md", conversation_id=conversation, state=one.checkpoints[-1])
        )
    finally:
        await client.aclose()
        second.stop()
    return one, two


async def test_restart_with_same_data_dir_needs_no_kv_get(tmp_path, workspace) -> None:
    _, two = await _two_turns(tmp_path, workspace, same_data_dir=True)
    assert two.end.ok
    assert "kv:get_blob_args" not in two.kinds()
    assert "message 2 of the chat" in "".join(u.text for u in two.updates("thinking_delta"))


async def test_lost_blobs_are_fetched_from_the_client_by_kv_get(tmp_path, workspace) -> None:
    one, two = await _two_turns(tmp_path, workspace, same_data_dir=False)
    assert two.end.ok, two.end.error
    gets = [k for k in two.kinds() if k == "kv:get_blob_args"]
    assert len(gets) == len(one.checkpoints[-1].root_prompt_messages_json)
    assert "message 2 of the chat" in "".join(u.text for u in two.updates("thinking_delta"))


async def test_kv_get_result_with_wrong_hash_is_invalid_argument(tmp_path, workspace) -> None:
    _, two = await _two_turns(tmp_path, workspace, same_data_dir=False, tamper=True)
    assert two.end.error is not None
    assert two.end.error.code == "invalid_argument"
    assert "hashing" in two.end.error.message


async def test_bad_bodies_get_connect_errors_not_tracebacks(mitm) -> None:
    async with httpx.AsyncClient(
        proxy=mitm.proxy_url, verify=ssl_context(mitm.ca_file, False)
    ) as http:
        bad_hex = b"\x0a\x03xyz\x12\x05\x0a\x03abc"  # data="xyz", request_id="abc"
        response = await http.post(
            f"https://{TEST_HOST}{BIDI_APPEND}",
            content=bad_hex,
            headers={"content-type": "application/proto"},
        )
        assert response.status_code == 400
        assert response.json()["code"] == "invalid_argument"
        assert "hex" in response.json()["message"]
        no_id = await http.post(
            f"https://{TEST_HOST}{BIDI_APPEND}",
            content=b"\x0a\x043a00",
            headers={"content-type": "application/proto"},
        )
        assert no_id.status_code == 400
        assert "request_id" in no_id.json()["message"]
        truncated = await http.post(
            f"https://{TEST_HOST}{RUN_SSE}",
            content=connect.encode_frame(b"\x0a\x20abc"),
            headers={"content-type": "application/connect+proto"},
        )
        assert truncated.status_code == 400
    assert "Traceback" not in mitm.log()


async def _upstream_stub() -> tuple[asyncio.Server, int, list[bytes]]:
    seen: list[bytes] = []

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        head = await reader.readuntil(b"\r\n\r\n")
        seen.append(head)
        body = b"upstream says hi"
        writer.write(b"HTTP/1.1 200 OK\r\ncontent-length: %d\r\n\r\n%s" % (len(body), body))
        await writer.drain()
        writer.close()

    server = await asyncio.start_server(handle, "127.0.0.1", 0)
    return server, server.sockets[0].getsockname()[1], seen


async def test_other_requests_pass_through_untouched(mitm) -> None:
    server, port, seen = await _upstream_stub()
    try:
        async with httpx.AsyncClient(proxy=mitm.proxy_url) as http:
            response = await http.get(
                f"http://127.0.0.1:{port}/aiserver.v1.DashboardService/GetTeams",
                headers={"x-probe": "1"},
            )
    finally:
        server.close()
    assert response.text == "upstream says hi"
    assert b"GET /aiserver.v1.DashboardService/GetTeams" in seen[0]
    assert b"x-probe: 1" in seen[0]


async def test_reverse_mode_serves_agent_and_passes_the_rest(tmp_path, workspace) -> None:
    server, port, seen = await _upstream_stub()
    proxy = start_mitmdump(tmp_path / "rev", mode=f"reverse:http://127.0.0.1:{port}")
    client = CursorLikeClient(base_url=proxy.proxy_url, workspace=workspace)
    try:
        result = await client.turn(
            client.run_request("read notes.txt", conversation_id=str(uuid.uuid4()))
        )
        other = await client.http.get(proxy.proxy_url + "/aiserver.v1.AiService/GetServerConfig")
    finally:
        await client.aclose()
        proxy.stop()
        server.close()
    assert result.end.ok
    assert "alpha" in result.text
    assert other.text == "upstream says hi"
    assert len(seen) == 1  # only the pass-through request reached the upstream
