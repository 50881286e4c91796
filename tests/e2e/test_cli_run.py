"""`cursor-byok run` starts a working proxy: the README's quick start, end to end."""

from __future__ import annotations

import shutil
import sys
import uuid
from pathlib import Path

import pytest
from cursor_client import CursorLikeClient
from fakes.fake_provider import FakeProvider
from mitm import REPO
from mitm import TEST_HOST
from mitm import start_mitmdump

pytestmark = pytest.mark.timeout(90)


def run_command(tmp_path: Path, *args: str) -> list[str]:
    """`cursor-byok run` as the README gives it, on port 0 and with the test host allowed."""
    return [
        str(Path(sys.executable).with_name("cursor-byok")),
        "run",
        "--port",
        "0",
        "--confdir",
        str(tmp_path / "mitmconf"),
        "--data-dir",
        str(tmp_path / "data"),
        "--quiet",
        *args,
        "--",
        "--allow-hosts",
        r"^api2\.cursor\.test:443$",
        "--set",
        f"cursor_byok_hosts={TEST_HOST}",
    ]


async def test_cursor_byok_run_serves_a_turn(tmp_path, workspace) -> None:
    proxy = start_mitmdump(tmp_path, command=run_command(tmp_path, "--agent", "scripted"))
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


async def test_quick_start_with_the_example_config_and_a_fake_provider(tmp_path, workspace) -> None:
    """README quick start: copy config.example.toml, point one provider at a (fake) server,
    export its key, `cursor-byok run`; Cursor's picker name reaches that provider."""
    config = tmp_path / "config.toml"
    shutil.copy(REPO / "config.example.toml", config)
    async with FakeProvider(api_key="quickstart-test-key") as fp:
        text = config.read_text().replace(
            "https://api.anthropic.com", fp.base_url.removesuffix("/v1")
        )
        config.write_text(text)
        fp.script.text("Hello from your own model.")
        proxy = start_mitmdump(
            tmp_path,
            command=run_command(tmp_path, "--config", str(config)),
            env={"ANTHROPIC_API_KEY": "quickstart-test-key"},
        )
        client = CursorLikeClient.through(proxy, workspace)
        try:
            message = client.run_request(
                "hi", conversation_id=str(uuid.uuid4()), model="Claude Sonnet (BYOK)"
            )
            result = await client.turn(message)
        finally:
            await client.aclose()
            proxy.stop()
        assert fp.requests[0].path.endswith("/messages")
        assert fp.requests[0].json["model"] == "claude-sonnet-4-5"
    assert result.end.ok, result.end.error
    assert result.text == "Hello from your own model."


async def test_quick_start_with_init_and_a_fake_provider(tmp_path, workspace) -> None:
    """README quick start: `cursor-byok init --provider anthropic` (the doctor asks the provider
    one word), then `cursor-byok run`; the picker name init chose reaches that provider."""
    import asyncio
    import os
    import subprocess

    config = tmp_path / "config.toml"
    env = {"ANTHROPIC_API_KEY": "quickstart-test-key"}
    async with FakeProvider(api_key="quickstart-test-key") as fp:
        fp.script.text("pong")  # the doctor's one-word request
        fp.script.text("Hello from your own model.")
        init = [
            str(Path(sys.executable).with_name("cursor-byok")),
            "init", "--provider", "anthropic", "--config", str(config),
            "--base-url", fp.base_url.removesuffix("/v1"), "--confdir", str(tmp_path / "mitmconf"),
        ]  # fmt: skip
        done = await asyncio.to_thread(
            subprocess.run, init, capture_output=True, text=True, timeout=60,
            env=dict(os.environ, **env),
        )  # fmt: skip
        assert done.returncode == 0, done.stdout + done.stderr
        assert "answered a one-word request" in done.stdout
        proxy = start_mitmdump(
            tmp_path, command=run_command(tmp_path, "--config", str(config)), env=env
        )
        client = CursorLikeClient.through(proxy, workspace)
        try:
            message = client.run_request(
                "hi", conversation_id=str(uuid.uuid4()), model="claude-sonnet-4-5 (BYOK)"
            )
            result = await client.turn(message)
        finally:
            await client.aclose()
            proxy.stop()
        assert [r.json["model"] for r in fp.requests] == ["claude-sonnet-4-5"] * 2
    assert result.end.ok, result.end.error
    assert result.text == "Hello from your own model."
