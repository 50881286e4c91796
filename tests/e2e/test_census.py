"""The RPC census (issue 25 item 10) through a real mitmdump: every Cursor RPC path counted by
what became of it, the transport of every Agent call, what a newer Cursor sends that we do not
model (logged once, with its name and field number), and what `doctor --watch` then says."""

from __future__ import annotations

import asyncio
import json
import threading
import uuid

import pytest
from cursor_client import CursorLikeClient
from mitm import start_mitmdump

from cursor_byok.cli.doctor import run_doctor
from cursor_byok.pb import agent_v1_pb2 as pb

pytestmark = pytest.mark.timeout(120)


def with_unknown_action_field(message: pb.AgentClientMessage) -> pb.AgentClientMessage:
    """The run request's ConversationAction with a field 40 our schema does not have, as a
    newer Cursor might send (protobuf keeps it as an unknown field)."""
    action = message.run_request.action
    extra = action.SerializeToString() + bytes([0xC0, 0x02, 0x01])  # field 40, varint 1
    action.Clear()
    action.MergeFromString(extra)
    return message


async def test_census_counts_an_unknown_action_and_doctor_watch_shows_it(
    tmp_path, workspace
) -> None:
    proxy = start_mitmdump(tmp_path, "--set", "cursor_byok_heartbeat_ms=300")
    client = CursorLikeClient.through(proxy, workspace)
    lines: list[str] = []
    waiting = threading.Event()

    def doctor() -> int:
        return run_doctor(
            config_path=tmp_path / "no-config.toml",
            confdir=proxy.confdir,
            data_dir=proxy.data_dir,
            port=0,
            providers=False,
            watch=60,
            out=lambda line: (lines.append(line), waiting.set()),
        )

    try:
        watching = asyncio.ensure_future(asyncio.to_thread(doctor))
        await asyncio.to_thread(waiting.wait, 30)  # the doctor printed its first checks
        for text in ("README.md", "notes.txt"):
            first = with_unknown_action_field(
                client.run_request(text, conversation_id=str(uuid.uuid4()))
            )
            result = await client.turn(first)
            assert result.end.ok
        # an action we model but do not serve: counted too
        unhandled = client.run_request("notes.txt", conversation_id=str(uuid.uuid4()))
        unhandled.run_request.action.Clear()
        unhandled.run_request.action.subscription_notification_action.SetInParent()
        await client.turn(unhandled)
        await asyncio.wait_for(watching, 60)
    finally:
        await client.aclose()
        proxy.stop()
    log = proxy.log()
    # logged once, with its name and field number, however often it comes
    assert log.count("ConversationAction field 40, which cursor-byok does not model") == 1
    assert log.count("ConversationAction.subscription_notification_action (field 16)") == 1
    census = json.loads((proxy.data_dir / "activity.json").read_text())["census"]
    assert census["unmodelled"]["ConversationAction.40"]["count"] == 2
    assert "ConversationAction.subscription_notification_action" in census["unmodelled"]
    assert census["transports"]["RunSSE"] == 3 and census["transports"]["BidiAppend"] >= 3
    assert census["paths"]["/agent.v1.AgentService/RunSSE"]["served"] == 3
    text = "\n".join(lines)
    assert "Cursor RPC census since the doctor started" in text
    assert "ConversationAction.40 ×2" in text and "not modelled" in text.lower()
    assert "Agent calls by transport: BidiAppend" in text
