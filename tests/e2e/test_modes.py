"""Modes as Cursor sends them: Debug mode's config reaches the model, on both transports."""

from __future__ import annotations

import json
import uuid

import pytest
from cursor_client import CursorLikeClient
from fakes.fake_provider import FakeProvider
from mitm import start_mitmdump
from provider_config import MODEL
from provider_config import write_config

pytestmark = pytest.mark.timeout(120)


async def test_debug_mode_run_request_puts_its_config_in_the_system_prompt(
    tmp_path, workspace, transport
) -> None:
    async with FakeProvider() as fp:
        fp.script.text("I will instrument it.")
        proxy = start_mitmdump(
            tmp_path / "proxy",
            agent="provider",
            config=write_config(tmp_path, fp, "anthropic"),
            env={"FAKE_PROVIDER_KEY": "sk-test-not-a-real-key"},
        )
        client = CursorLikeClient.through(proxy, workspace, transport=transport)
        try:
            request = client.run_request(
                "why does it crash?",
                conversation_id=str(uuid.uuid4()),
                model=MODEL,
                mode=4,
                workspace=workspace,
            )
            context = request.run_request.action.user_message_action.request_context
            context.debug_mode_config.log_path = str(workspace / ".cursor" / "debug.log")
            context.debug_mode_config.server_endpoint = "http://127.0.0.1:7243/ingest/abc"
            context.debug_mode_config.session_id = "debug-session-7"
            result = await client.turn(request)
        finally:
            await client.aclose()
            proxy.stop()
        [sent] = fp.requests
    assert result.end.ok, result.end.error
    system = json.dumps(sent.json.get("system"))
    assert "Debug mode" in system
    assert "debug.log" in system and "/ingest/abc" in system and "debug-session-7" in system
