"""mitmweb's UI as a person sees it, in a real headless Chromium (issue 28 item 3).

`cursor-byok run --web` serves a turn on each of Cursor's transports (RunSSE + BidiAppend with
heartbeats while a Read is out, and the HTTP/2 `Run` stream); then Chromium opens mitmweb's page
(its URL with the token, as printed), and the test reads the flow list and clicks through the
flows like a person: every Agent call is listed under Cursor's host (not the loopback server on
127.0.0.1), marked as answered here, heartbeat-only appends are folded into their stream's row,
both directions of `Run` show named `AgentClientMessage` / `AgentServerMessage` trees in the
"Cursor Connect" view, and our internal stream header is not among the request headers.
Skipped where Chromium is absent (.ci/run installs it from the distribution's packages).
"""

from __future__ import annotations

import asyncio
import json
import re
import socket
import sys
import time
import uuid
from pathlib import Path

import pytest
from browser import CHROMIUM
from browser import Chromium
from cursor_client import CursorLikeClient
from mitm import TEST_HOST
from mitm import start_mitmdump

from cursor_byok.wire.bidi import decode_bidi_append

pytestmark = [
    pytest.mark.timeout(180),
    pytest.mark.skipif(
        CHROMIUM is None, reason="Chromium is not installed (apt-get install chromium)"
    ),
]


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _heartbeats(client: CursorLikeClient) -> int:
    count = 0
    for body in client.sent_appends:
        message = decode_bidi_append(body).message
        count += message is not None and message.WhichOneof("message") == "client_heartbeat"
    return count


async def _turn_with_heartbeats(proxy, workspace) -> tuple[int, int]:
    """A RunSSE turn whose Read is held until the client has sent heartbeats; (appends sent,
    heartbeats among them)."""
    gate = asyncio.Event()
    client = CursorLikeClient.through(
        proxy, workspace, transport="bidi", heartbeat_interval=0.05, exec_gate=gate
    )
    try:
        turn = asyncio.create_task(
            client.turn(client.run_request("read notes.txt", conversation_id=str(uuid.uuid4())))
        )
        deadline = time.monotonic() + 20
        while _heartbeats(client) < 3 and time.monotonic() < deadline and not turn.done():
            await asyncio.sleep(0.05)
        gate.set()
        result = await turn
        assert result.end.ok, result.end.error
        return len(client.sent_appends), _heartbeats(client)
    finally:
        gate.set()
        await client.aclose()


async def _run_turn(proxy, workspace) -> None:
    client = CursorLikeClient.through(proxy, workspace, transport="run")
    try:
        result = await client.turn(
            client.run_request("read notes.txt", conversation_id=str(uuid.uuid4()))
        )
        assert result.end.ok, result.end.error
    finally:
        await client.aclose()


ROWS = """[...document.querySelectorAll('tbody tr.has-request')].map(r => ({
    path: r.querySelector('.col-path').innerText.replace(/^\\S*\\s*(?=https?:)/, '').trim(),
    marker: (r.querySelector('.col-path .marker') || {}).innerText || ''
}))"""


def _click_row(suffix: str) -> str:
    return f"""(() => {{
        const rows = [...document.querySelectorAll('tbody tr.has-request')];
        const row = rows.find(r => r.querySelector('.col-path').innerText.trim().endsWith({json.dumps(suffix)}));
        if (!row) return false;
        row.dispatchEvent(new MouseEvent('mousedown', {{bubbles: true}}));
        row.click();
        return true;
    }})()"""  # noqa: E501


def _tab(name: str) -> str:
    return f"""(() => {{
        const tab = [...document.querySelectorAll('.flow-detail nav a')].find(a => a.innerText.trim() === {json.dumps(name)});
        if (!tab) return false;
        tab.click();
        return true;
    }})()"""  # noqa: E501


DETAIL = "(document.querySelector('.flow-detail') || {}).innerText || ''"


async def _detail(browser: Chromium, row: str, tab: str, needle: str) -> str:
    assert await browser.wait_for(_click_row(row), f"the {row} row")
    assert await browser.wait_for(_tab(tab), f"the {tab} tab of {row}")
    text = await browser.wait_for(
        f"(() => {{ const t = {DETAIL}; return t.includes({json.dumps(needle)}) ? t : ''; }})()",
        f"{needle!r} in the {tab} of {row}",
    )
    return str(text)


async def test_mitmweb_shows_both_transports_decoded_in_a_real_browser(tmp_path, workspace) -> None:
    web_port = _free_port()
    command = [
        str(Path(sys.executable).with_name("cursor-byok")),
        "run", "--web", "--port", "0", "--web-port", str(web_port),
        "--agent", "scripted", "--quiet",
        "--confdir", str(tmp_path / "mitmconf"), "--data-dir", str(tmp_path / "data"),
        "--", "--allow-hosts", r"^api2\.cursor\.test:443$",
        "--set", f"cursor_byok_hosts={TEST_HOST}", "--set", "web_open_browser=false",
    ]  # fmt: skip
    proxy = start_mitmdump(tmp_path, command=command)
    browser = Chromium(tmp_path / "chromium-profile")
    try:
        appends, heartbeats = await _turn_with_heartbeats(proxy, workspace)
        assert heartbeats >= 3
        await _run_turn(proxy, workspace)
        token = re.search(r"web server listening at http://127\.0\.0\.1:\d+/\?token=(\w+)",
                          proxy.log(), re.I)  # fmt: skip
        assert token, proxy.log()
        await browser.start()
        await browser.navigate(f"http://127.0.0.1:{web_port}/?token={token[1]}")
        expected_appends = appends - heartbeats

        def listed(rows) -> bool:
            paths = [r["path"] for r in rows]
            appends_listed = sum(p.endswith("/BidiAppend") for p in paths)
            return (
                any(p.endswith("/RunSSE") for p in paths)
                and any(p.endswith("/Run") for p in paths)
                and appends_listed == expected_appends
            )

        rows = await browser.wait_for(
            f"(() => {{ const rows = {ROWS}; return rows.length > 0 && rows; }})()",
            "the flow list",
        )
        deadline = time.monotonic() + 20
        while not listed(rows) and time.monotonic() < deadline:  # folding happens as they end
            await asyncio.sleep(0.1)
            rows = await browser.eval(ROWS)
        await browser.screenshot(tmp_path / "flow-list.png")
        assert listed(rows), rows  # heartbeat-only appends folded away
        for row in rows:
            assert row["path"].startswith(f"https://{TEST_HOST}/"), row  # not 127.0.0.1:<port>
            assert row["marker"] == "🏠", row  # answered here

        # The HTTP/2 Run stream: both directions decoded with names.
        request = await _detail(browser, "/Run", "Request", "agent.v1.AgentClientMessage")
        assert "Cursor Connect" in request and "run_request" in request
        assert "x-cursor-byok-stream" not in request.lower()  # our internal header is hidden
        assert "127.0.0.1" not in request.splitlines()[0]
        response = await _detail(browser, "/Run", "Response", "agent.v1.AgentServerMessage")
        assert "text_delta" in response and "end-stream" in response

        # RunSSE: its stream decoded, its folded heartbeats said on its row.
        sse = await _detail(browser, "/RunSSE", "Response", "agent.v1.AgentServerMessage")
        assert "Cursor Connect" in sse and "text_delta" in sse
        comment = await _detail(browser, "/RunSSE", "Comment", "heartbeat append")
        assert f"{heartbeats} heartbeat append(s) folded" in comment
        upload = await _detail(browser, "/BidiAppend", "Request", "agent.v1.AgentClientMessage")
        assert "BidiAppend request_id=" in upload
    finally:
        await browser.close()
        proxy.stop()
