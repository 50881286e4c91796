"""InteractionUpdate.routed_model: a BYOK turn tells the client which provider model really
answers behind the configured name (the SDK's Python layer does not surface it: our client)."""

from __future__ import annotations

import uuid

import pytest
from cursor_client import CursorLikeClient
from fakes.fake_provider import FakeProvider
from mitm import start_mitmdump
from provider_config import MODEL
from provider_config import write_config

pytestmark = pytest.mark.timeout(60)


async def test_the_turn_names_the_provider_model_behind_the_byok_name(
    tmp_path, workspace, transport
) -> None:
    async with FakeProvider() as fp:
        fp.script.text("Hello.")
        proxy = start_mitmdump(
            tmp_path / "proxy",
            agent="provider",
            config=write_config(tmp_path, fp, "openai-chat"),
            env={"FAKE_PROVIDER_KEY": "sk-test-not-a-real-key"},
        )
        client = CursorLikeClient.through(proxy, workspace, transport=transport)
        try:
            message = client.run_request(
                "hi", conversation_id=str(uuid.uuid4()), model=MODEL, workspace=workspace
            )
            result = await client.turn(message)
        finally:
            await client.aclose()
            proxy.stop()
        upstream = fp.requests[0].json["model"]
    assert result.end.ok, result.end.error
    routed = [
        m.interaction_update.routed_model.display_name
        for m in result.messages
        if m.interaction_update.WhichOneof("message") == "routed_model"
    ]
    assert routed == [f"{upstream} via fake"]
    assert result.text == "Hello."
