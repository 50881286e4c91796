"""`cursor-byok run --web`: mitmweb with the addon; a turn shows up in mitmweb's flow list (its
HTTP API) and the Connect bodies (BidiAppend upload, the synthesised RunSSE stream) decode."""

from __future__ import annotations

import re
import socket
import sys
import uuid
from pathlib import Path

import httpx
import pytest
from cursor_client import CursorLikeClient
from mitm import TEST_HOST
from mitm import start_mitmdump

pytestmark = pytest.mark.timeout(120)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


async def test_run_web_shows_the_turn_decoded(tmp_path, workspace) -> None:
    web_port = free_port()
    command = [
        str(Path(sys.executable).with_name("cursor-byok")),
        "run", "--web", "--port", "0", "--agent", "scripted", "--quiet",
        "--confdir", str(tmp_path / "mitmconf"), "--data-dir", str(tmp_path / "data"),
        "--", "--allow-hosts", r"^api2\.cursor\.test:443$",
        "--set", f"cursor_byok_hosts={TEST_HOST}",
        "--set", f"web_port={web_port}", "--set", "web_open_browser=false",
    ]  # fmt: skip
    proxy = start_mitmdump(tmp_path, command=command)
    client = CursorLikeClient.through(proxy, workspace)
    try:
        result = await client.turn(
            client.run_request("read notes.txt", conversation_id=str(uuid.uuid4()))
        )
        assert result.end.ok
        token = re.search(r"\?token=([0-9a-f]+)", proxy.log())
        assert token, proxy.log()
        async with httpx.AsyncClient(
            base_url=f"http://127.0.0.1:{web_port}",
            headers={"Authorization": f"Bearer {token[1]}"},
            trust_env=False,
        ) as web:
            flows = (await web.get("/flows")).json()
            by_path = {}
            for flow in flows:
                by_path.setdefault(flow["request"]["path"].rsplit("/", 1)[-1], []).append(flow)
            assert "RunSSE" in by_path and "BidiAppend" in by_path, [*by_path]
            run_sse = by_path["RunSSE"][0]
            view = (await web.get(f"/flows/{run_sse['id']}/response/content/auto.json")).json()
            append = by_path["BidiAppend"][0]
            upload = (await web.get(f"/flows/{append['id']}/request/content/auto.json")).json()
    finally:
        await client.aclose()
        proxy.stop()
    assert view["view_name"] == "Cursor Connect", view
    assert "agent.v1.AgentServerMessage" in view["text"]
    assert "text_delta" in view["text"] and "end-stream" in view["text"]
    assert upload["view_name"] == "Cursor Connect"
    assert "BidiAppend" in upload["text"] and "agent.v1.AgentClientMessage" in upload["text"]


async def test_run_web_on_mitmwebs_own_port_picks_another_ui_port(tmp_path, workspace) -> None:
    """`run --web --port 8081` (the README's service example uses 8081, mitmweb's UI default):
    the UI moves to a free port, which the banner prints, and the proxy serves on 8081."""
    with socket.socket() as probe:
        try:
            probe.bind(("127.0.0.1", 8081))
        except OSError:
            pytest.skip("127.0.0.1:8081 is taken on this machine")
    command = [
        str(Path(sys.executable).with_name("cursor-byok")),
        "run", "--web", "--port", "8081", "--agent", "scripted", "--quiet",
        "--confdir", str(tmp_path / "mitmconf"), "--data-dir", str(tmp_path / "data"),
        "--", "--allow-hosts", r"^api2\.cursor\.test:443$",
        "--set", f"cursor_byok_hosts={TEST_HOST}", "--set", "web_open_browser=false",
    ]  # fmt: skip
    proxy = start_mitmdump(tmp_path, command=command)
    client = CursorLikeClient.through(proxy, workspace)
    try:
        assert proxy.port == 8081
        result = await client.turn(
            client.run_request("read notes.txt", conversation_id=str(uuid.uuid4()))
        )
        assert result.end.ok
        shown = re.search(r"the flow list is at http://127\.0\.0\.1:(\d+)/", proxy.log())
        assert shown, proxy.log()
        ui_port = int(shown[1])
        assert ui_port != 8081
        token = re.search(r"\?token=([0-9a-f]+)", proxy.log())
        assert token, proxy.log()
        async with httpx.AsyncClient(trust_env=False) as web:
            flows = await web.get(
                f"http://127.0.0.1:{ui_port}/flows",
                headers={"Authorization": f"Bearer {token[1]}"},
            )
        assert flows.status_code == 200 and flows.json()
    finally:
        await client.aclose()
        proxy.stop()
    assert "Traceback" not in proxy.log()
