"""Real run requests from a real Cursor client, uploaded through the proxy like Cursor does."""

from __future__ import annotations

import json
import uuid
from pathlib import Path

import pytest
from cursor_client import CursorLikeClient

from cursor_byok.pb import agent_v1_pb2 as pb

pytestmark = pytest.mark.timeout(90)
CAPTURES = Path(__file__).resolve().parents[1] / "data"  # real traces; see data/SOURCES.md
FILES = sorted(CAPTURES.glob("run_request_*.bidi.json"))


def load(path: Path) -> pb.AgentClientMessage:
    data = json.loads(path.read_text())["bidi_append_request"]["data"]
    return pb.AgentClientMessage.FromString(bytes.fromhex(data))


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
async def test_real_run_request_fresh_conversation(mitm, workspace, path) -> None:
    """The captured request as the first turn of a new chat (its old checkpoint dropped): every
    real field goes through, context parts the client cannot serve are skipped."""
    message = load(path)
    message.run_request.conversation_state.Clear()
    message.run_request.conversation_state.SetInParent()
    message.run_request.action.user_message_action.user_message.text += " notes.txt"
    client = CursorLikeClient.through(mitm, workspace)
    try:
        result = await client.turn(message, request_id=str(uuid.uuid4()))
    finally:
        await client.aclose()
    assert result.end.ok, result.end.error
    assert "alpha" in result.text


async def test_real_checkpoint_whose_blobs_the_client_lacks(mitm, workspace) -> None:
    """A later-turn request whose 133 history blobs nobody has: a clear not_found, no hang."""
    message = load(FILES[0])
    client = CursorLikeClient.through(mitm, workspace)
    try:
        result = await client.turn(message, request_id=str(uuid.uuid4()))
    finally:
        await client.aclose()
    assert result.end.error.code == "not_found"
    assert "no blob" in result.end.error.message


def test_the_real_traces_are_in_the_repository() -> None:
    assert [p.name for p in FILES] == [
        "run_request_agent.bidi.json",
        "run_request_ask.bidi.json",
        "run_request_plan.bidi.json",
    ]
