"""A model call nobody reads is aborted, and made again on reconnect (agent/attended.py).

The client drops its stream while the model's answer streams and reconnects only after the proxy
gave the provider call up (`cursor_byok_detached_call_ms`): the provider saw its client go away,
the reconnect gets the answer from the call made again, the tool before it ran once.
"""

from __future__ import annotations

import uuid

import pytest
from cursor_client import CursorLikeClient
from fakes.fake_provider import FakeProvider
from mitm import start_mitmdump
from provider_config import MODEL
from provider_config import write_config

from cursor_byok.pb import agent_v1_pb2 as pb

pytestmark = pytest.mark.timeout(60)
LIMIT_MS = 500


async def _read_notes_turn(client: CursorLikeClient, workspace):
    """One "read notes" turn whose first request id is its run id (a reconnect sends a new one)."""
    run_id = str(uuid.uuid4())
    message = client.run_request(
        "read notes", conversation_id=str(uuid.uuid4()), model=MODEL, workspace=workspace
    )
    message.run_request.run_id = run_id
    return await client.turn(message, request_id=run_id)


def is_text(message: pb.AgentServerMessage) -> bool:
    """The first text of the turn is the hanging call's (the call before it only reads)."""
    return message.interaction_update.WhichOneof("message") == "text_delta"


async def test_unread_call_is_aborted_and_made_again_on_reconnect(
    tmp_path, workspace, transport
) -> None:
    notes = str(workspace / "notes.txt")
    async with FakeProvider() as fp:
        fp.script.tool_calls([("call_read", "Read", {"path": notes})])
        fp.script.hang(text="partial answer, ")  # waits until its client goes away
        fp.script.text("Final answer.")
        proxy = start_mitmdump(
            tmp_path / "proxy",
            "--set",
            f"cursor_byok_detached_call_ms={LIMIT_MS}",
            agent="provider",
            config=write_config(tmp_path, fp, "openai-chat"),
            env={"FAKE_PROVIDER_KEY": "sk-test-not-a-real-key"},
        )

        async def after_the_abort() -> None:
            await fp.wait_for_disconnect(1, timeout=LIMIT_MS / 1000 + 10)

        client = CursorLikeClient.through(
            proxy,
            workspace,
            transport=transport,
            reconnect_new_id=True,
            drop_on=is_text,
            before_reconnect=after_the_abort,
        )
        try:
            result = await _read_notes_turn(client, workspace)
        finally:
            await client.aclose()
            proxy.stop()
        requests = list(fp.requests)
    assert result.end.ok, result.end.error
    assert result.reconnects == 1
    assert result.text.endswith("Final answer.")
    assert requests[1].disconnected  # the unread call was aborted before the reconnect
    assert len(requests) == 3  # and only it was made again, with the same prompt
    assert requests[2].json["messages"] == requests[1].json["messages"]
    reads = [e for e in client.exec_log if e.WhichOneof("message") == "read_args"]
    assert len(reads) == 1  # the tool before it ran once
    checkpoint = result.checkpoints[-1]
    assert checkpoint.root_prompt_messages_json  # the turn closed normally, with its steps
    assert "model call aborted" in proxy.log()


async def test_a_prompt_reconnect_keeps_the_call_with_the_default_limit(
    tmp_path, workspace, transport
) -> None:
    """With the default limit (under a second, so a cancel stops the provider within one), a
    client that reconnects at once (a new attempt of the run) finds the call still going: it is
    neither aborted nor made again, and the answer is whole."""
    notes = str(workspace / "notes.txt")
    words = " ".join(f"word{n}" for n in range(12))
    async with FakeProvider() as fp:
        fp.script.tool_calls([("call_read", "Read", {"path": notes})])
        fp.script.text(words).delay = 0.1  # still streaming while the client reconnects
        proxy = start_mitmdump(
            tmp_path / "proxy",
            agent="provider",
            config=write_config(tmp_path, fp, "openai-chat"),
            env={"FAKE_PROVIDER_KEY": "sk-test-not-a-real-key"},
        )
        client = CursorLikeClient.through(
            proxy, workspace, transport=transport, reconnect_new_id=True, drop_on=is_text
        )
        try:
            result = await _read_notes_turn(client, workspace)
        finally:
            await client.aclose()
            proxy.stop()
        requests = list(fp.requests)
    assert result.end.ok, result.end.error
    assert result.reconnects == 1
    assert result.text.endswith(words)
    assert len(requests) == 2 and not requests[1].disconnected  # no work repeated
    assert "model call aborted" not in proxy.log()
