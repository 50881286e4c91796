"""The live status in a real terminal (issue 28 item 2): `cursor-byok run` inside tmux at 80 and
120 columns, a turn from the Cursor-like client against the fake provider, the screen read
with `tmux capture-pane`.

What a person would see: one table, under the log (mitmproxy's connect lines and our per-turn
line print above it, never through it); no line wider than the terminal; `route`, `state`, `in`,
`out`, `tok/s` and `tool` in full (the model name is what gets shortened); the running tool
while a Read is out on the client; and after the turn, its final rate, not a falling one; then a
Cmd-K call as a row of its own in the same table (issue 34).
"""

from __future__ import annotations

import asyncio
import os
import re
import sys
import time
import uuid
from pathlib import Path

import pytest
from cursor_client import FAKE_TOKEN
from cursor_client import CursorLikeClient
from fakes.fake_provider import FakeProvider
from mitm import TEST_HOST
from provider_config import MODEL
from provider_config import write_config
from tmux_pane import TMUX
from tmux_pane import Pane
from tmux_pane import free_port

from cursor_byok.pb import aiserver_features_pb2 as fpb
from cursor_byok.wire import connect

CMD_K = "/aiserver.v1.CmdKService/StreamCmdK"
CMD_K_HEADERS = {
    "content-type": "application/connect+proto",
    "connect-protocol-version": "1",
    "authorization": FAKE_TOKEN,
}
pytestmark = [
    pytest.mark.timeout(120),
    pytest.mark.skipif(TMUX is None, reason="tmux is not installed (apt-get install tmux)"),
]
MODEL_NAME = "Fake Model With A Rather Long Name (BYOK)"


def cmd_k_body() -> bytes:
    """A Cmd-K edit of line 1 of a one-line file, as one Connect envelope."""
    C = fpb.ContextItem
    request = fpb.StreamCmdKRequest(session_id=str(uuid.uuid4()))
    request.context_items.add(context_item=C(cmd_k_query=C.CmdKQuery(query="double it")))
    request.context_items.add(
        context_item=C(cmd_k_selection=C.CmdKSelection(lines=["y = 1"], start_line_number=1))
    )
    return connect.encode_frame(request.SerializeToString())


def _table(screen: str) -> tuple[int, int, list[str]]:
    """(first line, last line, lines) of the one status table on the screen."""
    lines = screen.splitlines()
    tops = [i for i, line in enumerate(lines) if line.lstrip().startswith("┏")]
    assert len(tops) == 1, f"expected one table, found {len(tops)}:\n{screen}"
    top = tops[0]
    bottom = next(i for i in range(top, len(lines)) if lines[i].lstrip().startswith("└"))
    return top, bottom, lines


def _header(lines: list[str], top: int) -> list[str]:
    return [cell.strip() for cell in lines[top + 1].strip()[1:-1].split("┃")]


def _row(lines: list[str], top: int, bottom: int, needle: str) -> dict[str, str] | None:
    header = _header(lines, top)
    for line in lines[top + 3 : bottom]:
        cells = [cell.strip() for cell in line.strip()[1:-1].split("│")]  # empty cells too
        if len(cells) == len(header) and needle in line:
            return dict(zip(header, cells, strict=True))
    return None


def _check_layout(screen: str, width: int) -> tuple[int, int, list[str]]:
    top, bottom, lines = _table(screen)
    assert all(len(line.rstrip()) <= width for line in lines[top - 1 : bottom + 1]), screen
    header = _header(lines, top)
    for column in ("model", "route", "state", "in", "out", "tok/s", "tool"):
        assert column in header, (column, screen)
    assert not any("…" in cell for cell in header), screen
    # nothing prints through or under the live region (the table and its caption, the census
    # lines of store/census.py): the log is above it
    end = bottom + 1
    while end < len(lines) and lines[end].startswith(CAPTION_LINES):
        assert len(lines[end].rstrip()) <= width, screen
        end += 1
    assert all(not line.strip() for line in lines[end:]), screen
    return top, bottom, lines


# How the census lines under the table begin (store/census.py: census_lines); a log line begins
# with its time stamp.
CAPTION_LINES = (
    "Privacy (",
    "Editor features:",
    "Cursor RPCs:",
    "Agent calls by transport:",
    "Not modelled",
    "Unresolved:",
    "  ",
)


@pytest.mark.parametrize("width", [80, 120])
async def test_live_status_in_a_real_terminal(tmp_path, workspace, width) -> None:
    port = free_port()
    confdir = tmp_path / "mitmconf"
    notes = str(workspace / "notes.txt")
    async with FakeProvider() as fp:
        fp.script.tool_calls([("call_read", "Read", {"path": notes})])
        fp.script.text("notes.txt starts with alpha. " * 20)
        config = write_config(tmp_path, fp, "openai-chat")
        config.write_text(
            config.read_text().replace(f'name = "{MODEL}"', f'name = "{MODEL_NAME}"')
            .replace(f'default_model = "{MODEL}"', f'default_model = "{MODEL_NAME}"')
        )  # fmt: skip
        command = [
            str(Path(sys.executable).with_name("cursor-byok")),
            "run", "--port", str(port), "--config", str(config),
            "--confdir", str(confdir), "--data-dir", str(tmp_path / "data"),
            "--", "--allow-hosts", r"^api2\.cursor\.test:443$",
            "--set", f"cursor_byok_hosts={TEST_HOST}",
        ]  # fmt: skip
        env = {
            "FAKE_PROVIDER_KEY": "sk-test-not-a-real-key",
            "PATH": os.environ.get("PATH", ""),
            "HOME": str(tmp_path),
            "TERM": "xterm-256color",
        }
        pane = Pane(tmp_path, width)
        pane.start(command, env)
        gate = asyncio.Event()
        client: CursorLikeClient | None = None
        turn: asyncio.Task | None = None
        try:
            await pane.wait_for(lambda s: "cursor-byok ready" in s, "the proxy start")
            client = CursorLikeClient(
                base_url=f"https://{TEST_HOST}",
                workspace=workspace,
                proxy=f"http://127.0.0.1:{port}",
                ca_file=confdir / "mitmproxy-ca-cert.pem",  # made by the proxy at start
                exec_gate=gate,
            )
            message = client.run_request(
                "read notes.txt", conversation_id=str(uuid.uuid4()), model=MODEL_NAME,
                workspace=workspace,
            )  # fmt: skip
            turn = asyncio.create_task(client.turn(message))

            def reading(screen: str) -> bool:
                if screen.count("┏") != 1:
                    return False
                top, bottom, lines = _table(screen)
                row = _row(lines, top, bottom, "local")
                # The model call's usage may land a refresh after the tool shows (the call's
                # last event comes after its tool call): wait for both, the exec is held.
                return row is not None and row.get("tool") == "Read" and row.get("in") == "100"

            screen = await pane.wait_for(reading, "the Read in the tool column and 100 tokens in")
            top, bottom, lines = _check_layout(screen, width)
            row = _row(lines, top, bottom, "local")
            assert row is not None and row["route"] == "local" and row["in"] == "100"
            assert row["model"].startswith("Fake Model")  # shortened at 80, whole at 120
            gate.set()
            result = await turn
            assert result.end.ok, result.end.error

            def finished(screen: str) -> bool:
                return screen.count("┏") == 1 and re.search(r"│ ok\s+│", screen) is not None

            screen = await pane.wait_for(finished, "the finished turn")
            top, bottom, lines = _check_layout(screen, width)
            above = "\n".join(lines[:top])
            assert re.search(r"turn \S+\s+conversation\s+\S+:\s+ok in", above), screen
            assert "client connect" in above or "client disconnect" in above
            final = _row(lines, top, bottom, "local")
            assert final is not None and float(final["tok/s"]) > 0
            # Five refreshes later (2 per second) the finished turn still shows its final rate.
            later = time.monotonic() + 2.5
            screen = await pane.wait_for(
                lambda s: time.monotonic() >= later and s.count("┏") == 1, "later refreshes"
            )
            top, bottom, lines = _check_layout(screen, width)
            again = _row(lines, top, bottom, "local")
            assert again is not None and again["tok/s"] == final["tok/s"], screen
            # A Cmd-K call (issue 34): a row of its own in the same table, with its kind, its
            # calls, its tokens and the last call's latency.
            fp.script.text("y = 2\n")
            answer = await client.http.post(
                client.base_url + CMD_K, content=cmd_k_body(), headers=CMD_K_HEADERS
            )
            assert answer.status_code == 200

            def feature_row(screen: str) -> bool:
                if screen.count("┏") != 1:
                    return False
                top, bottom, lines = _table(screen)
                row = _row(lines, top, bottom, "cmd_k: ")
                return row is not None and row["state"].startswith("last ")

            screen = await pane.wait_for(feature_row, "the Cmd-K row")
            top, bottom, lines = _check_layout(screen, width)
            row = _row(lines, top, bottom, "cmd_k: ")
            assert row is not None and row["route"] == "local", screen
            assert row["in"] == "100" and row["out"] == "20", screen  # the fake's usage
            assert row.get("request", "1 call") == "1 call", screen  # dropped at 80 columns
        finally:
            gate.set()
            if turn is not None and not turn.done():
                turn.cancel()
            if client is not None:
                await client.aclose()
            pane.stop()
