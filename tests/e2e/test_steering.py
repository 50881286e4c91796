"""Steering and queued messages (issue 25 item 4), end to end: mitmdump, the Cursor-like
client, the fake provider. A message sent while the model works joins the running turn at the
next model call, once, confirmed the way Cursor's server confirms it; a message queued before a
resume reaches the model once; late or foreign steering is a documented no-op or a rejection."""

from __future__ import annotations

import asyncio
import json
import uuid

import pytest
from cursor_client import CursorLikeClient
from cursor_client import CursorTurn
from fakes.fake_provider import FakeProvider
from mitm import start_mitmdump
from provider_config import MODEL
from provider_config import write_config

from cursor_byok.pb import agent_v1_pb2 as pb
from cursor_byok.wire.bidi import encode_bidi_append

pytestmark = pytest.mark.timeout(120)


class Setup:
    def __init__(self, tmp_path, workspace, fp) -> None:
        self.proxy = start_mitmdump(
            tmp_path / "proxy",
            agent="provider",
            config=write_config(tmp_path, fp, "openai-chat"),
            env={"FAKE_PROVIDER_KEY": "sk-test"},
        )
        self.client = CursorLikeClient.through(self.proxy, workspace)
        self.workspace = workspace

    def request(self, text: str, conversation: str, **kwargs) -> pb.AgentClientMessage:
        return self.client.run_request(
            text, conversation_id=conversation, model=MODEL, workspace=self.workspace, **kwargs
        )

    async def close(self) -> None:
        await self.client.aclose()
        self.proxy.stop()


def inject(text: str, *, injection_id: str, run_id: str) -> pb.AgentClientMessage:
    action = pb.ConversationAction()
    injection = action.inject_context_action
    injection.injection_id = injection_id
    injection.expected_run_id = run_id
    injection.user_context.user_message.text = text
    injection.user_context.user_message.message_id = str(uuid.uuid4())
    return pb.AgentClientMessage(conversation_action=action)


def states(result) -> list[tuple[str, str]]:
    return [
        (u.injection_id, u.state.WhichOneof("state"))
        for u in result.updates("context_injection_state")
    ]


def count(request, marker: str) -> int:
    return json.dumps(request.json["messages"]).count(marker)


async def test_steering_joins_the_running_turn_once(tmp_path, workspace) -> None:
    async with FakeProvider() as fp:
        fp.script.tool_calls([("call_read", "Read", {"path": str(workspace / "notes.txt")})])
        fp.script.text("done, and I saw your note")
        setup = Setup(tmp_path, workspace, fp)
        request_id = str(uuid.uuid4())

        def during(run: CursorTurn) -> None:
            sent: list[bool] = []

            def on_message(message: pb.AgentServerMessage) -> None:
                if message.WhichOneof("message") == "exec_server_message" and not sent:
                    sent.append(True)  # while the tool runs: before its result goes up
                    run.spawn(
                        run.append(inject("STEER-MARKER", injection_id="inj-1", run_id=request_id))
                    )

            run.on_message = on_message

        try:
            result = await setup.client.turn(
                setup.request("read the notes", str(uuid.uuid4())),
                request_id=request_id,
                during=during,
            )
        finally:
            await setup.close()
        requests = list(fp.requests)
    assert result.end.ok, result.end.error
    assert len(requests) == 2
    assert count(requests[0], "STEER-MARKER") == 0
    assert count(requests[1], "STEER-MARKER") == 1  # joined at the next model call, once
    assert states(result) == [("inj-1", "queued"), ("inj-1", "delivered")]
    [delivered] = [
        u.state.delivered
        for u in result.updates("context_injection_state")
        if u.state.HasField("delivered")
    ]
    assert delivered.step == 2 and delivered.delivery_batch_id and delivered.delivered_at_ms > 0
    assert result.text == "done, and I saw your note"


async def test_steering_after_the_last_answer_gets_one_more_call(tmp_path, workspace) -> None:
    """Sent while the model's last answer streams: the turn makes one more call for it."""
    async with FakeProvider(chunk_delay=0.05) as fp:
        # ~40 pieces 0.05 s apart: the steering has seconds to arrive while this streams
        fp.script.text("a first answer that streams for a while, " * 4)
        fp.script.text("and the answer to the steering")
        setup = Setup(tmp_path, workspace, fp)
        request_id = str(uuid.uuid4())

        def during(run: CursorTurn) -> None:
            sent: list[bool] = []

            def on_message(message: pb.AgentServerMessage) -> None:
                update = message.interaction_update
                if update.WhichOneof("message") == "text_delta" and not sent:
                    sent.append(True)
                    run.spawn(
                        run.append(inject("LATE-MARKER", injection_id="i2", run_id=request_id))
                    )

            run.on_message = on_message

        try:
            result = await setup.client.turn(
                setup.request("hi", str(uuid.uuid4())), request_id=request_id, during=during
            )
        finally:
            await setup.close()
        requests = list(fp.requests)
    assert result.end.ok
    assert len(requests) == 2 and count(requests[1], "LATE-MARKER") == 1
    assert states(result) == [("i2", "queued"), ("i2", "delivered")]


async def test_foreign_and_late_steering(tmp_path, workspace) -> None:
    """Steering for another run is rejected (the client sends it as a follow-up); steering for
    a run that ended is a no-op: answered 200, nothing else changes, the proxy goes on."""
    async with FakeProvider() as fp:
        fp.script.tool_calls([("call_read", "Read", {"path": str(workspace / "notes.txt")})])
        fp.script.text("done")
        fp.script.text("next turn")
        setup = Setup(tmp_path, workspace, fp)
        request_id = str(uuid.uuid4())
        turns: list[CursorTurn] = []

        def during(run: CursorTurn) -> None:
            turns.append(run)

            def on_message(message: pb.AgentServerMessage) -> None:
                if message.WhichOneof("message") == "exec_server_message":
                    run.spawn(run.append(inject("WRONG", injection_id="x", run_id="other-run")))

            run.on_message = on_message

        conversation = str(uuid.uuid4())
        try:
            result = await setup.client.turn(
                setup.request("read", conversation), request_id=request_id, during=during
            )
            # on the same request id, with its next seqno, after the run ended
            await turns[0].append(inject("TOO-LATE", injection_id="late", run_id=request_id))
            after = await setup.client.turn(
                setup.request("again", conversation, state=result.checkpoints[-1])
            )
        finally:
            await setup.close()
        requests = list(fp.requests)
        log = setup.proxy.log()
    assert result.end.ok and after.end.ok
    assert states(result) == [("x", "rejected")]
    assert all(count(r, "WRONG") == 0 and count(r, "TOO-LATE") == 0 for r in requests)
    assert "steering late came after its turn" in log


async def test_a_message_queued_before_a_resume_reaches_the_model_once(tmp_path, workspace) -> None:
    """Cursor queues a message the user sent while the turn was down and sends it as a
    user-message action before the run request whose action is `resume_action`."""
    async with FakeProvider() as fp:
        fp.script.text("first")
        fp.script.text("answered the queued message")
        setup = Setup(tmp_path, workspace, fp)
        conversation = str(uuid.uuid4())
        try:
            one = await setup.client.turn(setup.request("hi", conversation))
            queued = pb.ConversationAction()
            queued.user_message_action.user_message.text = "QUEUED-MARKER please"
            queued.user_message_action.user_message.message_id = "queued-1"
            resume = setup.request("", conversation, state=one.checkpoints[-1])
            resume.run_request.action.Clear()
            resume.run_request.action.resume_action.SetInParent()
            request_id = str(uuid.uuid4())
            run = CursorTurn(setup.client, request_id)
            run.seqno = 1  # the run request goes with seqno 1, after the queued message
            turn = asyncio.ensure_future(run.run(resume))
            queued_append = pb.AgentClientMessage(conversation_action=queued).SerializeToString()
            await run._post_append(encode_bidi_append(request_id, 0, queued_append))  # together
            two = await turn
        finally:
            await setup.close()
        requests = list(fp.requests)
    assert one.end.ok and two.end.ok, two.end.error
    assert len(requests) == 2
    assert count(requests[1], "QUEUED-MARKER") == 1
    assert two.text == "answered the queued message"
    roots = two.checkpoints[-1].root_prompt_messages_json
    assert len(roots) == len(one.checkpoints[-1].root_prompt_messages_json) + 2
