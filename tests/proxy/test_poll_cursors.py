"""RunPoll in-process (proxy/run_poll.py over the real shell and core): a superseded poll ends
with nothing, a lost answer is sent again with the same seqnos, the cursor of core/polls.py."""

from __future__ import annotations

import asyncio

from mitmproxy import http
from mitmproxy.test import tflow

from cursor_byok.core.polls import PollCursors
from cursor_byok.core.polls import answer
from cursor_byok.core.runs import RunConfig
from cursor_byok.pb import agent_v1_pb2 as pb
from cursor_byok.pb import aiserver_v1_pb2 as aipb
from cursor_byok.proxy.run_poll import RunPolls
from cursor_byok.proxy.run_registry import LiveRun
from cursor_byok.proxy.run_registry import RunRegistry
from cursor_byok.wire import connect
from cursor_byok.wire.bidi import PollRequest

OWNER = b"me"


def text(value: str) -> pb.AgentServerMessage:
    return pb.AgentServerMessage(
        interaction_update=pb.InteractionUpdate(text_delta=pb.TextDeltaUpdate(text=value))
    )


def decode(flow: http.HTTPFlow) -> tuple[list[aipb.BidiPollResponse], connect.EndStream]:
    assert flow.response is not None
    frames = connect.decode_envelopes(flow.response.content or b"")
    return (
        [aipb.BidiPollResponse.FromString(f.payload) for f in frames[:-1]],
        connect.parse_end_stream(frames[-1].payload),
    )


def messages(polls: list[aipb.BidiPollResponse]) -> list[str]:
    return [
        pb.AgentServerMessage.FromString(bytes.fromhex(p.data)).interaction_update.text_delta.text
        for p in polls
        if p.data
    ]


async def started_run(registry: RunRegistry, request_id: str) -> None:
    """Start the run of `request_id` (its turn: `registry_with`)."""
    run = pb.AgentClientMessage()
    run.run_request.conversation_id = "c"
    run.run_request.action.user_message_action.user_message.text = "hi"
    registry.receive(request_id, 0, run, raw=run.SerializeToString(), owner=OWNER)


def registry_with(release: asyncio.Event) -> RunRegistry:
    """A registry whose turns emit "one", wait for `release`, emit "two" and finish."""

    async def runner(live: LiveRun, _request: pb.AgentRunRequest) -> None:
        live.emit(text("one"))
        await release.wait()
        live.emit(text("two"))
        live.finish()

    registry = RunRegistry(runner, config=RunConfig(heartbeat_interval=30.0, coalesce_window=0))
    registry.start()
    return registry


async def yield_until(condition) -> None:
    """Let the event loop run until `condition()` holds (bounded, no clock involved)."""
    for _ in range(1000):
        if condition():
            return
        await asyncio.sleep(0)
    raise AssertionError("condition never held")


async def test_a_newer_poll_supersedes_the_waiting_one_and_only_it_moves_on() -> None:
    release = asyncio.Event()
    registry = registry_with(release)
    polls = RunPolls(registry)
    await started_run(registry, "r1")
    first = tflow.tflow()
    await polls.answer(first, PollRequest("r1", True), OWNER)
    got, end = decode(first)
    assert messages(got) == ["one"] and [p.seqno for p in got] == [0] and end.ok
    older_flow, newer_flow = tflow.tflow(), tflow.tflow()
    older = asyncio.ensure_future(polls.answer(older_flow, PollRequest("r1", False), OWNER))
    await yield_until(lambda: "r1" in polls._waiting)  # the older poll waits for frames
    newer = asyncio.ensure_future(polls.answer(newer_flow, PollRequest("r1", False), OWNER))
    await older  # superseded: ended at once
    assert decode(older_flow)[0] == [] and decode(older_flow)[1].ok
    release.set()
    await newer
    got, end = decode(newer_flow)
    assert messages(got) == ["two"] and [p.seqno for p in got] == [1, 2]
    assert got[-1].eof and end.ok
    await registry.stop()


async def test_a_lost_answer_is_sent_again_with_the_same_seqnos() -> None:
    release = asyncio.Event()
    release.set()
    registry = registry_with(release)
    polls = RunPolls(registry)
    await started_run(registry, "r2")
    await yield_until(lambda: not registry.run_for("r2").core.running)
    lost = tflow.tflow()
    await polls.answer(lost, PollRequest("r2", True), OWNER)
    sent = decode(lost)[0]
    assert messages(sent) == ["one", "two"] and sent[-1].eof
    lost.error = tflow.terr()
    polls.failed(lost)  # the client never got it
    again = tflow.tflow()
    await polls.answer(again, PollRequest("r2", False), OWNER)
    assert decode(again)[0] == sent  # the same responses, the same seqnos
    after = tflow.tflow()
    await polls.answer(after, PollRequest("r2", False), OWNER)
    assert decode(after)[0] == [] and decode(after)[1].ok  # the end again, at once
    await registry.stop()


def test_cursors_commit_only_for_the_newest_poll_and_are_bounded() -> None:
    cursors = PollCursors(max_cursors=2)
    cursor, old = cursors.begin("a")
    _, new = cursors.begin("a")
    made = answer([connect.encode_frame(b"\x0a\x00")], seqno=0, position=1, epoch=old)
    assert not cursors.commit("a", made) and cursor.position == 0
    made = answer([connect.encode_frame(b"\x0a\x00")], seqno=0, position=1, epoch=new)
    assert cursors.commit("a", made) and (cursor.position, cursor.seqno) == (1, 1)
    cursors.begin("b")
    cursors.begin("c")
    assert len(cursors) == 2 and not cursors.current("a", new)
