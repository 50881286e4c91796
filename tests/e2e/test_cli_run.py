"""`cursor-byok run` starts a working proxy (the launcher a user runs, end to end)."""

from __future__ import annotations

import sys
import uuid
from pathlib import Path

import pytest
from cursor_client import CursorLikeClient
from mitm import TEST_HOST
from mitm import start_mitmdump

pytestmark = pytest.mark.timeout(90)


async def test_cursor_byok_run_serves_a_turn(tmp_path, workspace) -> None:
    launcher = Path(sys.executable).with_name("cursor-byok")
    command = [
        str(launcher),
        "run",
        "--port",
        "0",
        "--agent",
        "scripted",
        "--confdir",
        str(tmp_path / "mitmconf"),
        "--data-dir",
        str(tmp_path / "data"),
        "--quiet",
        "--",
        "--allow-hosts",
        r"^api2\.cursor\.test:443$",
        "--set",
        f"cursor_byok_hosts={TEST_HOST}",
    ]
    proxy = start_mitmdump(tmp_path, command=command)
    client = CursorLikeClient.through(proxy, workspace)
    try:
        result = await client.turn(
            client.run_request("read notes.txt", conversation_id=str(uuid.uuid4()))
        )
    finally:
        await client.aclose()
        proxy.stop()
    assert result.end.ok
    assert "alpha" in result.text
    assert "http.proxy" in proxy.log()  # the setup instructions were printed
