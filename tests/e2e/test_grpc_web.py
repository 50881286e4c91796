"""Clients that speak gRPC-Web get gRPC-Web back, so their errors are visible to them."""

from __future__ import annotations

import uuid

import httpx
import pytest
from cursor_client import CursorLikeClient
from cursor_client import ssl_context
from mitm import TEST_HOST
from mitm import start_mitmdump

pytestmark = pytest.mark.timeout(90)


async def test_a_turn_through_a_grpc_web_client(mitm, workspace) -> None:
    client = CursorLikeClient.through(mitm, workspace, grpc_web=True)
    try:
        result = await client.turn(client.run_request("read notes.txt", conversation_id="gw"))
    finally:
        await client.aclose()
    assert result.end.ok, result.end.error
    assert "alpha" in result.text and client.exec_log


async def test_an_error_turn_shows_in_the_grpc_web_trailer(tmp_path, workspace) -> None:
    proxy = start_mitmdump(tmp_path / "p", agent="provider", config=tmp_path / "missing.toml")
    client = CursorLikeClient.through(proxy, workspace, grpc_web=True)
    try:
        result = await client.turn(client.run_request("hi", conversation_id=str(uuid.uuid4())))
    finally:
        await client.aclose()
        proxy.stop()
    assert result.end.error is not None
    assert result.end.error.code == "failed_precondition"  # grpc-status 9
    assert "missing.toml" in result.end.error.message


async def test_unknown_content_types_get_a_clear_error(mitm) -> None:
    async with httpx.AsyncClient(
        proxy=mitm.proxy_url, verify=ssl_context(mitm.ca_file, False), trust_env=False
    ) as http:
        response = await http.post(
            f"https://{TEST_HOST}/agent.v1.AgentService/RunSSE",
            content=b"{}",
            headers={"content-type": "application/json"},
        )
    assert response.status_code == 400
    assert "unsupported content type 'application/json'" in response.json()["message"]
