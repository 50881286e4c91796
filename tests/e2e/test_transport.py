"""The addon end to end: a real mitmdump, the Cursor-like client, the scripted agent."""

from __future__ import annotations

import asyncio
import uuid

import pytest
from cursor_client import CursorLikeClient

from cursor_byok.pb import agent_v1_pb2 as pb

pytestmark = pytest.mark.timeout(90)


def client_for(mitm, workspace, **kwargs) -> CursorLikeClient:
    return CursorLikeClient.through(mitm, workspace, **kwargs)


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


async def test_second_turn_restores_history_from_checkpoint(mitm, workspace, transport) -> None:
    client = client_for(mitm, workspace, transport=transport)
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


async def test_out_of_order_and_duplicated_appends(mitm, workspace) -> None:
    for seed in range(4):
        client = client_for(
            mitm, workspace, shuffle_appends=True, duplicate_appends=True, seed=seed
        )
        try:
            conversation = str(uuid.uuid4())
            one = await client.turn(
                client.run_request("read notes.txt", conversation_id=conversation)
            )
            two = await client.turn(
                client.run_request(
                    "README.md", conversation_id=conversation, state=one.checkpoints[-1]
                )
            )
        finally:
            await client.aclose()
        assert one.end.ok and two.end.ok, (one.end, two.end)
        assert "alpha" in one.text and "Demo project" in two.text
    assert "ignored" not in mitm.log()  # no result was dropped as unknown


@pytest.mark.parametrize("drops", [[1], [3, 4], [2, 6, 9, 12]], ids=["early", "mid", "many"])
async def test_runsse_dropped_and_reopened_mid_turn(mitm, workspace, drops) -> None:
    baseline_client = client_for(mitm, workspace)
    dropping = client_for(mitm, workspace, drop_after=drops, reconnect_delay=0.1)
    try:
        baseline = await baseline_client.turn(
            baseline_client.run_request("read notes.txt", conversation_id=str(uuid.uuid4()))
        )
        result = await dropping.turn(
            dropping.run_request("read notes.txt", conversation_id=str(uuid.uuid4()))
        )
    finally:
        await baseline_client.aclose()
        await dropping.aclose()
    assert result.end.ok
    assert result.reconnects == len(drops)
    # No gaps, no duplicates: the client's view is exactly an undisturbed turn's sequence.
    assert result.kinds() == baseline.kinds()
    assert result.text == baseline.text


async def test_two_conversations_at_once_stay_apart(mitm, workspace, transport) -> None:
    a = client_for(mitm, workspace, transport=transport)
    b = client_for(mitm, workspace, transport=transport, http2=True)
    try:
        ra, rb = await asyncio.gather(
            a.turn(a.run_request("read notes.txt", conversation_id="conv-a"), request_id="req-a"),
            b.turn(b.run_request("read README.md", conversation_id="conv-b"), request_id="req-b"),
        )
    finally:
        await a.aclose()
        await b.aclose()
    assert ra.end.ok and rb.end.ok
    assert "alpha" in ra.text and "Demo" not in ra.text
    assert "Demo project" in rb.text and "alpha" not in rb.text
    assert all(b"req-b" not in f for f in ra.frames)
    assert all(b"req-a" not in f for f in rb.frames)


async def test_cancel_action_ends_the_turn_cleanly(mitm, workspace, transport) -> None:
    client = client_for(mitm, workspace, transport=transport, answer_execs=False)

    def cancel_on_exec(run) -> None:
        def on_message(message: pb.AgentServerMessage) -> None:
            if message.WhichOneof("message") == "exec_server_message":
                action = pb.AgentClientMessage()
                action.conversation_action.cancel_action.reason = "user pressed stop"
                run.spawn(run.append(action))

        run.on_message = on_message

    try:
        result = await client.turn(
            client.run_request("read notes.txt", conversation_id=str(uuid.uuid4())),
            during=cancel_on_exec,
        )
    finally:
        await client.aclose()
    assert result.end.error is not None and result.end.error.code == "canceled"
    exec_id = client.exec_log[0].id
    aborts = [
        m.exec_server_control_message.abort.id
        for m in result.messages
        if m.WhichOneof("message") == "exec_server_control_message"
    ]
    assert aborts == [exec_id]
    assert "turn_ended" not in result.kinds()


async def test_stream_gone_past_grace_period_cancels_and_keeps_state(tmp_path, workspace) -> None:
    from mitm import start_mitmdump

    proxy = start_mitmdump(tmp_path / "p", "--set", "cursor_byok_grace_ms=400")
    client = client_for(proxy, workspace, answer_execs=False, drop_after=[5], reconnect_delay=1.5)
    try:
        result = await client.turn(
            client.run_request("read notes.txt", conversation_id=str(uuid.uuid4()))
        )
    finally:
        await client.aclose()
        proxy.stop()
    assert result.end.error is not None and result.end.error.code == "canceled"
    assert "went away" in result.end.error.message
    assert result.reconnects == 1


async def test_new_message_supersedes_the_running_turn(mitm, workspace, transport) -> None:
    stuck = client_for(mitm, workspace, transport=transport, answer_execs=False)
    fresh = client_for(mitm, workspace, transport=transport)
    conversation = str(uuid.uuid4())
    try:
        first = asyncio.ensure_future(
            stuck.turn(stuck.run_request("read notes.txt", conversation_id=conversation))
        )
        while not stuck.exec_log:  # the first turn now waits for an exec result forever
            await asyncio.sleep(0.02)
        second = await fresh.turn(fresh.run_request("README.md", conversation_id=conversation))
        first_result = await asyncio.wait_for(first, 10)
    finally:
        await stuck.aclose()
        await fresh.aclose()
    assert first_result.end.error.code == "canceled"
    assert "superseded" in first_result.end.error.message
    assert second.end.ok


async def test_run_request_may_arrive_before_the_stream(mitm, workspace) -> None:
    client = client_for(mitm, workspace, upload_first=True)
    try:
        result = await client.turn(
            client.run_request("read notes.txt", conversation_id=str(uuid.uuid4()))
        )
    finally:
        await client.aclose()
    assert result.end.ok
    assert "alpha" in result.text


async def test_heartbeats_keep_a_silent_stream_alive(mitm, workspace, transport) -> None:
    """While the turn waits on the client (an exec nobody answers), the server sends heartbeats
    (every 300 ms here), which are live-only: never part of the replayed backlog."""
    client = client_for(mitm, workspace, transport=transport, answer_execs=False)

    def cancel_later(run) -> None:
        async def later() -> None:
            while run.heartbeats < 3:  # three of them came, however slow this machine is
                await asyncio.sleep(0.05)
            action = pb.AgentClientMessage()
            action.conversation_action.cancel_action.reason = "enough"
            await run.append(action)

        run.spawn(later())

    try:
        result = await client.turn(
            client.run_request("read notes.txt", conversation_id=str(uuid.uuid4())),
            during=cancel_later,
        )
    finally:
        await client.aclose()
    assert result.end.error.code == "canceled"
    assert result.heartbeats >= 3
    assert "heartbeat" not in result.kinds()


async def test_large_frames_are_gzip_compressed(mitm, workspace, transport) -> None:
    (workspace / "big.txt").write_text("".join(f"line {i} of a large file\n" for i in range(2000)))
    client = client_for(mitm, workspace, transport=transport)
    try:
        result = await client.turn(client.run_request("big.txt", conversation_id=str(uuid.uuid4())))
    finally:
        await client.aclose()
    assert result.end.ok
    assert result.compressed >= 1  # the SET of the tool-result blob (~50 KB)
    small = [f for f in result.frames if len(f) < 4096]
    assert len(small) + result.compressed == len(result.frames)


async def test_checkpoint_turn_blob_holds_the_steps_shown(mitm, workspace, transport) -> None:
    client = client_for(mitm, workspace, transport=transport)
    try:
        result = await client.turn(
            client.run_request("read notes.txt", conversation_id=str(uuid.uuid4()))
        )
    finally:
        await client.aclose()
    final = result.checkpoints[-1]
    turn = pb.ConversationTurnStructure.FromString(client.blobs[final.turns[-1]])
    user = pb.UserMessage.FromString(client.blobs[turn.agent_conversation_turn.user_message])
    assert user.text == "read notes.txt"
    steps = [
        pb.ConversationStep.FromString(client.blobs[ident])
        for ident in turn.agent_conversation_turn.steps
    ]
    assert [s.WhichOneof("message") for s in steps] == [
        "thinking_message",
        "assistant_message",
        "tool_call",
        "assistant_message",
    ]
    assert steps[1].assistant_message.text == "Reading `notes.txt`."
    assert "alpha" in steps[2].tool_call.read_tool_call.result.success.content
    assert steps[3].assistant_message.text == result.text.removeprefix("Reading `notes.txt`.")
