"""Issue 33 item 11: from nothing to a turn. `cursor-byok init` in a real terminal (tmux) with no
flags asks for the provider and the key (hidden: the key never shows on the screen), offers to
keep it in a 0600 key file, and checks it with one request; then `cursor-byok run` (no
exported key) serves a turn on it. The install itself is tests/e2e/test_tool_install.py."""

from __future__ import annotations

import os
import stat
import sys
import uuid
from pathlib import Path

import pytest
from cursor_client import CursorLikeClient
from fakes.fake_provider import FakeProvider
from mitm import start_mitmdump
from test_cli_run import run_command
from tmux_pane import TMUX
from tmux_pane import Pane

pytestmark = [
    pytest.mark.timeout(180),
    pytest.mark.skipif(TMUX is None, reason="tmux is not installed (apt-get install tmux)"),
]
KEY = "sk-ant-fake-key-7319"  # short: no secret scanner takes it for a real one
CLI = str(Path(sys.executable).with_name("cursor-byok"))


async def test_init_asks_hides_the_key_keeps_it_private_and_a_turn_follows(
    tmp_path, workspace
) -> None:
    config = tmp_path / "cfg" / "config.toml"
    async with FakeProvider(api_key=KEY) as fp:
        fp.script.text("pong")  # init's check: one request
        fp.script.text("Hello from your own model.")
        pane = Pane(tmp_path, 120)
        command = [CLI, "init", "--config", str(config), "--confdir", str(tmp_path / "mitm"),
                   "--base-url", fp.base_url.removesuffix("/v1")]  # fmt: skip
        env = {"PATH": os.environ.get("PATH", ""), "HOME": str(tmp_path), "TERM": "xterm"}
        pane.start(command, env)
        try:
            await pane.wait_for(lambda s: "Provider (" in s, "the provider prompt")
            pane.send("anthropic", "Enter")
            await pane.wait_for(lambda s: "input hidden" in s, "the key prompt")
            pane.send(KEY, "Enter")
            await pane.wait_for(lambda s: "Keep the key in" in s, "the key file offer")
            pane.send("Enter")
            screen = await pane.wait_for(lambda s: "checks passed" in s, "the doctor's end", 60)
        finally:
            pane.stop()
        assert KEY not in screen, screen
        assert "answered a one-word request" in screen, screen
        key_file = config.parent / "anthropic.key"
        assert key_file.read_text().strip() == KEY
        assert stat.S_IMODE(key_file.stat().st_mode) == 0o600
        assert f'api_key_file = "{key_file}"' in config.read_text()
        assert "ANTHROPIC_API_KEY" not in os.environ
        proxy = start_mitmdump(tmp_path, command=run_command(tmp_path, "--config", str(config)))
        client = CursorLikeClient.through(proxy, workspace)
        try:
            message = client.run_request(
                "hi", conversation_id=str(uuid.uuid4()), model="claude-sonnet-4-5 (BYOK)"
            )
            result = await client.turn(message)
        finally:
            await client.aclose()
            proxy.stop()
    assert result.end.ok, result.end.error
    assert result.text == "Hello from your own model."


def test_init_without_a_terminal_needs_the_provider(tmp_path) -> None:
    import subprocess

    done = subprocess.run(
        [CLI, "init", "--config", str(tmp_path / "c.toml")],
        stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert done.returncode == 2 and "give --provider NAME" in done.stderr
    assert not (tmp_path / "c.toml").exists()
