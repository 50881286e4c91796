"""Issue 33 item 1 in a real terminal: `cursor-byok run` with its live status on (tmux), turns
from the Cursor-like client, `cursor-byok usage` from another process after each, then kill -9.

Before, the live status opened the usage database in the writer's process with a raw open and
close of the file, which dropped the writer's SQLite locks (POSIX locks belong to the process);
the first `usage` then found the database unused and deleted its WAL, every later turn vanished
from `usage`, and the kill lost them for good.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import uuid
from pathlib import Path

import pytest
from cursor_client import CursorLikeClient
from fakes.fake_provider import FakeProvider
from mitm import TEST_HOST
from provider_config import MODEL
from provider_config import write_config
from tmux_pane import TMUX
from tmux_pane import Pane
from tmux_pane import free_port

from cursor_byok.store.usage import UsageStore

pytestmark = [
    pytest.mark.timeout(180),
    pytest.mark.skipif(TMUX is None, reason="tmux is not installed (apt-get install tmux)"),
]
CLI = str(Path(sys.executable).with_name("cursor-byok"))
TURNS = 3


def usage_turns(data_dir: Path, config: Path) -> int:
    """What `cursor-byok usage` (another process) counts."""
    command = [CLI, "usage", "--json", "--since", "all"]
    command += ["--data-dir", str(data_dir), "--config", str(config)]
    result = subprocess.run(command, capture_output=True, text=True, check=True)
    return json.loads(result.stdout.splitlines()[-1])["turns"]


async def test_usage_rows_survive_usage_runs_and_a_kill_with_the_live_status_on(
    tmp_path, workspace
) -> None:
    port = free_port()
    confdir, data_dir = tmp_path / "mitmconf", tmp_path / "data"
    async with FakeProvider() as fp:
        for n in range(TURNS):
            fp.script.text(f"answer {n}")
        config = write_config(tmp_path, fp, "openai-chat")
        command = [
            CLI, "run", "--port", str(port), "--config", str(config),
            "--confdir", str(confdir), "--data-dir", str(data_dir),
            "--", "--allow-hosts", r"^api2\.cursor\.test:443$",
            "--set", f"cursor_byok_hosts={TEST_HOST}",
        ]  # fmt: skip
        env = {
            "FAKE_PROVIDER_KEY": "sk-test-not-a-real-key",
            "PATH": os.environ.get("PATH", ""),
            "HOME": str(tmp_path),
            "TERM": "xterm-256color",
        }
        pane = Pane(tmp_path, 120)
        pane.start(command, env)
        client: CursorLikeClient | None = None
        try:
            await pane.wait_for(lambda s: "cursor-byok ready" in s, "the proxy start")
            client = CursorLikeClient(
                base_url=f"https://{TEST_HOST}",
                workspace=workspace,
                proxy=f"http://127.0.0.1:{port}",
                ca_file=confdir / "mitmproxy-ca-cert.pem",
            )
            conversations = []
            for n in range(TURNS):
                conversations.append(str(uuid.uuid4()))
                message = client.run_request(
                    "hi", conversation_id=conversations[-1], model=MODEL, workspace=workspace
                )
                result = await client.turn(message)
                assert result.end.ok, result.end.error
                # The live status has read the database in the proxy's process (its caption)...
                said = f"this session: {n + 1} turn"
                await pane.wait_for(lambda s, said=said: said in s, f"'{said}' under the table")
                # ... and another process reads it too, as a user checking their spend does.
                assert usage_turns(data_dir, config) == n + 1
            os.kill(pane.pid(), signal.SIGKILL)
        finally:
            if client is not None:
                await client.aclose()
            pane.stop()
    store = UsageStore(data_dir)
    rows = store.rows()
    store.close()
    assert [r["conversation"] for r in rows] == conversations
