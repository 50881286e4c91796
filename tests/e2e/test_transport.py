"""The addon end to end: a real mitmdump, the Cursor-like client, the scripted agent."""

from __future__ import annotations

import uuid

import pytest
from cursor_client import CursorLikeClient
from mitm import TEST_HOST

pytestmark = pytest.mark.timeout(90)


def client_for(mitm, workspace, **kwargs) -> CursorLikeClient:
    return CursorLikeClient(
        base_url=f"https://{TEST_HOST}",
        workspace=workspace,
        proxy=mitm.proxy_url,
        ca_file=mitm.ca_file,
        **kwargs,
    )


@pytest.mark.parametrize("http2", [False, True], ids=["http1", "http2"])
async def test_turn_streams_execs_and_checkpoints(mitm, workspace, http2) -> None:
    client = client_for(mitm, workspace, http2=http2)
    try:
        conversation = str(uuid.uuid4())
        first = client.run_request("please look at README.md", conversation_id=conversation)
        result = await client.turn(first)
    finally:
        await client.aclose()
    assert result.end.ok, result.end.error
    kinds = result.kinds()
    assert kinds.index("tool_call_started") < kinds.index("exec:read_args")
    assert kinds.index("exec:read_args") < kinds.index("tool_call_completed")
    assert kinds.index("turn_ended") < kinds.index("conversation_checkpoint_update")
    assert "3 lines" in result.text
    assert "# Demo project" in result.text
    completed = result.updates("tool_call_completed")[0]
    assert "Demo project" in completed.tool_call.read_tool_call.result.success.content
    # every blob the final checkpoint references was SET (and acknowledged) before it
    final = result.checkpoints[-1]
    assert not final.pending_tool_calls
    for ident in list(final.root_prompt_messages_json) + list(final.turns):
        assert ident in client.blobs
    assert "--- ERROR" not in mitm.log()


async def test_second_turn_restores_history_from_checkpoint(mitm, workspace) -> None:
    client = client_for(mitm, workspace)
    try:
        conversation = str(uuid.uuid4())
        one = await client.turn(client.run_request("read notes.txt", conversation_id=conversation))
        state = one.checkpoints[-1]
        two = await client.turn(
            client.run_request("now README.md", conversation_id=conversation, state=state)
        )
    finally:
        await client.aclose()
    assert two.end.ok
    thinking = "".join(u.text for u in two.updates("thinking_delta"))
    assert "message 2 of the chat" in thinking
    roots_one = list(one.checkpoints[-1].root_prompt_messages_json)
    roots_two = list(two.checkpoints[-1].root_prompt_messages_json)
    assert roots_two[: len(roots_one)] == roots_one  # append-only history
    assert len(two.checkpoints[-1].turns) == 2
