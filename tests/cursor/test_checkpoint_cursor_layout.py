"""Reading a checkpoint Cursor's backend wrote (protocol.md §10), without the e2e harness.

The checkpoint comes from the stand-in's writer (tests/fakes/cursor_checkpoint.py), which follows
protocol.md rather than our own writer, so these pin that `load_transcript` reads Cursor's
layout: its system prompt is dropped, list-of-parts user content, `"id"` fields, reasoning
with Cursor's signature, and a hole in the history is a clear `not_found`, not a traceback.
"""

from __future__ import annotations

import pytest
from fakes.cursor_checkpoint import write_checkpoint

from cursor_byok.agent.history_restore import load_transcript
from cursor_byok.agent.turn import TurnError
from cursor_byok.cursor.checkpoint import Transcript
from cursor_byok.pb import agent_v1_pb2 as pb
from cursor_byok.providers.history_projection import AssistantTurn
from cursor_byok.providers.history_projection import UserTurn
from cursor_byok.providers.history_projection import normalise


def run_request(text: str, state: pb.ConversationStateStructure | None = None):
    request = pb.AgentRunRequest(conversation_id="c")
    if state is not None:
        request.conversation_state.CopyFrom(state)
    message = request.action.user_message_action.user_message
    message.text, message.message_id, message.mode = text, "m-" + text, 1
    request.requested_model.model_id = "composer-1"
    return request


def lookup(blobs: dict[bytes, bytes]):
    async def get(ident: bytes) -> bytes:
        if ident not in blobs:
            raise TurnError("not_found", f"the client has no blob {ident.hex()}")
        return blobs[ident]

    return get


async def test_a_new_chat_written_by_cursor_reads_as_user_and_assistant_history() -> None:
    written = write_checkpoint(
        run_request("hello"), "hi there", request_id="r1", thinking="hmm", signature="sig"
    )
    follow = run_request("again", written.settled)
    transcript = await load_transcript(lookup(written.blobs), follow, "r2")
    assert isinstance(transcript, Transcript)
    assert [m["role"] for m in transcript.history] == ["user", "user", "assistant"]  # no system
    turns = normalise(transcript.history)
    assert isinstance(turns[1], UserTurn) and turns[1].parts == [{"type": "text", "text": "hello"}]
    answer = turns[2]
    assert isinstance(answer, AssistantTurn)
    assert answer.parts[-1] == {"type": "text", "text": "hi there"}
    assert answer.replay == {}  # Cursor's providerOptions are not our replay data


async def test_cursors_turn_after_ours_extends_the_roots_and_turns() -> None:
    first = write_checkpoint(run_request("one"), "answer one", request_id="r1")
    second = write_checkpoint(run_request("two", first.settled), "answer two", request_id="r2")
    state = second.settled
    roots = list(state.root_prompt_messages_json)
    assert roots[:4] == list(first.settled.root_prompt_messages_json)
    assert len(roots) == 6 and len(state.turns) == 2
    assert list(second.staged.root_prompt_messages_json) == roots[:-1]
    assert len(second.staged.pending_tool_calls) == 1
    transcript = await load_transcript(
        lookup({**first.blobs, **second.blobs}), run_request("three", state), "r3"
    )
    texts = [str(m["content"]) for m in transcript.history]
    assert "one" in texts[1] and "answer two" in texts[-1]


async def test_a_missing_history_blob_is_a_clear_not_found() -> None:
    written = write_checkpoint(run_request("hello"), "hi there", request_id="r1")
    lost = written.new_roots[2]
    blobs = {i: d for i, d in written.blobs.items() if i != lost}
    with pytest.raises(TurnError) as caught:
        await load_transcript(lookup(blobs), run_request("again", written.settled), "r2")
    assert caught.value.code == "not_found"
    message = str(caught.value)
    assert "history message 3 of 4" in message and lost.hex() in message
    assert message.startswith("cannot continue this conversation")
