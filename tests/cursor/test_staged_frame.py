"""A staged checkpoint's frame built around the answer's JSON is the frame upb would make."""

from __future__ import annotations

from cursor_byok.cursor.checkpoint import Transcript
from cursor_byok.cursor.checkpoint import staged_frame
from cursor_byok.pb import agent_v1_pb2 as pb
from cursor_byok.wire import connect


def _upb_frame(state: pb.ConversationStateStructure) -> bytes:
    message = pb.AgentServerMessage()
    message.conversation_checkpoint_update.CopyFrom(state)
    return connect.encode_frame_raw(0, message.SerializeToString())


def _transcript(base: pb.ConversationStateStructure) -> Transcript:
    transcript = Transcript(base, [], "req-1")
    transcript.user_message = pb.UserMessage(text="q")
    transcript.append({"role": "user", "content": "q"})
    step = pb.ConversationStep()
    step.assistant_message.text = "a"
    transcript.add_step(step)
    transcript.todos.append({"id": "1", "content": "t"})
    transcript.read_paths.append("/w/x.py")
    transcript.subagent_runs["call-1"] = pb.SubagentRunState()
    transcript.category_bytes = {"system": 400, "user": 800}
    return transcript


PENDINGS = [
    {"role": "assistant", "content": "short"},
    {
        "role": "assistant",
        "content": [
            {"type": "text", "text": 'é"\\\n\u2028 🙂' * 30_000},  # escapes, past a 64 KiB slice
            {"type": "tool-call", "toolCallId": "c1", "toolName": "t", "input": {"n": 1.5}},
        ],
    },
]


def test_the_frame_is_upbs_byte_for_byte() -> None:
    base = pb.ConversationStateStructure(agent_type="ide", self_summary_count=2)
    base.pending_tool_calls.append("an older batch: replaced")
    base.turns.append(b"\x01" * 32)
    base.plan = b"plan"
    for pending in PENDINGS:
        transcript = _transcript(base)
        transcript.append(pending)  # type: ignore[arg-type]
        inline, _ = transcript.checkpoint(pending=pending, mode=2)  # type: ignore[arg-type]
        state, _ = transcript.checkpoint(pending=pending, mode=2, inline=False)  # type: ignore[arg-type]
        assert list(state.pending_tool_calls) == []
        frame = staged_frame(state, pending)  # type: ignore[arg-type]
        assert frame == _upb_frame(inline)
        [decoded] = connect.decode_envelopes(frame)
        parsed = pb.AgentServerMessage.FromString(decoded.payload)
        assert parsed.conversation_checkpoint_update == inline


def test_unknown_fields_stay_after_the_known_ones() -> None:
    base = pb.ConversationStateStructure()
    base.MergeFromString(b"\xa8\x1f\x07" + b"\x12\x03abc")  # unknown fields 501 and 2
    transcript = _transcript(base)
    pending = PENDINGS[0]
    transcript.append(pending)  # type: ignore[arg-type]
    inline, _ = transcript.checkpoint(pending=pending)  # type: ignore[arg-type]
    state, _ = transcript.checkpoint(pending=pending, inline=False)  # type: ignore[arg-type]
    assert staged_frame(state, pending) == _upb_frame(inline)  # type: ignore[arg-type]


def test_a_run_sends_the_frame_as_it_is() -> None:
    from cursor_byok.core.attempts import Registry
    from cursor_byok.core.runs import StartTurn

    core = Registry()
    message = pb.AgentClientMessage()
    message.run_request.action.user_message_action.user_message.text = "hi"
    commands = core.receive("r", 0, message, raw=message.SerializeToString(), owner=b"o", now=0)
    [run] = [c.run for c in commands if isinstance(c, StartTurn)]
    transcript = _transcript(pb.ConversationStateStructure())
    pending = PENDINGS[1]
    state, _ = transcript.checkpoint(pending=pending, inline=False)  # type: ignore[arg-type]
    frame = staged_frame(state, pending)  # type: ignore[arg-type]
    sub, _ = core.subscribe("r", owner=b"o", now=0)
    run.emit_frame(frame, now=1)
    frames, end = core.read(sub, now=1)
    assert b"".join(frames) == frame and not end
    assert run.outbox.backlog() == len(frame)


def test_the_staged_frame_is_head_then_the_message_blob_then_tail() -> None:
    """What lets the backlog make it again from the message's blob on disk (`BlobFrame`)."""
    from cursor_byok.cursor.checkpoint import encode_message
    from cursor_byok.cursor.checkpoint import staged_splice

    for pending in PENDINGS:
        transcript = _transcript(pb.ConversationStateStructure(agent_type="ide"))
        transcript.append(pending)  # type: ignore[arg-type]
        state, _ = transcript.checkpoint(pending=pending, inline=False)  # type: ignore[arg-type]
        head, tail = staged_splice(state, pending)  # type: ignore[arg-type]
        blob = encode_message(pending)  # type: ignore[arg-type]
        assert head + blob + tail == staged_frame(state, pending)  # type: ignore[arg-type]
